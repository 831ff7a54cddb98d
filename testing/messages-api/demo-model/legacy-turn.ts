// The legacy XML protocol's turn: the tools described in the system prompt, calls written as `<function_calls>`,
// results read from the latest `<function_results>`, answers in `<answer>` tags.
import { intentOf } from './intent';
import { legacyTools } from './offered-tools';
import { type Outcome, type Plan, planAfterResults, planQuestion } from './plan';
import { firstUserText, lastIndexOfRole, messagesOf, systemText, textOf } from './read-request';
import type { DemoBlock, Json } from './types';

export function isLegacy(body: Json): boolean {
  const hasTools = Array.isArray(body['tools']) && body['tools'].length > 0;
  if (hasTools) return false;
  const system = systemText(body);
  return system.includes('<tools>') || system.includes('<tool_description>');
}

function functionCalls(calls: Array<{ name: string; input: Json }>): string {
  const invokes = calls.map(({ name, input }) => {
    const params = Object.entries(input)
      .map(([key, value]) => `<${key}>${typeof value === 'string' ? value : JSON.stringify(value)}</${key}>\n`)
      .join('');
    return `<invoke>\n<tool_name>${name}</tool_name>\n<parameters>\n${params}</parameters>\n</invoke>\n`;
  });
  return `<function_calls>\n${invokes.join('')}</function_calls>`;
}

/** The invocations the assistant wrote in `text`, in order (to know what a `<function_results>` answers). */
function invocations(text: string): Array<{ name: string; input: Json }> {
  const calls: Array<{ name: string; input: Json }> = [];
  for (const match of text.matchAll(/<invoke>([\s\S]*?)(?:<\/invoke>|$)/g)) {
    const section = match[1] ?? '';
    const name = /<tool_name>\s*([\s\S]*?)\s*<\/tool_name>/.exec(section)?.[1]?.trim();
    if (!name) continue;
    const input: Json = {};
    const params = /<parameters>([\s\S]*?)(?:<\/parameters>|$)/.exec(section)?.[1] ?? '';
    for (const param of params.matchAll(/<([A-Za-z_][\w-]*)>([\s\S]*?)<\/\1>/g)) {
      if (param[1]) input[param[1]] = (param[2] ?? '').trim();
    }
    calls.push({ name, input });
  }
  return calls;
}

export function legacyTurn(body: Json): DemoBlock[] {
  const tools = legacyTools(systemText(body));
  const messages = messagesOf(body);
  const last = messages[messages.length - 1];
  const lastText = textOf(last?.content ?? '');
  const resultsAt = lastText.lastIndexOf('<function_results>');

  let plan: Plan;
  if (resultsAt >= 0) {
    const results = lastText.slice(resultsAt);
    // What did these results answer? The invocations written just before them (same prefilled turn, or the
    // previous assistant message).
    const before = lastText.slice(0, resultsAt);
    let calls = invocations(before);
    if (calls.length === 0) {
      const assistant = messages[lastIndexOfRole(messages.slice(0, -1), 'assistant')];
      calls = invocations(textOf(assistant?.content ?? ''));
    }
    const outcomes: Outcome[] = [];
    let errorIndex = 0;
    for (const match of results.matchAll(/<result>([\s\S]*?)<\/result>|<error>([\s\S]*?)<\/error>/g)) {
      if (match[1] !== undefined) {
        const name = /<tool_name>\s*([\s\S]*?)\s*<\/tool_name>/.exec(match[1])?.[1]?.trim() ?? 'tool';
        const stdout = /<stdout>([\s\S]*?)<\/stdout>/.exec(match[1])?.[1] ?? match[1];
        const call = calls.find((c) => c.name === name);
        outcomes.push({ name, input: call?.input ?? {}, text: stdout.trim(), isError: false });
      } else {
        const call = calls[errorIndex++];
        outcomes.push({
          name: call?.name ?? 'tool',
          input: call?.input ?? {},
          text: (match[2] ?? '').trim(),
          isError: true,
        });
      }
    }
    const transcript = messages.map((m) => textOf(m.content)).join('\n');
    const named = [...transcript.matchAll(/<company_name>([\s\S]*?)<\/company_name>/g)].pop()?.[1]?.trim();
    const intent = intentOf(firstUserText(body));
    plan = planAfterResults(outcomes, tools, named ?? (intent.kind === 'stock' ? intent.company : undefined), false);
  } else {
    const question = textOf(messages[lastIndexOfRole(messages, 'user')]?.content ?? '');
    plan = planQuestion(question, tools);
    if (plan.kind === 'answer' && plan.text.startsWith('You said:')) return [{ type: 'text', text: plan.text }];
  }
  if (plan.kind === 'call') return [{ type: 'text', text: functionCalls([plan, ...(plan.more ?? [])]) }];
  return [{ type: 'text', text: `<answer>${plan.text}</answer>` }];
}
