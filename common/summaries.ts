// One-line descriptions of what a conversation is doing, for the Web UI (activity summaries, current details).
import { jsonText } from './json-text';
import { boundedText } from './safe-text';

const MAX_VALUE_CHARS = 60;
/**
 * A tool call's summary stops after this many characters: the model chooses how many arguments there are and how
 * long they are, and a summary is one line in the Web UI, recorded with every tool activity. (Temporal's own limit
 * for summaries, `limit.userMetadataSummarySize`, is 400 bytes; the dev server does not apply it to activities.)
 */
export const MAX_TOOL_CALL_SUMMARY_CHARS = 100;

/** A value's JSON, cut short; written without recursion and no further than needed (the model chose its size). */
function shortValue(value: unknown): string {
  return value === undefined
    ? 'undefined'
    : boundedText(jsonText(value, { maxChars: MAX_VALUE_CHARS }), MAX_VALUE_CHARS);
}

/** `get_ticker_symbol(company_name="General Motors")`, at most MAX_TOOL_CALL_SUMMARY_CHARS long. */
export function toolCallSummary(name: string, input: Record<string, unknown>): string {
  let args = '';
  // A non-object input (the model's mistake) is summarised without arguments.
  const members = typeof input === 'object' && input !== null && !Array.isArray(input) ? input : {};
  for (const key in members) {
    if (!Object.hasOwn(members, key)) continue;
    args += `${args ? ', ' : ''}${boundedText(key, MAX_VALUE_CHARS)}=${shortValue(members[key])}`;
    if (name.length + args.length > MAX_TOOL_CALL_SUMMARY_CHARS) break;
  }
  return boundedText(`${name}(${args})`, MAX_TOOL_CALL_SUMMARY_CHARS);
}

/**
 * `claude-sonnet-4-5 · call 2 · max_tokens 1024`, and the call's thinking and effort when the conversation sets them:
 * `… · thinking enabled 2048 · effort high`.
 */
export function modelCallSummary(
  model: string,
  call: number,
  maxTokens: number,
  reasoning: { thinking?: { type: string; budget_tokens?: number }; effort?: string } = {},
): string {
  const { thinking, effort } = reasoning;
  const budget = thinking?.budget_tokens !== undefined ? ` ${thinking.budget_tokens}` : '';
  return (
    `${model} · call ${call} · max_tokens ${maxTokens}` +
    (thinking ? ` · thinking ${thinking.type}${budget}` : '') +
    (effort ? ` · effort ${effort}` : '')
  );
}

export function firstLine(text: string, max = 120): string {
  const line = text.trim().split('\n')[0] ?? '';
  return boundedText(line, max);
}
