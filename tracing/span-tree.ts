// A trace as an indented tree (name, duration, chosen attributes), children in start order: what `npm run trace-demo`
// prints from the receiver's API and what the tracing tests show when an assertion fails.

export interface SpanNode {
  spanId: string;
  parentSpanId?: string | undefined;
  name: string;
  startMs: number;
  durationMs: number;
  attributes: Record<string, unknown>;
}

/** Attributes worth a glance on one line; the rest stay in the receiver. */
export const KEY_ATTRIBUTES = [
  'gen_ai.request.model',
  'gen_ai.usage.input_tokens',
  'gen_ai.usage.output_tokens',
  'gen_ai.response.finish_reasons',
  'gen_ai.tool.name',
  'gen_ai.tool.call.id',
  'temporal.activity.attempt',
  'error.type',
];

export function formatSpanTree(spans: readonly SpanNode[], keys: readonly string[] = KEY_ATTRIBUTES): string {
  const ids = new Set(spans.map((span) => span.spanId));
  const children = new Map<string | undefined, SpanNode[]>();
  for (const span of spans) {
    // A span whose parent is not in the list (another process's, not exported) is shown as a root.
    const parent = span.parentSpanId && ids.has(span.parentSpanId) ? span.parentSpanId : undefined;
    children.set(parent, [...(children.get(parent) ?? []), span]);
  }
  const lines: string[] = [];
  const walk = (parent: string | undefined, depth: number): void => {
    const list = [...(children.get(parent) ?? [])].sort((a, b) => a.startMs - b.startMs);
    for (const span of list) {
      const shown = keys
        .filter((key) => span.attributes[key] !== undefined)
        .map((key) => `${key.replace(/^gen_ai\./, '')}=${JSON.stringify(span.attributes[key])}`);
      lines.push(
        `${'  '.repeat(depth)}${span.name}  ${span.durationMs.toFixed(1)} ms${shown.length ? `  ${shown.join(' ')}` : ''}`,
      );
      walk(span.spanId, depth + 1);
    }
  };
  walk(undefined, 0);
  return lines.join('\n');
}
