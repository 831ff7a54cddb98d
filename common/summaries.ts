// One-line descriptions of what a conversation is doing, for the Web UI (activity summaries, current details).

const MAX_VALUE_CHARS = 60;

function shortValue(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? 'undefined');
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS - 1)}…` : text;
}

/** `get_ticker_symbol(company_name="General Motors")` */
export function toolCallSummary(name: string, input: Record<string, unknown>): string {
  const args = Object.entries(input).map(([key, value]) => `${key}=${shortValue(value)}`);
  return `${name}(${args.join(', ')})`;
}

/** `claude-sonnet-4-5 · call 2 · max_tokens 1024` */
export function modelCallSummary(model: string, call: number, maxTokens: number): string {
  return `${model} · call ${call} · max_tokens ${maxTokens}`;
}

export function firstLine(text: string, max = 120): string {
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
