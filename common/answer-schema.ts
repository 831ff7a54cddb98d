// A typed answer's JSON Schema as a zod schema, built so that checking an answer costs bounded work: in the worker's
// local activity, and in workflow code where a history from before it replays (and where the options are checked).
// It reads the JSON Schema keywords z.fromJSONSchema reads, into the same zod checks (so the same messages), except:
//   - every regular expression — `pattern`, `patternProperties` keys, the formats — runs on RE2 (linear-time), and
//     a pattern RE2 cannot run is refused when the schema is checked, not met while an answer is;
//   - every node spends from a budget (`Meter`) each time the answer visits it, so unions and intersections nested
//     in each other, which can make a validator visit a value exponentially often, stop at the budget;
//   - nesting is bounded (counting $ref hops), and a $ref cycle must step into the answer (through `properties`,
//     `items`, …) before it comes round, so no schema makes the parse recurse without consuming the answer;
//   - nothing goes to a global registry (z.fromJSONSchema keeps an `id` it meets there, for the isolate's lifetime).
// The converter itself recurses, but only as deep as MAX_SCHEMA_NESTING allows.
import { z } from 'zod';
import { canonicalJson } from './digest';
import { boundedText } from './safe-text';
import { compilePattern, type LinearRegex, type Meter } from './linear-regex';

/** Schema nesting the converter follows, $ref hops included. */
export const MAX_SCHEMA_NESTING = 48;
/** Schemas nested in each other (anyOf, allOf, $ref, …) without stepping into the answer: each adds a parse frame. */
export const MAX_STEPS_WITHOUT_DESCENT = 12;

/** Regular expressions (patterns and formats) in one schema: each costs a compile whenever the schema is built. */
export const MAX_SCHEMA_REGEXES = 100;
/** RE2 instructions of all of a schema's regular expressions: compiling costs about 2 µs an instruction. */
export const MAX_SCHEMA_PROGRAM = 20_000;

/** A schema that cannot be used, with where in it (a path of keywords) and why. */
class SchemaRefusal extends Error {}

type JsonSchema = Record<string, unknown>;
type Version = 'draft-2020-12' | 'draft-7' | 'draft-4';

interface Context {
  readonly root: JsonSchema;
  readonly defs: Record<string, unknown>;
  readonly version: Version;
  readonly meter: Meter;
  /** Converted $refs, and those being converted with the count of descents when they started. */
  readonly refs: Map<string, z.ZodType>;
  readonly processing: Map<string, number>;
  nesting: number;
  descents: number;
  /** Regular expressions compiled so far, and their RE2 instructions. */
  regexes: number;
  program: number;
  sinceDescent: number;
}

export type AnswerSchema = { ok: true; schema: z.ZodType } | { ok: false; error: string };

/**
 * The zod schema that checks answers against `json`, charging `meter` as it runs, or why `json` cannot be used.
 * Pure: the same schema gives the same verdicts; cost proportional to the schema's size.
 */
export function answerSchema(json: JsonSchema, meter: Meter = () => {}): AnswerSchema {
  const version = detectVersion(json['$schema']);
  const defs = json[version === 'draft-2020-12' ? '$defs' : 'definitions'] ?? json['$defs'] ?? json['definitions'];
  const ctx: Context = {
    root: json,
    defs: isObject(defs) ? defs : {},
    version,
    meter,
    refs: new Map(),
    processing: new Map(),
    nesting: 0,
    descents: 0,
    regexes: 0,
    program: 0,
    sinceDescent: 0,
  };
  try {
    return { ok: true, schema: convert(json, ctx, [], 'descend') };
  } catch (error) {
    if (error instanceof SchemaRefusal) return { ok: false, error: error.message };
    // zod refused a value while building (a literal it cannot hold, …): still the schema's fault.
    return { ok: false, error: `it cannot be read (${error instanceof Error ? error.name : 'an error'})` };
  }
}

