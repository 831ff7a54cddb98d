// Thinking, as the local Messages API emulates it. A request with `thinking: {type: 'adaptive' | 'enabled'}` gets a
// reply that opens with a `thinking` block (scripted, or written here), signed by this server; thinking blocks sent
// back are checked against the signature the server issued, and the combinations the API refuses are answered with
// its own 400 `invalid_request_error` messages (from its error reports):
//
//   thinking.enabled.budget_tokens: Input should be greater than or equal to 1024
//   `max_tokens` must be greater than `thinking.budget_tokens`. …
//   Thinking may not be enabled when tool_choice forces tool use.
//   messages.N.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`. When `thinking` is
//     enabled, a final `assistant` message must start with a thinking block …
//   messages.N.content.M: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be
//     modified. These blocks must remain as they were in the original response.
//   messages.N.content.M: Invalid `signature` in `thinking` block
//
// A signature is an HMAC of the thinking text under a key of this server; a redacted block's `data` carries its text
// and the HMAC. So a block that comes back changed, or from another server, is refused as the API would.
import { createHmac, randomBytes } from 'node:crypto';

type Json = Record<string, unknown>;

const THINKING_TYPES = ['enabled', 'disabled', 'adaptive', 'between_tools'] as const;
export const MIN_BUDGET_TOKENS = 1024;
const DOCS = 'https://docs.claude.com/en/docs/build-with-claude/extended-thinking';

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether the request turns thinking on (`adaptive`, `enabled`): its reply opens with a thinking block. */
export function thinkingOn(body: Json): boolean {
  const thinking = body['thinking'];
  return isObject(thinking) && (thinking['type'] === 'adaptive' || thinking['type'] === 'enabled');
}

/** `display: 'omitted'`: thinking blocks carry their signature and no text. */
export function thinkingOmitted(body: Json): boolean {
  const thinking = body['thinking'];
  return isObject(thinking) && thinking['display'] === 'omitted';
}

/** The thinking budget of an `enabled` request, if any. */
export function thinkingBudget(body: Json): number | undefined {
  const thinking = body['thinking'];
  return isObject(thinking) && thinking['type'] === 'enabled' && typeof thinking['budget_tokens'] === 'number'
    ? thinking['budget_tokens']
    : undefined;
}

export class ThinkingSigner {
  private readonly key = randomBytes(32);

  sign(thinking: string): string {
    // Long and opaque like the API's: the HMAC, then padding derived from it.
    const mac = createHmac('sha256', this.key).update(thinking, 'utf8').digest();
    return `EqQB${Buffer.concat([mac, createHmac('sha256', this.key).update(mac).digest()]).toString('base64')}`;
  }

  redact(thinking: string): string {
    const payload = Buffer.from(JSON.stringify({ t: thinking, s: this.sign(thinking) }), 'utf8').toString('base64');
    return `EmwK${payload}`;
  }

  /** Whether a thinking block (or a redacted one) is exactly as this server issued it. */
  verify(block: Json): boolean {
    if (block['type'] === 'thinking') {
      return (
        typeof block['thinking'] === 'string' &&
        typeof block['signature'] === 'string' &&
        block['signature'] === this.sign(block['thinking'])
      );
    }
    const data = block['data'];
    if (typeof data !== 'string' || !data.startsWith('EmwK')) return false;
    try {
      const { t, s } = JSON.parse(Buffer.from(data.slice(4), 'base64').toString('utf8')) as {
        t?: unknown;
        s?: unknown;
      };
      return typeof t === 'string' && s === this.sign(t);
    } catch {
      return false;
    }
  }
}

/**
 * The request's thinking as the API checks it before any model runs; a message for the 400, or undefined. A
 * `display: omitted` block comes back with an empty text: its signature is checked against the text it stood for, so
 * the server remembers nothing — it signs the empty text too.
 */
