// Seeded random and adversarial tests for the legacy XML parser: it never throws, it round-trips every value that the
// documented rules say it must, and it stays linear on megabyte-sized hostile input. Deterministic: a fixed-seed PRNG.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  LEGACY_STOP_SEQUENCE,
  coerceParameters,
  extractAnswer,
  legacyXmlProtocol,
  parseFunctionCalls,
  renderFunctionResults,
  type ParsedFunctionCalls,
} from '../../common/protocols/legacy-xml';
import type { ModelReply } from '../../common/protocols/types';

/** mulberry32: small, fast, good enough to shuffle fragments; the seed makes every run the same. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  return { next, int, pick };
}

function textReply(text: string, stop: ModelReply['stop_reason']): ModelReply {
  return {
    content: [{ type: 'text', text, citations: null }],
    stop_reason: stop,
    stop_sequence: stop === 'stop_sequence' ? LEGACY_STOP_SEQUENCE : null,
  };
}

/** What every parse result must satisfy, whatever the input. */
function checkShape(text: string, parsed: ParsedFunctionCalls | null): void {
  if (!text.includes('<function_calls>')) {
    assert.equal(parsed, null);
    return;
  }
  assert.ok(parsed);
  assert.equal(text.slice(0, parsed.before.length), parsed.before);
  assert.ok(text.startsWith('<function_calls>', parsed.before.length));
  assert.ok(parsed.end >= parsed.before.length + '<function_calls>'.length && parsed.end <= text.length);
  assert.ok(parsed.end === text.length || text.startsWith('</function_calls>', parsed.end));
  assert.ok(parsed.errors.length <= 21);
  parsed.calls.forEach((call, i) => {
    assert.equal(call.index, i);
    assert.equal(call.name, call.name.trim());
    if (call.error === undefined) assert.notEqual(call.name, '');
    else assert.ok(call.error.length > 0 && call.error.length < 2000, call.error);
    assert.equal(Object.getPrototypeOf(call.parameters), Object.prototype);
    for (const v of Object.values(call.parameters)) assert.equal(typeof v, 'string');
  });
}

// ---------------------------------------------------------------------------------------------------------------

const GARBAGE = [
  '<function_calls>',
  '</function_calls>',
  '<invoke>',
  '</invoke>',
  '<tool_name>',
  '</tool_name>',
  '<parameters>',
  '</parameters>',
  '<a>',
  '</a>',
  '<b>',
  '</b>',
  '<company_name>',
  '</company_name>',
  '<![CDATA[',
  ']]>',
  '<answer>',
  '</answer>',
  '<scratchpad>',
  '</scratchpad>',
  '<',
  '>',
  '</',
  '/>',
  '&',
  '&amp;',
  '\n',
  '\r\n',
  ' ',
  '\t',
  'x',
  'GM',
  '<invoke name="f">',
  '<parameter name="a">',
  '<$P>',
  '</$P>',
  '<a b>',
  '< a>',
  '</a >',
  '<!-- -->',
  '\u0000',
  '😀',
  'é',
  '<名前>',
  '</名前>',
  '__proto__',
  '<__proto__>',
  '</__proto__>',
  '"',
  "'",
  '=',
  '{"a":1}',
  '[1,2',
  'true',
];

