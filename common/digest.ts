// A short, stable digest of JSON-like data (FNV-1a over a canonical encoding). Pure and workflow-safe:
// it binds an approval to the exact arguments of a call; it is not a security boundary.

/** Nesting no JSON value reaches; only a cyclic value would, and it must fail rather than loop. */
const MAX_NESTING = 100_000;

/**
 * Sorted keys, no whitespace, `undefined` members left out. Iterative: the arguments come from the model, and a
 * value nested 10,000 deep must not overflow the stack of the workflow task that digests it.
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  // Popped from the end: a string is written as it is, a value is rendered (its parts pushed in reverse).
  const pending: Array<string | { value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (pending.length > 0) {
    const next = pending.pop()!;
    if (typeof next === 'string') {
      out.push(next);
      continue;
    }
    const { value: item, depth } = next;
    if (depth > MAX_NESTING) throw new RangeError('canonicalJson: the value is cyclic');
    if (Array.isArray(item)) {
      pending.push(']');
      for (let i = item.length - 1; i >= 0; i--) {
        pending.push({ value: item[i], depth: depth + 1 });
        if (i > 0) pending.push(',');
      }
      pending.push('[');
    } else if (item && typeof item === 'object') {
      const entries = Object.entries(item as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      pending.push('}');
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, member] = entries[i]!;
        pending.push({ value: member, depth: depth + 1 }, `${JSON.stringify(key)}:`);
        if (i > 0) pending.push(',');
      }
      pending.push('{');
    } else out.push(JSON.stringify(item) ?? 'null');
  }
  return out.join('');
}

export function digest(value: unknown): string {
  const text = canonicalJson(value);
  let hash = 0xcbf29ce484222325n;
  for (let i = 0; i < text.length; i++) {
    hash ^= BigInt(text.charCodeAt(i));
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return hash.toString(16).padStart(16, '0');
}
