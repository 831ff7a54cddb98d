// A typed answer's JSON Schema as the workflow checks it: the same verdicts and messages as z.fromJSONSchema for the
// schemas that one reads (so a caller sees no change), every regular expression on RE2, every visit spent from a
// budget, and what cannot be checked in bounded time refused when the schema is built.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { z } from 'zod';
import {
  answerSchema,
  MAX_SCHEMA_NESTING,
  MAX_SCHEMA_PROGRAM,
  MAX_SCHEMA_REGEXES,
  MAX_STEPS_WITHOUT_DESCENT,
} from '../../common/answer-schema';

type Schema = Record<string, unknown>;

function built(schema: Schema, meter?: (units: number) => void): z.ZodType {
  const result = answerSchema(schema, meter);
  assert.ok(result.ok, result.ok ? '' : result.error);
  return result.schema;
}

function refusal(schema: Schema): string {
  const result = answerSchema(schema);
  assert.equal(result.ok, false, 'the schema is refused');
  return (result as { error: string }).error;
}

/** What a parse says: the value, or each issue's path and message. */
function verdict(schema: z.ZodType, value: unknown): unknown {
  const parsed = schema.safeParse(value);
  return parsed.success ? { value: parsed.data } : parsed.error.issues.map((issue) => [issue.path, issue.message]);
}

const Quote = z.object({
  symbol: z.string().regex(/^[A-Z]+$/),
  price: z.number().positive(),
  currency: z.enum(['USD', 'EUR']),
  email: z.email().optional(),
  tags: z.array(z.string()).max(2),
  when: z.iso.datetime().nullable(),
  count: z.number().int().multipleOf(5).default(5),
  byName: z.record(z.string(), z.number()),
  pair: z.tuple([z.string(), z.number()]),
  id: z.uuid(),
  link: z.url(),
  day: z.iso.date(),
  ip: z.ipv4(),
});

const CORPUS: Array<{ name: string; schema: Schema; values: unknown[] }> = [
  {
    name: 'what z.toJSONSchema makes of a zod object with formats, bounds, tuples, records and defaults',
    schema: z.toJSONSchema(Quote, { io: 'input' }) as Schema,
    values: [
      {
        symbol: 'GM',
        price: 39.5,
        currency: 'USD',
        tags: [],
        when: null,
        byName: {},
        pair: ['a', 1],
        id: '123e4567-e89b-12d3-a456-426614174000',
        link: 'https://example.com',
        day: '2026-03-02',
        ip: '10.0.0.1',
      },
      {
        symbol: 'gm',
        price: -1,
        currency: 'GBP',
        email: 'nope',
        tags: ['a', 'b', 'c'],
        when: 'yesterday',
        count: 3,
        byName: { a: 'b' },
        pair: [1],
        id: 'x',
        link: 'no',
        day: '2026-02-30',
        ip: '999.0.0.1',
      },
      {},
      42,
      null,
    ],
  },
  {
    name: 'patternProperties, propertyNames, additionalProperties: false, minProperties',
    schema: {
      type: 'object',
      properties: { a: { type: 'string', pattern: 'x' } },
      patternProperties: { '^b': { type: 'number' } },
      additionalProperties: false,
      propertyNames: { pattern: '^[a-z]+[0-9]*$' },
      minProperties: 1,
    },
    values: [{ a: 'xyz', b1: 2 }, { a: 'y', b1: 'x', Z: 1 }, {}],
  },
  {
    name: 'uniqueItems and contains, anyOf, oneOf, allOf, const, enum of mixed values, a type list',
    schema: {
      type: 'object',
      properties: {
        list: { type: 'array', uniqueItems: true, contains: { const: 3 }, maxContains: 1 },
        either: {
          anyOf: [
            { type: 'string', minLength: 2 },
            { type: 'integer', minimum: 10 },
          ],
        },
        one: { oneOf: [{ type: 'number' }, { type: 'integer' }] },
        all: {
          allOf: [
            { type: 'string', maxLength: 3 },
            { type: 'string', pattern: '^a' },
          ],
        },
        mixed: { enum: ['a', 1, null] },
        nullable: { type: ['string', 'null'] },
      },
    },
    values: [
      { list: [1, 2, 3], either: 'ab', one: 1.5, all: 'abc', mixed: null, nullable: null },
      { list: [3, 3], either: 'a', one: 2, all: 'bcde', mixed: 'b', nullable: 4 },
    ],
  },
  {
    name: 'a recursive schema through $defs',
    schema: {
      type: 'object',
      $defs: { node: { type: 'object', properties: { children: { type: 'array', items: { $ref: '#/$defs/node' } } } } },
      properties: { root: { $ref: '#/$defs/node' } },
      required: ['root'],
    },
    values: [{ root: { children: [{ children: [] }, { children: [{ children: 'no' }] }] } }, {}],
  },
];