export function checkThinking(body: Json, signer: ThinkingSigner, countTokens: boolean): string | undefined {
  const thinking = body['thinking'];
  if (thinking !== undefined && thinking !== null) {
    if (!isObject(thinking)) return 'thinking: Input should be a valid dictionary';
    const type = thinking['type'];
    if (typeof type !== 'string' || !(THINKING_TYPES as readonly string[]).includes(type)) {
      return (
        `thinking: Input tag ${typeof type === 'string' ? `'${type}'` : JSON.stringify(type)} found using 'type' ` +
        `does not match any of the expected tags: ${THINKING_TYPES.map((t) => `'${t}'`).join(', ')}`
      );
    }
    if (type === 'enabled') {
      const budget = thinking['budget_tokens'];
      if (budget === undefined) return 'thinking.enabled.budget_tokens: Field required';
      if (typeof budget !== 'number' || !Number.isInteger(budget))
        return 'thinking.enabled.budget_tokens: Input should be a valid integer';
      if (budget < MIN_BUDGET_TOKENS)
        return `thinking.enabled.budget_tokens: Input should be greater than or equal to ${MIN_BUDGET_TOKENS}`;
      const maxTokens = body['max_tokens'];
      if (!countTokens && typeof maxTokens === 'number' && maxTokens <= budget) {
        return (
          '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at ' +
          `${DOCS}#max-tokens-and-context-window-size`
        );
      }
    }
    const display = thinking['display'];
    if (display !== undefined && display !== null && display !== 'summarized' && display !== 'omitted') {
      return `thinking.${type}.display: Input should be 'summarized' or 'omitted'`;
    }
  }
  const on = thinkingOn(body);
  const choice = body['tool_choice'];
  if (on && isObject(choice) && (choice['type'] === 'any' || choice['type'] === 'tool')) {
    return 'Thinking may not be enabled when tool_choice forces tool use.';
  }
  const messages = Array.isArray(body['messages']) ? (body['messages'] as unknown[]) : [];
  const lastAssistant = messages.reduce<number>(
    (last, message, i) => (isObject(message) && message['role'] === 'assistant' ? i : last),
    -1,
  );
  // Every thinking block sent back must be one this server issued, unchanged.
  for (const [i, message] of messages.entries()) {
    if (!isObject(message) || message['role'] !== 'assistant' || !Array.isArray(message['content'])) continue;
    for (const [j, block] of (message['content'] as unknown[]).entries()) {
      if (!isObject(block) || (block['type'] !== 'thinking' && block['type'] !== 'redacted_thinking')) continue;
      if (signer.verify(block)) continue;
      return i === lastAssistant
        ? `messages.${i}.content.${j}: \`thinking\` or \`redacted_thinking\` blocks in the latest assistant message ` +
            'cannot be modified. These blocks must remain as they were in the original response.'
        : `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
    }
  }
  // With thinking on, the assistant message of the tool loop in progress must open with its thinking.
  if (on && lastAssistant >= 0 && lastAssistant === messages.length - 2) {
    const content = (messages[lastAssistant] as Json)['content'];
    const blocks = Array.isArray(content) ? (content as Json[]) : [{ type: 'text' }];
    const usesTools = blocks.some((block) => isObject(block) && block['type'] === 'tool_use');
    const first = blocks[0];
    const firstType = isObject(first) && typeof first['type'] === 'string' ? first['type'] : 'text';
    if (usesTools && firstType !== 'thinking' && firstType !== 'redacted_thinking') {
      return (
        `messages.${lastAssistant}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found ` +
        `\`${firstType}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking ` +
        'block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include ' +
        'thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our ' +
        `documentation at ${DOCS}`
      );
    }
  }
  return undefined;
}

/** What the model thinks before it answers `body`, when nothing was scripted: a line about the newest message. */
export function demoThinking(body: Json): string {
  const messages = Array.isArray(body['messages']) ? (body['messages'] as Json[]) : [];
  const last = messages.at(-1);
  const content = last?.['content'];
  const results = Array.isArray(content) && content.some((b) => isObject(b) && b['type'] === 'tool_result');
  return results
    ? `The tool answered. Let me read its result and decide whether I need another tool or can answer now.`
    : `The user is asking a question. Let me work out which tools I need and in what order before I answer.`;
}
