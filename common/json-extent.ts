// How deep and how big a JSON value is, measured without recursion: a caller's schema or a model's answer nested
// 10,000 deep must be refused by a check, not by the stack overflowing in whatever walks it next.

export interface JsonExtentLimits {
  /** Nesting of objects and arrays; a scalar alone is depth 0, `{}` and `[]` are depth 1. */
  maxDepth: number;
  /** Values counted, scalars and containers alike. */
  maxNodes: number;
}

/** The first limit `value` exceeds, in words, or undefined. Stops at the first excess, so its cost is bounded too. */
export function jsonExtentProblem(value: unknown, limits: JsonExtentLimits): string | undefined {
  const pending: Array<[unknown, number]> = [[value, 0]];
  let nodes = 0;
  while (pending.length > 0) {
    const [item, depth] = pending.pop()!;
    if (++nodes > limits.maxNodes) return `it has more than ${limits.maxNodes} values`;
    if (item === null || typeof item !== 'object') continue;
    if (depth + 1 > limits.maxDepth) return `it nests deeper than ${limits.maxDepth} levels`;
    const children = Array.isArray(item) ? item : Object.values(item);
    if (nodes + pending.length + children.length > limits.maxNodes) return `it has more than ${limits.maxNodes} values`;
    for (const child of children) pending.push([child, depth + 1]);
  }
  return undefined;
}