// ── paths and refusals ────────────────────────────────────────────────────────────────────────────────

type Path = readonly string[];

function refuse(at: Path, why: string): never {
  throw new SchemaRefusal(at.length > 0 ? `at ${describePath(at)}: ${why}` : why);
}

/** A schema path as the caller can find it; property names are caller input, so each is shortened and repaired. */
export function describePath(at: Path): string {
  const shown = at.length > 8 ? [...at.slice(0, 3), '…', ...at.slice(-4)] : at;
  return shown.map((segment) => boundedText(segment, 40)).join('.');
}

function isObject(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function detectVersion($schema: unknown): Version {
  if ($schema === 'http://json-schema.org/draft-07/schema#') return 'draft-7';
  if ($schema === 'http://json-schema.org/draft-04/schema#') return 'draft-4';
  return 'draft-2020-12';
}

// ── the walk ──────────────────────────────────────────────────────────────────────────────────────────

/** `descend`: the schema applies to a part of the value (a property, an item); `same`: to the value itself. */
function convert(schema: unknown, ctx: Context, at: Path, step: 'descend' | 'same'): z.ZodType {
  const sinceDescent = ctx.sinceDescent;
  ctx.nesting++;
  if (step === 'descend') {
    ctx.descents++;
    ctx.sinceDescent = 0;
  } else ctx.sinceDescent++;
  try {
    if (ctx.nesting > MAX_SCHEMA_NESTING) {
      refuse(at, `the schema nests deeper than ${MAX_SCHEMA_NESTING} levels (counting $ref)`);
    }
    if (ctx.sinceDescent > MAX_STEPS_WITHOUT_DESCENT) {
      refuse(
        at,
        `more than ${MAX_STEPS_WITHOUT_DESCENT} schemas (anyOf, allOf, $ref, …) apply to one value in a chain`,
      );
    }
    return convertSchema(schema, ctx, at);
  } finally {
    ctx.nesting--;
    ctx.sinceDescent = sinceDescent;
    if (step === 'descend') ctx.descents--;
  }
}

function convertSchema(schema: unknown, ctx: Context, at: Path): z.ZodType {
  if (typeof schema === 'boolean') return schema ? z.any() : z.never();
  if (!isObject(schema)) refuse(at, 'a schema is an object or a boolean');
  let result = convertBase(schema, ctx, at);
  const hasExplicitType = schema['type'] !== undefined || schema['enum'] !== undefined || schema['const'] !== undefined;
  const anyOf = schemaList(schema, 'anyOf', ctx, at);
  if (anyOf) {
    const union = z.union(anyOf);
    result = hasExplicitType ? z.intersection(result, union) : union;
  }
  const oneOf = schemaList(schema, 'oneOf', ctx, at);
  if (oneOf) {
    const xor = z.xor(oneOf);
    result = hasExplicitType ? z.intersection(result, xor) : xor;
  }
  const allOf = schemaList(schema, 'allOf', ctx, at);
  if (allOf) {
    if (allOf.length === 0) result = hasExplicitType ? result : z.any();
    else {
      let all = hasExplicitType ? result : allOf[0]!;
      for (const part of hasExplicitType ? allOf : allOf.slice(1)) all = z.intersection(all, part);
      result = all;
    }
  }
  result = metered(result, ctx.meter);
  if (schema['readOnly'] === true) result = z.readonly(result);
  if (schema['default'] !== undefined) result = (result as z.ZodAny).default(schema['default']);
  return result;
}

/**
 * `schema` behind a gate that spends from the budget on every visit, before the node's own work (a failing visit
 * counts too): a string costs its length as well, which its checks scan. The gate is a transform, which zod deems
 * optional on input; it reports `schema`'s own optionality instead, so tuples and objects read it as before.
 */
function metered(schema: z.ZodType, meter: Meter): z.ZodType {
  const gate = z.transform((value: unknown) => {
    meter(typeof value === 'string' ? 1 + value.length : 1);
    return value;
  });
  Object.defineProperty(gate._zod, 'optin', { get: () => schema._zod.optin });
  return gate.pipe(schema);
}

function schemaList(schema: JsonSchema, keyword: string, ctx: Context, at: Path): z.ZodType[] | undefined {
  const list = schema[keyword];
  if (list === undefined) return undefined;
  if (!Array.isArray(list)) refuse([...at, keyword], 'must be an array of schemas');
  return list.map((item, index) => convert(item, ctx, [...at, keyword, String(index)], 'same'));
}

/** Keywords z.fromJSONSchema refuses too. */
function unsupportedKeyword(schema: JsonSchema): string | undefined {
  if (schema['not'] !== undefined && !(isObject(schema['not']) && Object.keys(schema['not']).length === 0)) {
    return 'not is not supported (except { not: {} } for never)';
  }
  if (schema['unevaluatedItems'] !== undefined) return 'unevaluatedItems is not supported';
  if (schema['unevaluatedProperties'] !== undefined) return 'unevaluatedProperties is not supported';
  if (schema['if'] !== undefined || schema['then'] !== undefined || schema['else'] !== undefined) {
    return 'conditional schemas (if/then/else) are not supported';
  }
  if (schema['dependentSchemas'] !== undefined || schema['dependentRequired'] !== undefined) {
    return 'dependentSchemas and dependentRequired are not supported';
  }
  return undefined;
}

function convertBase(schema: JsonSchema, ctx: Context, at: Path): z.ZodType {
  const unsupported = unsupportedKeyword(schema);
  if (unsupported) refuse(at, unsupported);
  if (schema['not'] !== undefined) return z.never();
  if (schema['$ref'] !== undefined) return convertRef(schema['$ref'], ctx, at);
  if (schema['enum'] !== undefined) return convertEnum(schema['enum'], at);
  if (schema['const'] !== undefined) return z.literal(schema['const'] as z.core.util.Literal);
  const type = schema['type'];
  if (Array.isArray(type)) {
    const types = [...new Set(type)];
    if (types.length === 0) return z.never();
    const options = types.map((t) => convertTyped(schema, t, ctx, at));
    return options.length === 1 ? options[0]! : z.union(options);
  }
  if (type === undefined) return z.any();
  return convertTyped(schema, type, ctx, at);
}

function convertRef(ref: unknown, ctx: Context, at: Path): z.ZodType {
  if (typeof ref !== 'string') refuse([...at, '$ref'], 'must be a string');
  const known = ctx.refs.get(ref);
  if (known) return known;
  const started = ctx.processing.get(ref);
  if (started !== undefined) {
    if (started === ctx.descents) {
      refuse([...at, '$ref'], 'a $ref cycle must step into the answer (through properties, items, …) to come round');
    }
    return z.lazy(() => ctx.refs.get(ref)!);
  }
  const target = resolveRef(ref, ctx, at);
  ctx.processing.set(ref, ctx.descents);
  const converted = convert(target, ctx, [...at, '$ref'], 'same');
  ctx.refs.set(ref, converted);
  ctx.processing.delete(ref);
  return converted;
}

function resolveRef(ref: string, ctx: Context, at: Path): unknown {
  if (!ref.startsWith('#')) refuse([...at, '$ref'], 'only local references (#/…) are supported');
  const path = ref.slice(1).split('/').filter(Boolean);
  if (path.length === 0) return ctx.root;
  const defsKey = ctx.version === 'draft-2020-12' ? '$defs' : 'definitions';
  const key = path[1]?.replace(/~1/g, '/').replace(/~0/g, '~');
  if (path[0] !== defsKey || path.length !== 2 || key === undefined || !Object.hasOwn(ctx.defs, key)) {
    refuse([...at, '$ref'], `the reference is not one of the schema's ${defsKey}`);
  }
  return ctx.defs[key];
}

function convertEnum(values: unknown, at: Path): z.ZodType {
  if (!Array.isArray(values)) refuse([...at, 'enum'], 'must be an array');
  if (values.length === 0) return z.never();
  if (values.length === 1) return z.literal(values[0] as z.core.util.Literal);
  if (values.every((value) => typeof value === 'string')) return z.enum(values as [string, ...string[]]);
  const literals = values.map((value) => z.literal(value as z.core.util.Literal));
  return z.union(literals);
}

function convertTyped(schema: JsonSchema, type: unknown, ctx: Context, at: Path): z.ZodType {
  switch (type) {
    case 'string':
      return convertString(schema, ctx, at);
    case 'number':
    case 'integer':
      return convertNumber(schema, type);
    case 'boolean':
      return z.boolean();
    case 'null':
      return z.null();
    case 'object':
      return convertObject(schema, ctx, at);
    case 'array':
      return convertArray(schema, ctx, at);
    default:
      return refuse(
        [...at, 'type'],
        'unsupported type; the types are string, number, integer, boolean, null, object, array',
      );
  }
}

// ── strings ───────────────────────────────────────────────────────────────────────────────────────────

function pattern(source: unknown, ctx: Context, at: Path): LinearRegex {
  if (typeof source !== 'string') refuse(at, 'a pattern is a string');
  return linear(source, ctx, at, (error) => `the pattern cannot be checked in linear time: ${error}`);
}

/** zod's own regular expression for a format, on RE2 (zod's check and message, the linear engine's matching). */
function formatPattern(regex: RegExp, ctx: Context, at: Path): LinearRegex {
  return linear(regex.source, ctx, at, (error) => `this format cannot be checked in linear time (${error})`);
}

/** Compiles for RE2 within the schema's regular-expression allowance, or refuses with `why`. */
function linear(source: string, ctx: Context, at: Path, why: (error: string) => string): LinearRegex {
  if (++ctx.regexes > MAX_SCHEMA_REGEXES) {
    refuse(at, `the schema has more than ${MAX_SCHEMA_REGEXES} patterns and formats`);
  }
  const compiled = compilePattern(source, ctx.meter);
  if (!compiled.ok) refuse(at, why(compiled.error));
  ctx.program += compiled.program;
  if (ctx.program > MAX_SCHEMA_PROGRAM) {
    refuse(at, `the schema's patterns and formats compile to more than ${MAX_SCHEMA_PROGRAM} RE2 instructions`);
  }
  return compiled.regex;
}

/** The RFC 3339 full-time z.fromJSONSchema uses for `time`. */
const FULL_TIME = /^(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/;

/**
 * The formats z.fromJSONSchema checks, as the string schema to build on. A format that is a regular expression runs
 * zod's own expression on RE2, under zod's name for it (so zod's message: "Invalid email address"); uri, ipv6,
 * cidr-v6, base64, base64url, jwt and credit_card run zod's code (URL parsing, atob, Luhn: linear). duration,
 * hostname, emoji and iban need lookahead: refused, rather than an answer left unchecked.
 */
function formatSchema(format: string, ctx: Context, at: Path): z.ZodString | z.ZodStringFormat | undefined {
  const re = z.regexes;
  const linear = (name: string, regex: RegExp) =>
    z.stringFormat(name, formatPattern(regex, ctx, at) as unknown as RegExp);
  switch (format) {
    case 'email':
      return linear('email', re.email);
    case 'uri':
    case 'uri-reference':
      return z.url();
    case 'uuid':
    case 'guid':
      return linear('uuid', re.uuid());
    case 'date-time':
      return linear('datetime', re.datetime({ offset: true }));
    case 'date':
      return linear('date', re.date);
    case 'time':
      return z.string().regex(formatPattern(FULL_TIME, ctx, at) as unknown as RegExp);
    case 'ipv4':
      return linear('ipv4', re.ipv4);
    case 'ipv6':
      return z.ipv6();
    case 'mac':
      return linear('mac', re.mac());
    case 'cidr':
      return linear('cidrv4', re.cidrv4);
    case 'cidr-v6':
      return z.cidrv6();
    case 'base64':
      return z.base64();
    case 'base64url':
      return z.base64url();
    case 'e164':
      return linear('e164', re.e164);
    case 'credit_card':
      return z.creditCard();
    case 'jwt':
      return z.jwt();
    case 'nanoid':
      return linear('nanoid', re.nanoid);
    case 'cuid':
      return linear('cuid', re.cuid);
    case 'cuid2':
      return linear('cuid2', re.cuid2);
    case 'ulid':
      return linear('ulid', re.ulid);
    case 'xid':
      return linear('xid', re.xid);
    case 'ksuid':
      return linear('ksuid', re.ksuid);
    case 'duration':
    case 'hostname':
    case 'emoji':
    case 'iban':
      return refuse(at, `the format "${format}" cannot be checked in linear time (its check needs lookahead)`);
    default:
      return undefined; // other formats are annotations, as in z.fromJSONSchema
  }
}

function convertString(schema: JsonSchema, ctx: Context, at: Path): z.ZodType {
  const format = schema['format'];
  let result = (typeof format === 'string' && formatSchema(format, ctx, [...at, 'format'])) || z.string();
  if (typeof schema['minLength'] === 'number') result = result.min(schema['minLength']);
  if (typeof schema['maxLength'] === 'number') result = result.max(schema['maxLength']);
  if (schema['pattern']) {
    // JSON Schema patterns are not anchored: they match anywhere in the string, as RE2's `test` does.
    result = result.regex(pattern(schema['pattern'], ctx, [...at, 'pattern']) as unknown as RegExp);
  }
  return result;
}

// ── numbers ───────────────────────────────────────────────────────────────────────────────────────────

function convertNumber(schema: JsonSchema, type: 'number' | 'integer'): z.ZodType {
  let result = type === 'integer' ? z.number().int() : z.number();
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf } = schema;
  // draft-04: `exclusiveMinimum: true` makes `minimum` exclusive.
  if (typeof minimum === 'number' && exclusiveMinimum !== true) result = result.min(minimum);
  if (typeof maximum === 'number' && exclusiveMaximum !== true) result = result.max(maximum);
  if (typeof exclusiveMinimum === 'number') result = result.gt(exclusiveMinimum);
  else if (exclusiveMinimum === true && typeof minimum === 'number') result = result.gt(minimum);
  if (typeof exclusiveMaximum === 'number') result = result.lt(exclusiveMaximum);
  else if (exclusiveMaximum === true && typeof maximum === 'number') result = result.lt(maximum);
  if (typeof multipleOf === 'number') result = result.multipleOf(multipleOf);
  return result;
}

// ── objects ───────────────────────────────────────────────────────────────────────────────────────────

function convertObject(schema: JsonSchema, ctx: Context, at: Path): z.ZodType {
  const properties = schema['properties'] ?? {};
  if (!isObject(properties)) refuse([...at, 'properties'], 'must be an object of schemas');
  const required = schema['required'] ?? [];
  if (!Array.isArray(required)) refuse([...at, 'required'], 'must be an array of property names');
  const requiredSet = new Set(required);
  const additional = schema['additionalProperties'];
  const additionalSchema = isObject(additional)
    ? convert(additional, ctx, [...at, 'additionalProperties'], 'descend')
    : undefined;
  const shape: Record<string, z.ZodType> = {};
  for (const [key, propertySchema] of Object.entries(properties)) {
    const converted = convert(propertySchema, ctx, [...at, 'properties', key], 'descend');
    // defineProperty: a `__proto__` property becomes an own property, not the prototype.
    Object.defineProperty(shape, key, {
      value: requiredSet.has(key) ? converted : converted.optional(),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  let result: z.ZodType;
  const patternProperties = schema['patternProperties'];
  if (patternProperties !== undefined) {
    if (!isObject(patternProperties)) refuse([...at, 'patternProperties'], 'must be an object of schemas');
    const entries = Object.entries(patternProperties).map(([source, valueSchema]) => ({
      regex: pattern(source, ctx, [...at, 'patternProperties', source]),
      value: convert(valueSchema, ctx, [...at, 'patternProperties', source], 'descend'),
    }));
    const parts: z.ZodType[] = [];
    if (Object.keys(shape).length > 0) parts.push(z.looseObject(shape));
    for (const { regex, value } of entries) {
      parts.push(z.looseRecord(z.string().regex(regex as unknown as RegExp), value));
    }
    result = parts.length === 0 ? z.looseObject({}) : parts.reduce((all, part) => z.intersection(all, part));
    if (additional === false) {
      const named = new Set(Object.keys(shape));
      const base = result;
      result = base.check((payload) => {
        const value = payload.value;
        if (!isObject(value)) return;
        const unrecognized = Object.keys(value).filter(
          (key) => !named.has(key) && !entries.some(({ regex }) => regex.test(key)),
        );
        if (unrecognized.length > 0) {
          payload.issues.push({ code: 'unrecognized_keys', keys: unrecognized, input: value, inst: base });
        }
      });
    }
  } else if (additional === false) result = z.strictObject(shape);
  else if (additionalSchema) result = z.object(shape).catchall(additionalSchema);
  else result = z.looseObject(shape);
  return objectGuards(schema, result, ctx, at);
}

/** `propertyNames`, `minProperties`, `maxProperties`: checked on the raw value's own keys, before the object parse. */
function objectGuards(schema: JsonSchema, objectSchema: z.ZodType, ctx: Context, at: Path): z.ZodType {
  const names = schema['propertyNames'];
  const min = typeof schema['minProperties'] === 'number' ? schema['minProperties'] : undefined;
  const max = typeof schema['maxProperties'] === 'number' ? schema['maxProperties'] : undefined;
  const hasKeyGuard = names !== undefined && names !== true;
  if (!hasKeyGuard && min === undefined && max === undefined) return objectSchema;
  const keySchema = hasKeyGuard
    ? convert(
        isObject(names) && names['type'] === undefined ? { type: 'string', ...names } : names,
        ctx,
        [...at, 'propertyNames'],
        'descend',
      )
    : undefined;
  const guard = z
    .transform((value: unknown) => value)
    .check((payload) => {
      const value = payload.value;
      if (!isObject(value)) return;
      const keys = Object.getOwnPropertyNames(value);
      if (min !== undefined && keys.length < min) {
        payload.issues.push({
          origin: 'object',
          code: 'too_small',
          minimum: min,
          inclusive: true,
          message: `Too small: expected object to have >=${min} properties`,
          input: value,
          continue: true,
        });
      }
      if (max !== undefined && keys.length > max) {
        payload.issues.push({
          origin: 'object',
          code: 'too_big',
          maximum: max,
          inclusive: true,
          message: `Too big: expected object to have <=${max} properties`,
          input: value,
          continue: true,
        });
      }
      if (!keySchema) return;
      for (const key of keys) {
        const result = keySchema.safeParse(key);
        if (result.success) continue;
        payload.issues.push({
          code: 'invalid_key',
          origin: 'record',
          issues: result.error.issues,
          input: key,
          path: [key],
          continue: true,
        });
      }
    });
  return guard.pipe(objectSchema);
}

// ── arrays ────────────────────────────────────────────────────────────────────────────────────────────

function convertArray(schema: JsonSchema, ctx: Context, at: Path): z.ZodType {
  const { prefixItems, items, minItems, maxItems } = schema;
  const bounds = (result: z.ZodType): z.ZodType => {
    let bounded = result;
    if (typeof minItems === 'number') bounded = bounded.check(z.minLength(minItems));
    if (typeof maxItems === 'number') bounded = bounded.check(z.maxLength(maxItems));
    return bounded;
  };
  const tuple = (positional: unknown[], keyword: string, restSchema: unknown, restKeyword: string) => {
    const least = typeof minItems === 'number' ? minItems : 0;
    const converted = positional.map((item, index) => {
      const one = convert(item, ctx, [...at, keyword, String(index)], 'descend');
      return index < least ? one : one.optional();
    });
    const rest =
      restSchema === false
        ? undefined
        : restSchema === undefined || restSchema === true
          ? z.any()
          : convert(restSchema, ctx, [...at, restKeyword], 'descend');
    const base = z.tuple(converted as [z.ZodType, ...z.ZodType[]]);
    return bounds(rest ? base.rest(rest) : base);
  };
  let result: z.ZodType;
  if (Array.isArray(prefixItems)) {
    result = tuple(prefixItems, 'prefixItems', Array.isArray(items) ? false : items, 'items');
  } else if (Array.isArray(items)) {
    result = tuple(items, 'items', schema['additionalItems'], 'additionalItems');
  } else if (items !== undefined) {
    let array = z.array(convert(items, ctx, [...at, 'items'], 'descend'));
    if (typeof minItems === 'number') array = array.min(minItems);
    if (typeof maxItems === 'number') array = array.max(maxItems);
    result = array;
  } else result = z.array(z.any());
  if (schema['uniqueItems'] === true || schema['contains'] !== undefined) {
    const contains =
      schema['contains'] !== undefined ? convert(schema['contains'], ctx, [...at, 'contains'], 'descend') : undefined;
    result = arrayGuards(result, {
      unique: schema['uniqueItems'] === true,
      contains,
      minContains: typeof schema['minContains'] === 'number' ? schema['minContains'] : undefined,
      maxContains: typeof schema['maxContains'] === 'number' ? schema['maxContains'] : undefined,
      meter: ctx.meter,
    });
  }
  return result;
}

interface ArrayGuards {
  unique: boolean;
  contains: z.ZodType | undefined;
  minContains: number | undefined;
  maxContains: number | undefined;
  meter: Meter;
}

const elements = (n: number) => (n === 1 ? 'element' : 'elements');

/** `uniqueItems` and `contains` on the raw items, before the array parse (an item's `default` would change them). */
function arrayGuards(arraySchema: z.ZodType, guards: ArrayGuards): z.ZodType {
  const guard = z
    .transform((value: unknown) => value)
    .check((payload) => {
      const items = payload.value;
      if (!Array.isArray(items)) return;
      if (guards.unique) {
        const firstSeen = new Map<string, number>();
        for (let i = 0; i < items.length; i++) {
          const key = canonicalJson(items[i]);
          guards.meter(key.length);
          const first = firstSeen.get(key);
          if (first === undefined) {
            firstSeen.set(key, i);
            continue;
          }
          payload.issues.push({
            code: 'custom',
            message: `Array items must be unique: element at index ${i} duplicates the one at index ${first}`,
            input: items,
            path: [i],
            continue: true,
          });
        }
      }
      if (!guards.contains) return;
      const minContains = guards.minContains ?? 1;
      const ceiling = guards.maxContains !== undefined ? guards.maxContains + 1 : Number.POSITIVE_INFINITY;
      let matches = 0;
      for (const item of items) {
        if (guards.contains.safeParse(item).success && ++matches >= ceiling) break;
      }
      if (matches < minContains) {
        payload.issues.push({
          code: 'custom',
          message: `Array must contain at least ${minContains} matching ${elements(minContains)}; found ${matches}`,
          input: items,
          continue: true,
        });
      }
      if (guards.maxContains !== undefined && matches > guards.maxContains) {
        payload.issues.push({
          code: 'custom',
          message: `Array must contain at most ${guards.maxContains} matching ${elements(guards.maxContains)}`,
          input: items,
          continue: true,
        });
      }
    });
  return guard.pipe(arraySchema);
}