describe('the same verdicts and messages as z.fromJSONSchema', () => {
  for (const { name, schema, values } of CORPUS) {
    test(name, () => {
      const ours = built(schema);
      const zods = z.fromJSONSchema(schema as never, { registry: z.registry() });
      for (const value of values) assert.deepEqual(verdict(ours, value), verdict(zods, value));
    });
  }
});

describe('regular expressions run on RE2', () => {
  test('a pattern that backtracks exponentially answers at once', () => {
    const schema = built({ type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } });
    assert.deepEqual(verdict(schema, { s: `${'a'.repeat(10_000)}!` }), [
      [['s'], 'Invalid string: must match pattern /^(a+)+$/'],
    ]);
    assert.deepEqual(verdict(schema, { s: 'aaa' }), { value: { s: 'aaa' } });
  });

  test('so do patternProperties keys and propertyNames', () => {
    const key = `${'a'.repeat(10_000)}!`;
    const keys = built({ type: 'object', patternProperties: { '^(a+)+$': {} }, additionalProperties: false });
    assert.equal(keys.safeParse({ [key]: 1 }).success, false);
    const names = built({ type: 'object', propertyNames: { pattern: '^(a+)+$' } });
    assert.equal(names.safeParse({ [key]: 1 }).success, false);
    assert.equal(names.safeParse({ aaa: 1 }).success, true);
  });

  test('a format is zod’s own expression on RE2, with zod’s message', () => {
    const schema = built({ type: 'object', properties: { e: { type: 'string', format: 'email' } } });
    assert.deepEqual(verdict(schema, { e: `${'a'.repeat(50_000)}@` }), [[['e'], 'Invalid email address']]);
    assert.equal(schema.safeParse({ e: 'gm@example.com' }).success, true);
  });

  for (const [where, schema] of [
    ['pattern', { type: 'object', properties: { s: { type: 'string', pattern: '(a)\\1' } } }],
    ['patternProperties', { type: 'object', patternProperties: { '(?=a)': {} } }],
    ['propertyNames', { type: 'object', propertyNames: { pattern: '(?<!a)b' } }],
  ] as const) {
    test(`a ${where} RE2 cannot run is refused, with where it is`, () => {
      assert.match(refusal(schema), /cannot be checked in linear time: (backreferences|lookaround)/);
    });
  }

  test('formats whose zod check needs lookahead are refused, not left unchecked', () => {
    for (const format of ['hostname', 'duration', 'emoji', 'iban']) {
      const error = refusal({ type: 'object', properties: { s: { type: 'string', format } } });
      assert.match(error, new RegExp(`at properties\\.s\\.format: the format "${format}" cannot be checked`));
    }
  });

  test('an unknown format is an annotation, as in z.fromJSONSchema', () => {
    assert.equal(
      built({ type: 'object', properties: { s: { type: 'string', format: 'color' } } }).safeParse({ s: 'x' }).success,
      true,
    );
  });
});

describe('bounded work', () => {
  test('every visit spends from the meter, and a meter that throws stops the check', () => {
    let spent = 0;
    const schema = built(
      { type: 'object', properties: { list: { type: 'array', items: { type: 'number' } } } },
      (units) => {
        spent += units;
      },
    );
    schema.parse({ list: [1, 2, 3] });
    assert.equal(spent, 5, 'the object, the list and three numbers');

    class Spent extends Error {}
    let left = 100;
    const metered = built(
      { type: 'object', properties: { list: { type: 'array', items: { type: 'string' } } } },
      (units) => {
        left -= units;
        if (left < 0) throw new Spent();
      },
    );
    assert.throws(() => metered.parse({ list: ['a'.repeat(50), 'b'.repeat(50)] }), Spent);
  });

  test('unions nested in each other spend on every branch they try', () => {
    const options = Array.from({ length: 12 }, (_, i) => ({
      type: 'object',
      properties: { a: { const: i } },
      required: ['a'],
    }));
    let spent = 0;
    const schema = built(
      { type: 'object', properties: { w: { type: 'array', items: { anyOf: options } } } },
      (units) => {
        spent += units;
      },
    );
    schema.safeParse({ w: Array.from({ length: 100 }, () => ({ a: 'none' })) });
    assert.ok(spent >= 100 * 12 * 2, `${spent} units for 100 items × 12 branches × (object + property)`);
  });
});

