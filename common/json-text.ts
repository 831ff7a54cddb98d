// JSON text of data a model or a caller wrote, without recursion: a value nested 10,000 deep must not exhaust the
// stack of a workflow task (JSON.stringify and a recursive walk both do, at a few thousand levels). Pure and
// workflow-safe; linear in the size of the value, and it stops early once `maxChars` are written.

export interface JsonTextOptions {
  /** Object keys in code-unit order (a canonical form), instead of their insertion order. */
  sortKeys?: boolean;
  /** Stop once the text is longer than this (the caller cuts it); the whole text when absent. */
  maxChars?: number;
}

/** A value still to write, or text to write as it is. */
type Work = { value: unknown } | string;

/**
 * The value as JSON.stringify writes JSON data (objects, arrays, strings, numbers, booleans, null). Object members
 * whose value is undefined are left out; anything else JSON has no form for is `null`.
 */
export function jsonText(value: unknown, { sortKeys = false, maxChars = Infinity }: JsonTextOptions = {}): string {
  let out = '';
  const stack: Work[] = [{ value }];
  while (stack.length > 0 && out.length <= maxChars) {
    const work = stack.pop()!;
    if (typeof work === 'string') {
      out += work;
      continue;
    }
    const current = work.value;
    if (Array.isArray(current)) {
      const parts: Work[] = ['['];
      current.forEach((item: unknown, i) => parts.push(...(i > 0 ? [','] : []), { value: item }));
      parts.push(']');
      for (let i = parts.length - 1; i >= 0; i--) stack.push(parts[i]!);
    } else if (current !== null && typeof current === 'object') {
      const entries = Object.entries(current as Record<string, unknown>).filter(([, v]) => v !== undefined);
      if (sortKeys) entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      const parts: Work[] = ['{'];
      entries.forEach(([key, item], i) => parts.push(`${i > 0 ? ',' : ''}${JSON.stringify(key)}:`, { value: item }));
      parts.push('}');
      for (let i = parts.length - 1; i >= 0; i--) stack.push(parts[i]!);
    } else {
      out += (typeof current === 'bigint' ? undefined : JSON.stringify(current)) ?? 'null';
    }
  }
  return out;
}
