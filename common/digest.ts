// A short, stable digest of JSON-like data (FNV-1a over a canonical encoding). Pure and workflow-safe:
// it binds an approval to the exact arguments of a call; it is not a security boundary.
import { jsonText } from './json-text';

/** JSON with object keys sorted; written without recursion, so a model's deeply nested input cannot stop a task. */
export function canonicalJson(value: unknown): string {
  return jsonText(value, { sortKeys: true });
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