describe('schemas that cannot be checked in bounded time are refused', () => {
  test('a $ref cycle that never steps into the answer', () => {
    assert.match(
      refusal({
        type: 'object',
        $defs: { a: { $ref: '#/$defs/b' }, b: { $ref: '#/$defs/a' } },
        properties: { x: { $ref: '#/$defs/a' } },
      }),
      /\$ref cycle must step into the answer/,
    );
    assert.match(
      refusal({
        type: 'object',
        $defs: { a: { anyOf: [{ $ref: '#/$defs/a' }, { type: 'string' }] } },
        properties: { x: { $ref: '#/$defs/a' } },
      }),
      /\$ref cycle must step into the answer/,
    );
    assert.match(refusal({ type: 'object', allOf: [{ $ref: '#' }] }), /\$ref cycle must step into the answer/);
  });

  test(`nesting deeper than ${MAX_SCHEMA_NESTING}, $ref hops counted`, () => {
    const defs: Schema = {};
    for (let i = 0; i < MAX_SCHEMA_NESTING; i++) {
      defs[`d${i}`] = { type: 'object', properties: { next: { $ref: `#/$defs/d${i + 1}` } } };
    }
    defs[`d${MAX_SCHEMA_NESTING}`] = { type: 'string' };
    assert.match(
      refusal({ type: 'object', $defs: defs, properties: { x: { $ref: '#/$defs/d0' } } }),
      /nests deeper than/,
    );
  });

  test(`more than ${MAX_STEPS_WITHOUT_DESCENT} schemas applied to one value in a chain`, () => {
    let schema: unknown = { type: 'string' };
    for (let i = 0; i <= MAX_STEPS_WITHOUT_DESCENT; i++) schema = { allOf: [schema] };
    assert.match(refusal({ type: 'object', properties: { x: schema } }), /schemas .* apply to one value in a chain/);
  });

  test(`more than ${MAX_SCHEMA_REGEXES} patterns and formats, or ${MAX_SCHEMA_PROGRAM} RE2 instructions in all`, () => {
    // Each is compiled whenever the schema is built (options checked, each answer checked): their sum is bounded.
    const many = (count: number, property: (i: number) => Schema): Schema => ({
      type: 'object',
      properties: Object.fromEntries(Array.from({ length: count }, (_, i) => [`p${i}`, property(i)])),
    });
    assert.equal(answerSchema(many(MAX_SCHEMA_REGEXES, () => ({ type: 'string', format: 'email' }))).ok, true);
    assert.match(
      refusal(many(MAX_SCHEMA_REGEXES + 1, (i) => ({ type: 'string', pattern: `^${i}$` }))),
      /more than 100 patterns and formats/,
    );
    const costly = '[a-z]{1,50}[0-9]{1,40}'.repeat(20);
    assert.match(
      refusal(many(10, () => ({ type: 'string', pattern: costly }))),
      /compile to more than 20000 RE2 instructions/,
    );
  });

  test('keywords z.fromJSONSchema cannot check either, external references, unknown types', () => {
    assert.match(refusal({ type: 'object', if: {} }), /if\/then\/else/);
    assert.match(refusal({ type: 'object', properties: { x: { not: { type: 'string' } } } }), /not is not supported/);
    assert.match(
      refusal({ type: 'object', properties: { x: { $ref: 'https://example.com/s' } } }),
      /only local references/,
    );
    assert.match(
      refusal({ type: 'object', properties: { x: { $ref: '#/$defs/missing' } } }),
      /not one of the schema's \$defs/,
    );
    assert.match(
      refusal({ type: 'object', properties: { x: { type: 'date' } } }),
      /at properties\.x\.type: unsupported type/,
    );
  });

  test('a refusal names where, with property names shortened and lone surrogates repaired', () => {
    const name = `\ud800${'n'.repeat(200)}`;
    const error = refusal({ type: 'object', properties: { [name]: { type: 'string', pattern: '(?=a)' } } });
    assert.ok(error.length < 300, error);
    assert.ok(!/[\ud800-\udfff]/.test(error.replace(/[\ud800-\udbff][\udc00-\udfff]/g, '')), 'well-formed');
    assert.match(error, /^at properties\.\ufffdn+…\.pattern: /);
  });
});

test('an `id` in a schema goes to no global registry (z.fromJSONSchema keeps it there for good)', () => {
  built({ type: 'object', properties: { x: { type: 'string', id: 'typed-answer-registry-probe' } } });
  assert.equal(z.globalRegistry._idmap.has('typed-answer-registry-probe'), false);
});
