// Raw parameter text → values of the types the tool's JSON Schema declares. Only the conversion happens here; the
// validator on the worker (zod) still checks the result against the whole schema.
import type { ToolDescription } from '../types';
import { excerpt } from './parse';

export type JsonType = 'null' | 'boolean' | 'integer' | 'number' | 'array' | 'object' | 'string';

/** The order in which a union's types are tried; `string` always succeeds, so it comes last. */
const ORDER: readonly JsonType[] = ['null', 'boolean', 'integer', 'number', 'array', 'object', 'string'];
const KNOWN = new Set<string>(ORDER);

const INTEGER = /^[+-]?\d+$/;
const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

export type CoerceResult = { ok: true; value: Record<string, unknown> } | { ok: false; error: string };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function own(obj: Record<string, unknown>, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : undefined;
}

function typeOfLiteral(v: unknown): JsonType | null {
  if (v === null) return 'null';
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  if (typeof v === 'string') return 'string';
  if (Array.isArray(v)) return 'array';
  if (isRecord(v)) return 'object';
  return null;
}

/** The JSON types a (sub)schema admits: `type` (string or list), `enum`/`const`, `anyOf`/`oneOf`/`allOf`. */
export function schemaTypes(schema: unknown, depth = 0): Set<JsonType> {
  const types = new Set<JsonType>();
  if (!isRecord(schema) || depth > 16) return types;
  const type = own(schema, 'type');
  for (const t of Array.isArray(type) ? type : [type])
    if (typeof t === 'string' && KNOWN.has(t)) types.add(t as JsonType);
  if (types.size === 0) {
    const literals = own(schema, 'enum');
    const values = Array.isArray(literals)
      ? literals
      : own(schema, 'const') !== undefined
        ? [own(schema, 'const')]
        : [];
    for (const v of values) {
      const t = typeOfLiteral(v);
      if (t) types.add(t);
    }
  }
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    const branches = own(schema, key);
    if (Array.isArray(branches)) for (const b of branches) for (const t of schemaTypes(b, depth + 1)) types.add(t);
  }
  if (types.size === 0 && own(schema, 'properties') !== undefined) types.add('object');
  if (types.size === 0 && own(schema, 'items') !== undefined) types.add('array');
  return types;
}

const WANT: Record<JsonType, string> = {
  null: 'null',
  boolean: 'true or false',
  integer: 'an integer',
  number: 'a number',
  array: 'a JSON array',
  object: 'a JSON object',
  string: 'a string',
};

type Attempt = { ok: true; value: unknown } | { ok: false; hint?: string };

function attempt(type: JsonType, raw: string, allowsString: boolean): Attempt {
  const s = raw.trim();
  switch (type) {
    case 'string':
      return { ok: true, value: raw };
    case 'null':
      return s === 'null' || (s === '' && !allowsString) ? { ok: true, value: null } : { ok: false };
    case 'boolean': {
      const lower = s.toLowerCase();
      if (lower === 'true') return { ok: true, value: true };
      if (lower === 'false') return { ok: true, value: false };
      return { ok: false };
    }
    case 'integer': {
      if (INTEGER.test(s)) {
        const v = Number(s);
        return Number.isSafeInteger(v) ? { ok: true, value: v === 0 ? 0 : v } : { ok: false, hint: 'too large' };
      }
      return NUMBER.test(s) ? { ok: false, hint: 'no fraction or exponent' } : { ok: false };
    }
    case 'number': {
      const v = NUMBER.test(s) ? Number(s) : Number.NaN;
      return Number.isFinite(v) ? { ok: true, value: v === 0 ? 0 : v } : { ok: false };
    }
    case 'array':
    case 'object': {
      if (!s.startsWith(type === 'array' ? '[' : '{')) return { ok: false };
      let v: unknown;
      try {
        v = JSON.parse(s);
      } catch {
        // V8's message is not repeated: it may change between Node versions, and this text can reach workflow state.
        return { ok: false, hint: 'not valid JSON' };
      }
      return (type === 'array' ? Array.isArray(v) : isRecord(v)) ? { ok: true, value: v } : { ok: false };
    }
  }
}

/** Coerces one raw value; a schema with no usable type (or no schema) keeps the string. */
export function coerceValue(
  name: string,
  raw: string,
  schema: unknown,
): { ok: true; value: unknown } | { ok: false; error: string } {
  const types = schemaTypes(schema);
  if (types.size === 0) return { ok: true, value: raw };
  const hints: string[] = [];
  for (const t of ORDER) {
    if (!types.has(t)) continue;
    const r = attempt(t, raw, types.has('string'));
    if (r.ok) return r;
    if (r.hint) hints.push(r.hint);
  }
  const wanted = ORDER.filter((t) => types.has(t))
    .map((t) => WANT[t])
    .join(' or ');
  const hint = hints.length > 0 ? ` (${hints.join(', ')})` : '';
  return { ok: false, error: `parameter "${name}" must be ${wanted}, got ${excerpt(raw)}${hint}` };
}

/**
 * Converts each raw parameter by its declared JSON Schema type:
 * - `string`: the text as written (the parser already removed one surrounding newline);
 * - `integer`: optional sign and digits only (`42`, `-7`; not `4.0`, `1e3`, `0x10`), a safe integer;
 * - `number`: decimal notation with optional exponent (`3`, `-0.5`, `1e-3`); no `NaN`, `Infinity`, hex;
 * - `boolean`: `true` / `false`, any case, surrounding whitespace ignored. `1`/`0`/`yes`/`no` are refused: they
 *   would be guesses, and in a union with `integer` they would be ambiguous; the error says what to write;
 * - `array` / `object`: JSON of that shape;
 * - `null`: the word `null`, or an empty value when the schema does not also allow a string.
 * A union (`type: [...]`, `anyOf`, `oneOf`, `enum` literals) tries null, boolean, integer, number, array, object,
 * string in that order and takes the first that fits. Parameters the schema does not declare, and declared ones
 * without a usable type, pass through as strings. All problems are reported together, `; `-separated.
 */
export function coerceParameters(raw: Record<string, string>, schema: ToolDescription['input_schema']): CoerceResult {
  const properties =
    isRecord(schema) && isRecord(own(schema, 'properties'))
      ? (own(schema, 'properties') as Record<string, unknown>)
      : {};
  const entries: [string, unknown][] = [];
  const errors: string[] = [];
  for (const [name, value] of Object.entries(raw)) {
    const r = coerceValue(name, value, own(properties, name));
    if (r.ok) entries.push([name, r.value]);
    else errors.push(r.error);
  }
  return errors.length > 0 ? { ok: false, error: errors.join('; ') } : { ok: true, value: Object.fromEntries(entries) };
}
