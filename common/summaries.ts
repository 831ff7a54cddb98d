// One-line descriptions of what a conversation is doing, for the Web UI (activity summaries, current details).

import { jsonExtentProblem } from './json-extent';
import { boundedText } from './safe-text';

const MAX_VALUE_CHARS = 60;
/** A whole summary: the model chooses how many arguments a call has and how long their names are. */
const MAX_SUMMARY_CHARS = 1_000;
/** An argument is shown only while serialising it is cheap and shallow (it comes from the model). */
const SHOWN_VALUE_LIMITS = { maxDepth: 16, maxNodes: 1_000 };

function shortValue(value: unknown): string {
  if (jsonExtentProblem(value, SHOWN_VALUE_LIMITS)) return Array.isArray(value) ? '[…]' : '{…}';
  const text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? 'undefined');
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS - 1)}…` : text;
}

/** `get_ticker_symbol(company_name="General Motors")` */
export function toolCallSummary(name: string, input: Record<string, unknown>): string {
  const args: string[] = [];
  let length = name.length;
  // A non-object input (the model's mistake) is summarised without arguments rather than thrown on.
  for (const [key, value] of typeof input === 'object' && input !== null ? Object.entries(input) : []) {
    if (length > MAX_SUMMARY_CHARS) break;
    const arg = `${key.length > MAX_VALUE_CHARS ? `${key.slice(0, MAX_VALUE_CHARS - 1)}…` : key}=${shortValue(value)}`;
    args.push(arg);
    length += arg.length + 2;
  }
  return boundedText(`${name}(${args.join(', ')})`, MAX_SUMMARY_CHARS);
}

/** `claude-sonnet-4-5 · call 2 · max_tokens 1024` */
export function modelCallSummary(model: string, call: number, maxTokens: number): string {
  return `${model} · call ${call} · max_tokens ${maxTokens}`;
}

export function firstLine(text: string, max = 120): string {
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