describe('parseFunctionCalls under random input', () => {
  it('never throws and always returns a well-formed result on 2,000 seeded strings of tag fragments', (t) => {
    const r = rng(0x5eed);
    const started = performance.now();
    let blocks = 0;
    let calls = 0;
    for (let n = 0; n < 2000; n++) {
      const parts: string[] = [];
      const len = 1 + r.int(n % 10 === 0 ? 400 : 60);
      // Half the strings start like a real block, so the parser gets past the first tag.
      if (r.next() < 0.5) parts.push('<function_calls>\n<invoke>\n<tool_name>f</tool_name>\n<parameters>\n');
      for (let i = 0; i < len; i++) parts.push(r.pick(GARBAGE));
      const text = parts.join('');
      const parsed = parseFunctionCalls(text);
      checkShape(text, parsed);
      if (parsed) {
        blocks++;
        calls += parsed.calls.length;
      }
      assert.equal(typeof extractAnswer(text), 'string');
      const reading = legacyXmlProtocol.readReply(
        textReply(text, r.pick(['stop_sequence', 'end_turn', 'max_tokens'] as const)),
        n,
      );
      assert.equal(typeof reading.assistant.content, 'string');
      for (const call of reading.toolCalls) {
        assert.match(call.id, new RegExp(`^legacy-${n}-\\d+$`));
        if (call.malformed === undefined) assert.notEqual(call.name, '');
      }
      assert.equal(new Set(reading.toolCalls.map((c) => c.id)).size, reading.toolCalls.length);
    }
    t.diagnostic(
      `2,000 random strings: ${blocks} blocks, ${calls} invokes, ${(performance.now() - started).toFixed(0)} ms in all`,
    );
  });

  it('reads back the clean invokes it found when they are written out again', () => {
    const r = rng(0xc0ffee);
    let checked = 0;
    for (let n = 0; n < 2000; n++) {
      const parts = ['<function_calls>\n'];
      for (let i = 0, len = 1 + r.int(80); i < len; i++) parts.push(r.pick(GARBAGE));
      const parsed = parseFunctionCalls(parts.join(''));
      const clean = parsed?.calls.filter((c) => c.error === undefined) ?? [];
      if (clean.length === 0) continue;
      // Only values the documented rules promise to keep: no own-name structure, no format tags, no CDATA/newline edges.
      const safe = clean.filter((c) =>
        Object.entries(c.parameters).every(([k, v]) => !/[<>]|^\n|\n$|\r/.test(v) && !/[<>\s/]/.test(k)),
      );
      if (safe.length === 0) continue;
      const again = parseFunctionCalls(
        `<function_calls>\n${safe
          .map(
            (c) =>
              `<invoke>\n<tool_name>${c.name}</tool_name>\n<parameters>\n${Object.entries(c.parameters)
                .map(([k, v]) => `<${k}>${v}</${k}>\n`)
                .join('')}</parameters>\n</invoke>\n`,
          )
          .join('')}`,
      );
      assert.ok(again);
      assert.deepEqual(
        again.calls.map((c) => [c.name, c.parameters, c.error]),
        safe.map((c) => [c.name, c.parameters, undefined]),
      );
      checked++;
    }
    assert.ok(checked > 0);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Round trip: random well-formed blocks whose values are hostile but within the documented rules.

const PARAM_NAMES = ['company_name', 'symbol', 'query', 'content', 'b', 'p', 'x.y', 'data-1', '名前', '_', 'i', 'html'];
const FOREIGN_NAMES = ['div', 'span', 'li', 'em']; // never parameter names, so balanced markup of them is inert
const TOOL_NAMES = ['get_ticker_symbol', 'get_current_stock_price', 'search', 'write_file', 't'];

/** [raw, expected] fragments of a value for parameter `own`, among the invoke's parameter names `names`. */
function valueFragment(r: ReturnType<typeof rng>, own: string, names: string[]): [string, string] {
  const other = r.pick(names);
  const foreign = r.pick(FOREIGN_NAMES);
  const plain = r.pick([
    'General Motors',
    'x',
    ' ',
    '\t',
    '\n',
    '42',
    'é',
    '😀',
    '<',
    '>',
    '&',
    '&amp;',
    '&lt;b&gt;',
    'a < b && c > d',
    '<<',
    '>>',
    '< /p>',
    '<b>',
    '<b>bold</b>!',
    '<br/>',
    '<a href="x">',
    '<!-- c -->',
    ']]>',
    '<![CDAT',
    '<?xml?>',
    '{"a": [1, "<x>"]}',
    '<invoke>',
    'x<tool_name>',
    '<parameters>',
    '<function_calls>',
    '</invoke> x',
    '</parameters> x',
    '</tool_name> x',
    '</function_results> x',
    '$PARAMETER_VALUE',
  ]);
  switch (r.int(9)) {
    case 0:
      return [`</${own}> and`, `</${own}> and`]; // own closing tag followed by text
    case 1:
      return [`<${own}>in</${own}>`, `<${own}>in</${own}>`]; // own name, balanced
    case 2:
      return [`<${own}>`, `<${own}>`]; // own name, unbalanced opening
    case 3:
      return [`</${other}>!`, `</${other}>!`]; // a sibling's closing tag, followed by text
    case 4:
      return [`<${other}>`, `<${other}>`]; // a sibling's opening tag
    case 5:
      return [`<${foreign}>v</${foreign}>\n<${foreign}>`, `<${foreign}>v</${foreign}>\n<${foreign}>`];
    case 6: {
      const inner = r.pick([`</${own}>\n</parameters>\n</invoke>\n<invoke>`, '\nraw <x> & </y>\n', `</${other}>`]);
      return [`<![CDATA[${inner}]]>`, inner];
    }
    default:
      return [plain, plain];
  }
}

function randomValue(r: ReturnType<typeof rng>, own: string, names: string[]): [string, string] {
  const frags: [string, string][] = [];
  for (let i = 0, len = r.int(8); i < len; i++) frags.push(valueFragment(r, own, names));
  // Rule 5: one newline is dropped at each end (only the '\n' fragment starts or ends with one).
  const expected = frags.map((f) => f[1]);
  if (frags[0]?.[0] === '\n') expected[0] = '';
  if (frags.length > (frags[0]?.[0] === '\n' ? 1 : 0) && frags.at(-1)?.[0] === '\n') expected[expected.length - 1] = '';
  return [frags.map((f) => f[0]).join(''), expected.join('')];
}

describe('parseFunctionCalls round trip', () => {
  it('reads back exactly every value of 1,000 random blocks whose tag lookalikes the rules keep in the value', (t) => {
    const r = rng(20240607);
    const started = performance.now();
    let values = 0;
    for (let n = 0; n < 1000; n++) {
      const sep = r.pick(['\n', '', ' ', '\n\n', '\t\n']);
      const indent = r.pick(['', '  ']);
      const expected: { name: string; parameters: Record<string, string> }[] = [];
      const invokes: string[] = [];
      for (let k = 0, count = 1 + r.int(3); k < count; k++) {
        const name = r.pick(TOOL_NAMES);
        const names = [...PARAM_NAMES].sort(() => r.next() - 0.5).slice(0, r.int(5));
        const parameters: Record<string, string> = {};
        const lines: string[] = [];
        for (const p of names) {
          const [raw, value] = randomValue(r, p, names);
          lines.push(`${indent}<${p}>${raw}</${p}>`);
          parameters[p] = value;
          values++;
        }
        expected.push({ name, parameters });
        invokes.push(
          [
            '<invoke>',
            `<tool_name>${r.pick(['', ' ', '\n'])}${name}${r.pick(['', '\n'])}</tool_name>`,
            '<parameters>',
            ...lines,
            '</parameters>',
            '</invoke>',
          ].join(sep),
        );
      }
      const before = r.pick([
        '',
        'Sure.\n\n',
        '<scratchpad>I need <function_calls> for this.</scratchpad>\n',
        'a < b\n',
      ]);
      let body = `${before}<function_calls>${sep}${invokes.join(sep)}${sep}`;
      switch (r.int(5)) {
        case 0:
          body += `</function_calls>${r.pick(['', '\n<function_results>\n<invoke>junk', ' trailing'])}`;
          break;
        case 1:
          body = body.replace(/<\/invoke>\s*$/, '');
          break; // cut before the last </invoke>
        case 2:
          body = body.replace(/<\/parameters>\s*<\/invoke>\s*$/, '');
          break; // and before </parameters>
        default:
          break; // what the API returns: everything but the stop sequence
      }
      const parsed = parseFunctionCalls(body);
      assert.ok(parsed, body);
      assert.equal(parsed.before, before);
      assert.deepEqual(parsed.errors, [], body);
      assert.deepEqual(
        parsed.calls.map(({ name, parameters }) => ({ name, parameters })),
        expected,
        body,
      );

      const reading = legacyXmlProtocol.readReply(textReply(body, 'stop_sequence'), n);
      assert.deepEqual(
        reading.toolCalls.map((c) => [c.id, c.name, c.input, c.malformed]),
        expected.map((e, i) => [`legacy-${n}-${i}`, e.name, e.parameters, undefined]),
      );
      assert.ok(
        typeof reading.assistant.content === 'string' && reading.assistant.content.endsWith(LEGACY_STOP_SEQUENCE),
      );
    }
    t.diagnostic(`1,000 random blocks, ${values} values: ${(performance.now() - started).toFixed(0)} ms`);
  });
});

// ---------------------------------------------------------------------------------------------------------------

const MB = 1 << 20;
const fill = (s: string, n = MB) => s.repeat(Math.ceil(n / s.length)).slice(0, n);
const HEAD = '<function_calls>\n<invoke>\n<tool_name>t</tool_name>\n<parameters>\n';

const ADVERSARIAL: [string, string][] = [
  ['1 MB of <', fill('<')],
  ['<function_calls> then 1 MB of <', `<function_calls>${fill('<')}`],
  ['1 MB of <function_calls>', fill('<function_calls>')],
  ['<function_calls> then 1 MB of whitespace', `<function_calls>${fill(' \n')}`],
  ['1 MB of nested opening tags', HEAD + fill('<a>')],
  ['nested <a> 130k deep, then closed', HEAD + '<a>'.repeat(MB / 8) + '</a>'.repeat(MB / 8)],
  ['1 MB of <a></a> pairs (duplicates)', HEAD + fill('<a></a>\n')],
  ['60,000 distinct parameters', HEAD + Array.from({ length: 60000 }, (_, i) => `<p${i}>v</p${i}>`).join('\n')],
  ['1 MB of </a><a> inside one value', `${HEAD}<a>${fill('</a>\n<a>')}`],
  ['1 MB of own closing tags followed by prose', `${HEAD}<a>${fill('</a> x')}`],
  ['1 MB of stray closing tags', HEAD + fill('</x>')],
  ['1 MB of empty invokes', `<function_calls>${fill('<invoke></invoke>x')}`],
  [
    '13,000 well-formed invokes',
    `<function_calls>\n${fill('<invoke>\n<tool_name>t</tool_name>\n<parameters>\n<a>1</a>\n</parameters>\n</invoke>\n')}`,
  ],
  ['1 MB of CDATA openers', HEAD + fill('<![CDATA[')],
  ['1 MB of CDATA sections and closers', `${HEAD}<a>${fill('<![CDATA[x]]></a>')}`],
  ['one 1 MB tag name', `${HEAD}<${fill('a')}`],
  ['1 MB of unterminated tag names', HEAD + fill('<aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')],
  ['1 MB of structure lookalikes', HEAD + fill('<a><b></a></b><c>\n</c></parameters></invoke>')],
  ['1 MB of unclosed parameters', HEAD + fill('<a>x</b>')],
  ['1 MB of <answer>', fill('<answer>')],
  [
    'a 1 MB HTML value',
    `${HEAD}<content>${fill('<div class="x"><p>a < b && c</p><content>n</content></div>\n')}</content>\n</parameters>\n</invoke>\n`,
  ],
];

describe('parseFunctionCalls on 1 MB adversarial input', () => {
  for (const [title, text] of ADVERSARIAL) {
    it(`parses ${title} in well under 2 s of CPU without throwing`, (t) => {
      // CPU time, not wall time: a quadratic parse takes minutes either way, a loaded machine only stretches wall time.
      const started = process.cpuUsage();
      const parsed = parseFunctionCalls(text);
      const { user, system } = process.cpuUsage(started);
      const parseMs = (user + system) / 1000;
      checkShape(text, parsed);
      const answerStarted = performance.now();
      extractAnswer(text);
      legacyXmlProtocol.readReply(textReply(text, 'stop_sequence'), 0);
      const restMs = performance.now() - answerStarted;
      t.diagnostic(
        `${title} (${(text.length / MB).toFixed(2)} MB): parse ${parseMs.toFixed(1)} ms; extractAnswer + readReply ${restMs.toFixed(1)} ms`,
      );
      assert.ok(parseMs < 2000, `took ${parseMs.toFixed(0)} ms`);
    });
  }

  it('keeps a 1 MB HTML value intact', () => {
    const value = fill('<div class="x"><p>a < b && c</p><content>n</content></div>\n');
    const parsed = parseFunctionCalls(`${HEAD}<content>${value}</content>\n</parameters>\n</invoke>\n`);
    assert.equal(parsed?.calls[0]?.parameters.content, value.endsWith('\n') ? value.slice(0, -1) : value);
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe('coerceParameters and renderFunctionResults under random input', () => {
  const RAW = [
    '',
    ' ',
    '0',
    '-1',
    '1.5',
    '1e3',
    'NaN',
    'true',
    'FALSE',
    'null',
    '[',
    '[1,2]',
    '{"a":1}',
    '{a}',
    'x',
    '\n42\n',
    '99999999999999999999',
    '"quoted"',
    '<b>',
    '__proto__',
  ];
  const SCHEMAS: unknown[] = [
    { type: 'string' },
    { type: 'integer' },
    { type: 'number' },
    { type: 'boolean' },
    { type: 'array' },
    { type: 'object' },
    { type: 'null' },
    { type: ['string', 'null'] },
    { type: ['integer', 'boolean'] },
    { anyOf: [{ type: 'integer' }, { type: 'array' }] },
    { oneOf: [{ enum: [1, 'a', null] }] },
    { enum: [] },
    { type: 'bogus' },
    {},
    true,
    null,
    7,
    { type: 'object', properties: { x: { type: 'integer' } } },
    { allOf: [{ type: 'number' }] },
    { const: 3 },
    { items: {} },
  ];

  it('coercion never throws and always explains a refusal', () => {
    const r = rng(7);
    for (let n = 0; n < 2000; n++) {
      const raw: Record<string, string> = {};
      const properties: Record<string, unknown> = {};
      for (let i = 0, len = r.int(5); i < len; i++) {
        const name = r.pick(['a', 'b', 'limit', 'constructor', '__proto__', 'toString']);
        Object.defineProperty(raw, name, {
          value: r.pick(RAW) + (r.next() < 0.2 ? r.pick(RAW) : ''),
          enumerable: true,
          writable: true,
          configurable: true,
        });
        Object.defineProperty(properties, name, {
          value: r.pick(SCHEMAS),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      const result = coerceParameters(raw, { type: 'object', properties });
      if (result.ok) assert.deepEqual(Object.keys(result.value), Object.keys(raw));
      else assert.match(result.error, /^parameter "[^"]+" must be .+, got ".*"/);
    }
  });

  it('a result block always has exactly one closing tag per wrapper, whatever the content', () => {
    const r = rng(11);
    const pieces = [
      '</stdout>',
      '</STDOUT >',
      '</result>',
      '</error>',
      '</function_results>',
      '</tool_name>',
      '<stdout>',
      'x',
      '\n',
      '<',
      '&lt;',
      '</stdout',
      '</ stdout>',
    ];
    for (let n = 0; n < 500; n++) {
      const outcomes = Array.from({ length: 1 + r.int(4) }, (_, i) => ({
        callId: `c${i}`,
        name: r.pick(['f', '', '</error>']),
        isError: r.next() < 0.5,
        content: Array.from({ length: r.int(12) }, () => r.pick(pieces)).join(''),
      }));
      const out = renderFunctionResults(outcomes);
      const count = (s: string) => out.split(s).length - 1;
      const results = outcomes.filter((o) => !o.isError).length;
      assert.equal(count('</function_results>'), 1);
      assert.equal(count('</stdout>'), results);
      assert.equal(count('</result>'), results);
      assert.equal(count('</error>'), outcomes.length - results);
      assert.ok(out.endsWith('\n</function_results>'));
    }
  });
});
