// The local model's summaries: what it writes into a `compaction` block, and what it answers a request to summarise
// the conversation (the orchestrator's own compaction). A real model summarises; this one writes a deterministic
// digest — the conversation's original request, verbatim between <original-request> tags (so a summary still tells which
// conversation it is: scripts match on it, the demo model reads the question from it), how many messages and tool
// calls it stands for, and the latest call and result.

type Json = Record<string, unknown>;

/** A message as the request holds it (already validated). */
type Message = Json;

const REQUEST = /<original-request>([\s\S]*?)<\/original-request>/;
/** The start of a request to summarise, as the orchestrator words it by default. */
const SUMMARY_REQUEST = /^\s*Summari[sz]e the conversation above/i;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function blocks(message: Message | undefined): Json[] {
  return message && Array.isArray(message['content']) ? message['content'].filter(isObject) : [];
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((b): b is Json => isObject(b) && b['type'] === 'text' && typeof b['text'] === 'string')
    .map((b) => b['text'] as string)
    .join('\n');
}

function short(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** How much of the original request a summary keeps (its start and its end, where tests put their tags). */
const REQUEST_CHARS = 2_000;

function headAndTail(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor((max - 1) / 2);
  return `${text.slice(0, half)}…${text.slice(text.length - half)}`;
}

/** The original request a summary carries, if it is one of this model's summaries. */
export function requestInSummary(text: string): string | undefined {
  return REQUEST.exec(text)?.[1];
}

/** The digest of `messages`, a conversation that started with `request`. */
export function digest(messages: readonly Message[], request: string, instructions?: string): string {
  const calls = new Map<string, number>();
  let latest = '';
  let latestResult = '';
  for (const message of messages) {
    for (const block of blocks(message)) {
      if (block['type'] === 'tool_use') {
        const name = String(block['name']);
        calls.set(name, (calls.get(name) ?? 0) + 1);
        latest = `${name}(${short(JSON.stringify(block['input'] ?? {}), 80)})`;
      }
      if (block['type'] === 'tool_result') latestResult = short(textOf(block['content']), 160);
    }
    // Legacy tool use: the calls and results are text.
    const text = textOf(message['content']);
    for (const match of text.matchAll(/<invoke>([\s\S]*?)(?:<\/invoke>|$)/g)) {
      const name = /<tool_name>\s*([\w-]+)\s*<\/tool_name>/.exec(match[1]!)?.[1];
      if (message['role'] !== 'assistant' || !name) continue;
      calls.set(name, (calls.get(name) ?? 0) + 1);
      const parameters = /<parameters>([\s\S]*?)(?:<\/parameters>|$)/.exec(match[1]!)?.[1] ?? '';
      latest = `${name}(${short(parameters, 120)})`;
    }
    const stdout = [...text.matchAll(/<stdout>([\s\S]*?)<\/stdout>/g)].pop()?.[1];
    if (stdout !== undefined) latestResult = short(stdout, 160);
  }
  const total = [...calls.values()].reduce((a, b) => a + b, 0);
  const byTool = [...calls].map(([name, n]) => `${name} ×${n}`).join(', ');
  const lines = [
    `<original-request>${headAndTail(request, REQUEST_CHARS)}</original-request>`,
    `Summary of ${messages.length} earlier messages: ${total} tool calls${byTool ? ` (${byTool})` : ''}.`,
  ];
  if (latest) lines.push(`Latest call: ${latest}${latestResult ? ` → ${latestResult}` : ''}.`);
  if (instructions) lines.push(`Summarised as instructed: ${short(instructions, 120)}`);
  return lines.join('\n');
}

/** Whether the request asks for a summary of the conversation (its last user text starts the orchestrator's way). */
export function isSummaryRequest(messages: readonly Message[]): boolean {
  const last = messages.at(-1);
  if (last?.['role'] !== 'user') return false;
  const content = last['content'];
  const text =
    typeof content === 'string'
      ? content
      : (blocks(last)
          .filter((b) => b['type'] === 'text')
          .map((b) => String(b['text']))
          .at(-1) ?? '');
  return SUMMARY_REQUEST.test(text);
}
