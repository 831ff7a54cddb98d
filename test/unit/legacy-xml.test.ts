// Unit tests for the legacy prompt-based XML tool-use protocol (workflows/protocols/legacy-xml.ts). Pure: no Temporal.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ContentBlock } from '@anthropic-ai/sdk/resources/messages';
import {
  LEGACY_STOP_SEQUENCE,
  coerceParameters,
  extractAnswer,
  legacyXmlProtocol,
  parseFunctionCalls,
  renderFunctionResults,
  renderToolsPrompt,
} from '../../common/protocols/legacy-xml';
import type { ModelReply, ToolDescription } from '../../common/protocols/types';

// ---------------------------------------------------------------------------------------------------------------
// The documentation's General Motors example (the XML is identical in every translation of the page).

const DOC_FIRST_REPLY = `<scratchpad>
To answer this question, I will need to:
1. Get the ticker symbol for General Motors using the get_ticker_symbol() function.
2. Use the returned ticker symbol to get the current stock price using the get_current_stock_price() function.
</scratchpad>

<function_calls>
<invoke>
<tool_name>get_ticker_symbol</tool_name>
<parameters>
<company_name>General Motors</company_name>
</parameters>
</invoke>
`;

const DOC_FIRST_RESULTS = `<function_results>
<result>
<tool_name>get_ticker_symbol</tool_name>
<stdout>
GM
</stdout>
</result>
</function_results>`;

const DOC_SECOND_REPLY = `<function_calls>
<invoke>
<tool_name>get_current_stock_price</tool_name>
<parameters>
<symbol>GM</symbol>
</parameters>
</invoke>
`;

const DOC_SECOND_RESULTS = `<function_results>
<result>
<tool_name>get_current_stock_price</tool_name>
<stdout>
38.50
</stdout>
</result>
</function_results>`;

const DOC_FINAL_REPLY = `<answer>
The current stock price of General Motors is $38.50.
</answer>`;

const DOC_TOOLS: ToolDescription[] = [
  {
    name: 'get_current_stock_price',
    description: 'Gets the current stock price for a company.',
    returns: 'float: The current stock price.',
    raises: ['ValueError: if the input symbol is invalid/unknown.'],
    input_schema: {
      type: 'object',
      properties: { symbol: { type: 'string', description: 'The stock symbol of the company to get the price for.' } },
      required: ['symbol'],
    },
  },
  {
    name: 'get_ticker_symbol',
    description: 'Gets the stock ticker symbol for a company searched by name.',
    returns: 'str: The ticker symbol for the company stock.',
    raises: ['TickerNotFound: if no matching ticker symbol is found.'],
    input_schema: {
      type: 'object',
      properties: { company_name: { type: 'string', description: 'The name of the company.' } },
      required: ['company_name'],
    },
  },
];

function textBlock(text: string): ContentBlock {
  return { type: 'text', text, citations: null };
}

function reply(text: string | string[], stop: 'sequence' | 'end_turn' | 'max_tokens' = 'sequence'): ModelReply {
  return {
    content: (Array.isArray(text) ? text : [text]).map(textBlock),
    stop_reason: stop === 'sequence' ? 'stop_sequence' : stop,
    stop_sequence: stop === 'sequence' ? LEGACY_STOP_SEQUENCE : null,
  };
}

/** A block in the documented layout, without the swallowed `</function_calls>`. */
function block(...invokes: [string, Record<string, string>][]): string {
  const parts = ['<function_calls>'];
  for (const [name, params] of invokes) {
    parts.push('<invoke>', `<tool_name>${name}</tool_name>`, '<parameters>');
    for (const [k, v] of Object.entries(params)) parts.push(`<${k}>${v}</${k}>`);
    parts.push('</parameters>', '</invoke>');
  }
  return `${parts.join('\n')}\n`;
}

/** The single invoke of a one-invoke block, asserting the parse found a block. */
function only(text: string) {
  const parsed = parseFunctionCalls(text);
  assert.ok(parsed, 'expected a <function_calls> block');
  assert.equal(parsed.calls.length, 1, `expected one invoke, got ${JSON.stringify(parsed.calls)}`);
  return parsed.calls[0]!;
}

function params(text: string): Record<string, string> {
  const call = only(text);
  assert.equal(call.error, undefined, `unexpected error: ${call.error}`);
  return call.parameters;
}

// ---------------------------------------------------------------------------------------------------------------

describe('LEGACY_STOP_SEQUENCE', () => {
  it('is the closing tag of the function_calls block', () => {
    assert.equal(LEGACY_STOP_SEQUENCE, '</function_calls>');
  });
});

describe('parseFunctionCalls: the documented format', () => {
  it("reads the documentation's first call, whose </function_calls> the API swallowed", () => {
    const parsed = parseFunctionCalls(DOC_FIRST_REPLY);
    assert.ok(parsed);
    assert.deepEqual(parsed.calls, [
      { index: 0, name: 'get_ticker_symbol', parameters: { company_name: 'General Motors' } },
    ]);
    assert.deepEqual(parsed.errors, []);
    assert.ok(parsed.before.startsWith('<scratchpad>') && parsed.before.endsWith('</scratchpad>\n\n'));
    assert.equal(parsed.end, DOC_FIRST_REPLY.length);
  });

  it('returns null when the text has no <function_calls> block', () => {
    assert.equal(parseFunctionCalls('The answer is 42.'), null);
    assert.equal(parseFunctionCalls(''), null);
    assert.equal(parseFunctionCalls('<invoke><tool_name>x</tool_name></invoke>'), null);
  });

  it('reads several invokes of one block, in order', () => {
    const parsed = parseFunctionCalls(block(['a', { x: '1' }], ['b', { y: '2', z: '3' }], ['a', { x: '4' }]));
    assert.ok(parsed);
    assert.deepEqual(
      parsed.calls.map((c) => [c.index, c.name, c.parameters]),
      [
        [0, 'a', { x: '1' }],
        [1, 'b', { y: '2', z: '3' }],
        [2, 'a', { x: '4' }],
      ],
    );
    assert.deepEqual(parsed.errors, []);
  });

  it('ends the block at a written </function_calls> and ignores what follows', () => {
    const text = `${block(['a', { x: '1' }])}</function_calls>\n<function_results>imagined</function_results>`;
    const parsed = parseFunctionCalls(text);
    assert.ok(parsed);
    assert.deepEqual(
      parsed.calls.map((c) => c.parameters),
      [{ x: '1' }],
    );
    assert.equal(parsed.end, text.indexOf('</function_calls>'));
  });

  it('reads a block written on one line', () => {
    const parsed = parseFunctionCalls(
      '<function_calls><invoke><tool_name>a</tool_name><parameters><x>1</x><y>2</y></parameters></invoke>' +
        '<invoke><tool_name>b</tool_name><parameters><z>3</z></parameters></invoke></function_calls>',
    );
    assert.ok(parsed);
    assert.deepEqual(
      parsed.calls.map((c) => [c.name, c.parameters]),
      [
        ['a', { x: '1', y: '2' }],
        ['b', { z: '3' }],
      ],
    );
  });

  it('takes the first <function_calls> followed by an <invoke>, skipping mentions in prose', () => {
    const text = `I will use a <function_calls> block now.\n${block(['a', { x: '1' }])}`;
    const parsed = parseFunctionCalls(text);
    assert.ok(parsed);
    assert.equal(parsed.before, 'I will use a <function_calls> block now.\n');
    assert.deepEqual(
      parsed.calls.map((c) => c.parameters),
      [{ x: '1' }],
    );
  });

  it('reads a tool with no parameters, with or without an empty <parameters>', () => {
    const a = parseFunctionCalls(
      '<function_calls>\n<invoke>\n<tool_name>now</tool_name>\n<parameters>\n</parameters>\n</invoke>\n',
    );
    const b = parseFunctionCalls('<function_calls>\n<invoke>\n<tool_name>now</tool_name>\n</invoke>\n');
    for (const parsed of [a, b]) {
      assert.ok(parsed);
      assert.deepEqual(parsed.calls, [{ index: 0, name: 'now', parameters: {} }]);
    }
  });

  it('reads parameters written without the <parameters> wrapper', () => {
    assert.deepEqual(params('<function_calls>\n<invoke>\n<tool_name>a</tool_name>\n<x>1</x>\n</invoke>\n'), { x: '1' });
  });
});

describe('parseFunctionCalls: values', () => {
  it('a value containing `<` and `&` survives parsing', () => {
    assert.deepEqual(params(block(['f', { expr: 'a < b && c > d', amp: 'AT&T &amp; co', lt: '<<<< >>>>' }])), {
      expr: 'a < b && c > d',
      amp: 'AT&T &amp; co',
      lt: '<<<< >>>>',
    });
  });

  it('markup inside a value is kept verbatim', () => {
    const html = '<p>Hello <b>bold</b> <i>it</i><br/><a href="x">link</a></p>\n<ul><li>1</li></ul>';
    assert.deepEqual(params(block(['write', { path: 'a.html', html }])), { path: 'a.html', html });
  });

  it("a closing-tag lookalike of the parameter's own name, followed by more text, stays in the value", () => {
    assert.deepEqual(params(block(['f', { company_name: 'The </company_name> Company', n: '1' }])), {
      company_name: 'The </company_name> Company',
      n: '1',
    });
  });

  it('the value runs to the last own closing tag before the next parameter', () => {
    const text =
      '<function_calls>\n<invoke>\n<tool_name>f</tool_name>\n<parameters>\n' +
      '<a>x</a>\n<b>bold</b> and more</a>\n<c>3</c>\n</parameters>\n</invoke>\n';
    // The first </a> is followed by <b>…</b> and prose, which does not read as parameters: it is part of the value.
    assert.deepEqual(params(text), { a: 'x</a>\n<b>bold</b> and more', c: '3' });
  });

  it('nested tags of the same name inside a value are balanced', () => {
    const content = '<content>one</content>\n<content>two</content>';
    assert.deepEqual(params(block(['f', { content, other: 'z' }])), { content, other: 'z' });
  });

  it('an unbalanced opening tag of the same name inside a value does not hide the closing tag', () => {
    assert.deepEqual(params(block(['f', { p: 'write <p> to start a paragraph', q: '2' }])), {
      p: 'write <p> to start a paragraph',
      q: '2',
    });
  });

  it("another parameter's closing tag inside a value stays in the value", () => {
    assert.deepEqual(params(block(['f', { a: '1', b: 'not </a> the end', c: '</b></a>!' }])), {
      a: '1',
      b: 'not </a> the end',
      c: '</b></a>!',
    });
  });

  it('the format’s own tags inside a value stay in the value unless they read as the start of another invoke', () => {
    const doc = 'close with </parameters> then </invoke>; open with <invoke> and <tool_name>';
    assert.deepEqual(params(block(['f', { doc, n: '1' }])), { doc, n: '1' });
    // `</invoke>` then `<invoke>` right before `<tool_name>` is where a new call starts (rule 2): the value is split.
    const parsed = parseFunctionCalls(block(['f', { doc: 'a </invoke> then <invoke><tool_name>g</tool_name>' }]));
    assert.equal(parsed?.calls.length, 2);
    assert.match(parsed?.calls[0]?.error ?? '', /parameter <doc> is not closed/);
  });

  it('`</function_calls>` cannot be inside a value: the API stops there, so the block ends there', () => {
    const text =
      '<function_calls>\n<invoke>\n<tool_name>f</tool_name>\n<parameters>\n<doc>end with </function_calls> ok</doc>\n';
    const call = only(text);
    assert.match(call.error ?? '', /parameter <doc> is not closed/);
  });

  it('trims one newline around a value and keeps every other whitespace', () => {
    const text =
      '<function_calls>\n<invoke>\n<tool_name>\n  f \n</tool_name>\n<parameters>\n' +
      '<a>\nline 1\n  line 2\n</a>\n<b>\n\n two newlines \n\n</b>\n<c>  spaces  </c>\n<d>\t</d>\n<e></e>\n</parameters>\n</invoke>\n';
    const call = only(text);
    assert.equal(call.name, 'f');
    assert.deepEqual(call.parameters, {
      a: 'line 1\n  line 2',
      b: '\n two newlines \n',
      c: '  spaces  ',
      d: '\t',
      e: '',
    });
  });

  it('treats CRLF line ends like LF ones', () => {
    const text =
      '<function_calls>\r\n<invoke>\r\n<tool_name>f</tool_name>\r\n<parameters>\r\n' +
      '<a>\r\nline 1\r\nline 2\r\n</a>\r\n<b>2</b>\r\n</parameters>\r\n</invoke>\r\n';
    assert.deepEqual(params(text), { a: 'line 1\r\nline 2', b: '2' });
  });

  it('unwraps CDATA sections, inside which tag lookalikes are plain text', () => {
    const text =
      '<function_calls>\n<invoke>\n<tool_name>f</tool_name>\n<parameters>\n' +
      '<code><![CDATA[if (a </code> b) { </parameters></invoke> }]]></code>\n' +
      '<mixed>x <![CDATA[<y>]]> z</mixed>\n</parameters>\n</invoke>\n';
    assert.deepEqual(params(text), { code: 'if (a </code> b) { </parameters></invoke> }', mixed: 'x <y> z' });
  });

  it('does not decode entities: the model writes values raw', () => {
    assert.deepEqual(params(block(['f', { a: '&lt;tag&gt; &amp;' }])), { a: '&lt;tag&gt; &amp;' });
  });

  it('reads parameters named like the format’s own tags', () => {
    const text =
      '<function_calls>\n<invoke>\n<tool_name>f</tool_name>\n<parameters>\n' +
      '<parameters>{"a":1}</parameters>\n<tool_name>n</tool_name>\n<invoke>i</invoke>\n</parameters>\n</invoke>\n';
    assert.deepEqual(params(text), { parameters: '{"a":1}', tool_name: 'n', invoke: 'i' });
  });

  it('keeps a parameter called __proto__ as an own property', () => {
    const p = params(
      '<function_calls>\n<invoke>\n<tool_name>f</tool_name>\n<parameters>\n' +
        '<__proto__>x</__proto__>\n<constructor>y</constructor>\n</parameters>\n</invoke>\n',
    );
    assert.deepEqual(Object.keys(p), ['__proto__', 'constructor']);
    assert.equal(Object.getPrototypeOf(p), Object.prototype);
    assert.equal(Object.getOwnPropertyDescriptor(p, '__proto__')?.value, 'x');
  });
});

describe('parseFunctionCalls: truncated and malformed blocks', () => {
  it('reads complete parameters when </parameters> and </invoke> are missing', () => {
    const text = '<function_calls>\n<invoke>\n<tool_name>f</tool_name>\n<parameters>\n<a>1</a>\n<b>2</b>\n';
    const parsed = parseFunctionCalls(text);
    assert.ok(parsed);
    assert.deepEqual(parsed.calls, [{ index: 0, name: 'f', parameters: { a: '1', b: '2' } }]);
    assert.deepEqual(parsed.errors, []);
  });

  it('reads an invoke whose </parameters> is missing before </invoke>', () => {
    assert.deepEqual(
      params('<function_calls>\n<invoke>\n<tool_name>f</tool_name>\n<parameters>\n<a>1</a>\n</invoke>\n'),
      { a: '1' },
    );
  });

  it('reads the next invoke when </invoke> is missing between two', () => {
    const text =
      '<function_calls>\n<invoke>\n<tool_name>f</tool_name>\n<parameters>\n<a>1</a>\n</parameters>\n' +
      '<invoke>\n<tool_name>g</tool_name>\n<parameters>\n<b>2</b>\n</parameters>\n</invoke>\n';
    const parsed = parseFunctionCalls(text);
    assert.ok(parsed);
    assert.deepEqual(
      parsed.calls.map((c) => [c.name, c.parameters, c.error]),
      [
        ['f', { a: '1' }, undefined],
        ['g', { b: '2' }, undefined],
      ],
    );
  });

  it('text after </invoke> or </parameters> is reported but does not spoil the invoke', () => {
    const text =
      '<function_calls>\n<invoke>\n<tool_name>f</tool_name>\n<parameters>\n<a>1</a>\n</parameters>\nhm\n</invoke>\n' +
      'Now the second:\n<invoke>\n<tool_name>g</tool_name>\n<parameters>\n<b>2</b>\n</parameters>\n</invoke>\nI will wait.\n';
    const parsed = parseFunctionCalls(text);
    assert.ok(parsed);
    assert.deepEqual(parsed.calls, [
      { index: 0, name: 'f', parameters: { a: '1' } },
      { index: 1, name: 'g', parameters: { b: '2' } },
    ]);
    assert.deepEqual(parsed.errors, [
      'unexpected text after </parameters> in invoke 1: "hm"',
      'unexpected text after invoke 1: "Now the second:"',
      'unexpected text after invoke 2: "I will wait."',
    ]);
    const reading = legacyXmlProtocol.readReply(reply(text), 0);
    assert.deepEqual(
      reading.toolCalls.map((c) => c.malformed),
      [undefined, undefined],
    );
  });

  it('an invoke with no tool_name is an error entry, not a throw, and the other invokes still read', () => {
    const text =
      '<function_calls>\n<invoke>\n<parameters>\n<a>1</a>\n</parameters>\n</invoke>\n' +
      '<invoke>\n<tool_name>g</tool_name>\n<parameters>\n<b>2</b>\n</parameters>\n</invoke>\n';
    const parsed = parseFunctionCalls(text);
    assert.ok(parsed);
    assert.equal(parsed.calls.length, 2);
    assert.equal(parsed.calls[0]!.name, '');
    assert.match(parsed.calls[0]!.error ?? '', /no <tool_name>/);
    assert.deepEqual(parsed.calls[1], { index: 1, name: 'g', parameters: { b: '2' } });
    assert.deepEqual(parsed.errors, ['invoke 1: it has no <tool_name>']);
  });

  it('an empty or unclosed tool_name is an error', () => {
    assert.match(only('<function_calls><invoke><tool_name> </tool_name></invoke>').error ?? '', /<tool_name> is empty/);
    assert.match(only('<function_calls><invoke><tool_name>f').error ?? '', /<tool_name> is not closed/);
  });

  it('a parameter given twice is an error, and the first value is kept', () => {
    const call = only(block(['f', { a: '1' }]).replace('<a>1</a>', '<a>1</a>\n<b>x</b>\n<a>2</a>'));
    assert.equal(call.error, 'parameter <a> is given more than once');
    assert.deepEqual(call.parameters, { a: '1', b: 'x' });
  });

  it('a parameter cut off mid-value is an error that mentions the cut', () => {
    const call = only('<function_calls>\n<invoke>\n<tool_name>f</tool_name>\n<parameters>\n<a>1</a>\n<b>half a val');
    assert.deepEqual(call.parameters, { a: '1' });
    assert.equal(call.error, 'parameter <b> is not closed (the output may have been cut short)');
  });

  it('stray text between parameters is an error', () => {
    const call = only(
      '<function_calls>\n<invoke>\n<tool_name>f</tool_name>\n<parameters>\n<a>1</a>, and\n<b>2</b>\n</parameters>\n</invoke>\n',
    );
    assert.match(call.error ?? '', /unexpected text between parameters: "?, and"?/);
  });

  it('an empty block reports that it contains no <invoke>', () => {
    const parsed = parseFunctionCalls('Let me look.\n<function_calls>\n');
    assert.ok(parsed);
    assert.deepEqual(parsed.calls, []);
    assert.match(parsed.errors[0] ?? '', /contains no <invoke>/);
  });

  it('spells out at most a handful of problems per invoke and counts the rest', () => {
    const call = only(
      `<function_calls><invoke><tool_name>f</tool_name><parameters>${'</x>'.repeat(50)}</parameters></invoke>`,
    );
    assert.match(call.error ?? '', /^(unexpected <\/x>; ){5}and 45 more problems$/);
  });

  it('never throws on garbage around the tags', () => {
    for (const text of [
      '<function_calls>',
      '<function_calls><invoke>',
      '<function_calls></invoke></parameters><<>>',
      '<function_calls><invoke><tool_name>a</tool_name><parameters><a><![CDATA[',
      '<function_calls>\0\u{1F600}<a\u0301>',
    ]) {
      assert.doesNotThrow(() => parseFunctionCalls(text));
    }
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe('coerceParameters', () => {
  const schema: ToolDescription['input_schema'] = {
    type: 'object',
    properties: {
      s: { type: 'string' },
      i: { type: 'integer' },
      n: { type: 'number' },
      b: { type: 'boolean' },
      a: { type: 'array', items: { type: 'string' } },
      o: { type: 'object' },
      z: { type: 'null' },
      sn: { type: ['string', 'null'] },
      inull: { type: ['integer', 'null'] },
      any: { anyOf: [{ type: 'integer' }, { type: 'string' }] },
      num: { oneOf: [{ type: 'integer' }, { type: 'number' }] },
      en: { enum: [1, 2, 3] },
      es: { enum: ['a', 'b'] },
      untyped: { description: 'anything' },
    },
  };
  const ok = (name: string, raw: string): unknown => {
    const r = coerceParameters({ [name]: raw }, schema);
    assert.ok(r.ok, `expected ${name}=${JSON.stringify(raw)} to coerce, got ${r.ok ? '' : r.error}`);
    return r.value[name];
  };
  const bad = (name: string, raw: string): string => {
    const r = coerceParameters({ [name]: raw }, schema);
    assert.ok(!r.ok, `expected ${name}=${JSON.stringify(raw)} to fail, got ${JSON.stringify(r.ok && r.value)}`);
    return r.error;
  };

  it('keeps a string exactly as written', () => {
    assert.equal(ok('s', '  two  spaces \n'), '  two  spaces \n');
    assert.equal(ok('s', '42'), '42');
    assert.equal(ok('s', ''), '');
  });

  it('reads integers in strict integer syntax', () => {
    assert.equal(ok('i', '42'), 42);
    assert.equal(ok('i', '-7'), -7);
    assert.equal(ok('i', '+3'), 3);
    assert.equal(ok('i', ' 10\n'), 10);
    assert.equal(ok('i', '-0'), 0);
    assert.ok(Object.is(ok('i', '-0'), 0));
  });

  it('refuses non-integers with a message the model can act on', () => {
    assert.equal(bad('i', 'ten'), 'parameter "i" must be an integer, got "ten"');
    assert.equal(bad('i', '4.5'), 'parameter "i" must be an integer, got "4.5" (no fraction or exponent)');
    assert.equal(bad('i', '1e3'), 'parameter "i" must be an integer, got "1e3" (no fraction or exponent)');
    assert.equal(bad('i', '0x10'), 'parameter "i" must be an integer, got "0x10"');
    assert.equal(bad('i', ''), 'parameter "i" must be an integer, got ""');
    assert.equal(
      bad('i', '99999999999999999999'),
      'parameter "i" must be an integer, got "99999999999999999999" (too large)',
    );
  });

  it('uses the parameter name in the error, as in `parameter "limit" must be an integer, got "ten"`', () => {
    const r = coerceParameters({ limit: 'ten' }, { type: 'object', properties: { limit: { type: 'integer' } } });
    assert.deepEqual(r, { ok: false, error: 'parameter "limit" must be an integer, got "ten"' });
  });

  it('reads numbers in decimal notation', () => {
    assert.equal(ok('n', '3.14'), 3.14);
    assert.equal(ok('n', '-0.5'), -0.5);
    assert.equal(ok('n', '.5'), 0.5);
    assert.equal(ok('n', '1e-3'), 0.001);
    assert.equal(ok('n', '10'), 10);
    assert.equal(ok('n', ' 38.50 '), 38.5);
  });

  it('refuses NaN, Infinity, hex and words as numbers', () => {
    for (const raw of ['NaN', 'Infinity', '-Infinity', '0x10', 'abc', '', '1,000', '1e999']) {
      assert.equal(bad('n', raw), `parameter "n" must be a number, got ${JSON.stringify(raw)}`);
    }
  });

  it('reads booleans as true/false in any case and refuses 1/0/yes/no', () => {
    assert.equal(ok('b', 'true'), true);
    assert.equal(ok('b', 'FALSE'), false);
    assert.equal(ok('b', ' True\n'), true);
    for (const raw of ['1', '0', 'yes', 'no', '']) {
      assert.equal(bad('b', raw), `parameter "b" must be true or false, got ${JSON.stringify(raw)}`);
    }
  });

  it('reads arrays and objects as JSON of that shape', () => {
    assert.deepEqual(ok('a', '["x", "y"]'), ['x', 'y']);
    assert.deepEqual(ok('a', '\n[]\n'), []);
    assert.deepEqual(ok('o', '{"k": [1, {"n": null}]}'), { k: [1, { n: null }] });
  });

  it('refuses bad JSON and JSON of the wrong shape', () => {
    assert.equal(bad('a', '["x", "y"'), 'parameter "a" must be a JSON array, got "[\\"x\\", \\"y\\"" (not valid JSON)');
    assert.equal(bad('a', 'x, y'), 'parameter "a" must be a JSON array, got "x, y"');
    assert.equal(bad('a', '{"a":1}'), 'parameter "a" must be a JSON array, got "{\\"a\\":1}"');
    assert.equal(bad('o', '[1]'), 'parameter "o" must be a JSON object, got "[1]"');
    assert.equal(bad('o', '{a: 1}'), 'parameter "o" must be a JSON object, got "{a: 1}" (not valid JSON)');
    assert.equal(bad('o', 'null'), 'parameter "o" must be a JSON object, got "null"');
  });

  it('keeps a parsed object safe from __proto__ keys', () => {
    const v = ok('o', '{"__proto__": {"polluted": true}}') as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(v), Object.prototype);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('reads null, and an empty value as null when a string is not allowed', () => {
    assert.equal(ok('z', 'null'), null);
    assert.equal(ok('z', ''), null);
    assert.equal(bad('z', 'nil'), 'parameter "z" must be null, got "nil"');
  });

  it('handles a type union: null first, then the other types, string last', () => {
    assert.equal(ok('sn', 'null'), null);
    assert.equal(ok('sn', 'x'), 'x');
    assert.equal(ok('sn', ''), '');
    assert.equal(ok('inull', '5'), 5);
    assert.equal(ok('inull', ''), null);
    assert.equal(bad('inull', 'five'), 'parameter "inull" must be null or an integer, got "five"');
  });

  it('handles anyOf and oneOf by the types of their branches', () => {
    assert.equal(ok('any', '5'), 5);
    assert.equal(ok('any', 'five'), 'five');
    assert.equal(ok('num', '5'), 5);
    assert.equal(ok('num', '5.5'), 5.5);
    assert.equal(bad('num', 'x'), 'parameter "num" must be an integer or a number, got "x"');
  });

  it('infers the type of an untyped enum from its values', () => {
    assert.equal(ok('en', '2'), 2);
    assert.equal(ok('es', 'a'), 'a');
  });

  it('passes unknown and untyped parameters through as strings', () => {
    const r = coerceParameters({ extra: '5', untyped: '[1]' }, schema);
    assert.deepEqual(r, { ok: true, value: { extra: '5', untyped: '[1]' } });
    assert.deepEqual(coerceParameters({ x: '1' }, { type: 'object' }), { ok: true, value: { x: '1' } });
  });

  it('does not mistake inherited names for declared parameters', () => {
    const r = coerceParameters(
      Object.fromEntries([
        ['constructor', '1'],
        ['__proto__', '2'],
        ['toString', '3'],
      ]),
      schema,
    );
    assert.ok(r.ok);
    assert.deepEqual(Object.entries(r.value), [
      ['constructor', '1'],
      ['__proto__', '2'],
      ['toString', '3'],
    ]);
  });

  it('reports every bad parameter at once', () => {
    const r = coerceParameters({ i: 'x', s: 'fine', b: 'maybe' }, schema);
    assert.deepEqual(r, {
      ok: false,
      error: 'parameter "i" must be an integer, got "x"; parameter "b" must be true or false, got "maybe"',
    });
  });

  it('shortens a long bad value in the message', () => {
    const error = bad('i', 'x'.repeat(1000));
    assert.ok(error.length < 120, error);
    assert.ok(error.endsWith('…"'));
  });
});

// ---------------------------------------------------------------------------------------------------------------

/** Reads the rendered tools back with plain regexes: possible only because every text inside is escaped. */
function readTools(prompt: string) {
  const tools = /<tools>\n([\s\S]*)\n<\/tools>/.exec(prompt);
  assert.ok(tools, 'no <tools> section');
  const unescape = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  return [...tools[1]!.matchAll(/<tool_description>\n([\s\S]*?)\n<\/tool_description>/g)].map(([, body]) => {
    const m =
      /^<tool_name>([^<]*)<\/tool_name>\n<description>\n([^<]*)\n<\/description>\n<parameters>\n?([\s\S]*?)<\/parameters>$/.exec(
        body!,
      );
    assert.ok(m, `unexpected tool_description layout:\n${body}`);
    const parameters = [
      ...m[3]!.matchAll(
        /<parameter>\n<name>([^<]*)<\/name>\n<type>([^<]*)<\/type>\n<description>([^<]*)<\/description>\n<\/parameter>\n/g,
      ),
    ].map(([, name, type, description]) => ({
      name: unescape(name!),
      type: unescape(type!),
      description: unescape(description!),
    }));
    const rest = m[3]!.replace(/<parameter>\n[\s\S]*?<\/parameter>\n/g, '');
    assert.equal(rest, '', 'stray text in <parameters>');
    return { name: unescape(m[1]!), description: unescape(m[2]!), parameters };
  });
}

describe('renderToolsPrompt', () => {
  const prompt = renderToolsPrompt(DOC_TOOLS);

  it('opens with the documented intro and call template', () => {
    assert.ok(
      prompt.startsWith(
        "In this environment you have access to a set of tools you can use to answer the user's question.\n\nYou may call them like this:\n<function_calls>\n<invoke>\n<tool_name>$TOOL_NAME</tool_name>\n<parameters>\n<$PARAMETER_NAME>$PARAMETER_VALUE</$PARAMETER_NAME>\n...\n</parameters>\n</invoke>\n</function_calls>\n\nHere are the tools available:\n<tools>\n<tool_description>\n",
      ),
      prompt,
    );
  });

  it('describes get_current_stock_price and get_ticker_symbol with name, type, description, returns and raises', () => {
    assert.deepEqual(readTools(prompt), [
      {
        name: 'get_current_stock_price',
        description:
          'Gets the current stock price for a company.\nReturns: float: The current stock price.\n' +
          'Raises: ValueError: if the input symbol is invalid/unknown.',
        parameters: [
          { name: 'symbol', type: 'string', description: 'The stock symbol of the company to get the price for.' },
        ],
      },
      {
        name: 'get_ticker_symbol',
        description:
          'Gets the stock ticker symbol for a company searched by name.\n' +
          'Returns: str: The ticker symbol for the company stock.\nRaises: TickerNotFound: if no matching ticker symbol is found.',
        parameters: [{ name: 'company_name', type: 'string', description: 'The name of the company.' }],
      },
    ]);
  });

  it('explains how results and errors come back and where the final answer goes', () => {
    const after = prompt.slice(prompt.indexOf('</tools>'));
    for (const s of [
      '<function_results>',
      '<result>',
      '<stdout>',
      '<error>',
      '<answer></answer>',
      'same order',
      'JSON',
    ]) {
      assert.ok(after.includes(s), `missing ${s}`);
    }
  });

  it('marks optional parameters, JSON-valued arrays and objects, enums, defaults and unions', () => {
    const [tool] = readTools(
      renderToolsPrompt([
        {
          name: 'search',
          description: 'Searches.',
          input_schema: {
            type: 'object',
            properties: {
              query: { type: 'string', description: 'What to look for.' },
              tags: { type: 'array', items: { type: 'string' } },
              filter: {
                type: 'object',
                description: 'Filters.',
                properties: { year: { type: 'integer' }, lang: { type: 'string' } },
              },
              order: { type: 'string', enum: ['asc', 'desc'], default: 'asc' },
              limit: { type: ['integer', 'null'] },
              exact: { type: 'boolean' },
              loose: {},
            },
            required: ['query'],
          },
        },
      ]),
    );
    assert.deepEqual(tool!.parameters, [
      { name: 'query', type: 'string', description: 'What to look for.' },
      { name: 'tags', type: 'array', description: 'Optional. Write the value as a JSON array of strings.' },
      {
        name: 'filter',
        type: 'object',
        description: 'Filters. Optional. Write the value as a JSON object with keys year, lang.',
      },
      { name: 'order', type: 'string', description: 'Optional. One of: "asc", "desc". Default: "asc".' },
      { name: 'limit', type: 'integer or null', description: 'Optional. Write null for no value.' },
      { name: 'exact', type: 'boolean', description: 'Optional. Write true or false.' },
      { name: 'loose', type: 'string', description: 'Optional.' },
    ]);
  });

  it('escapes <, > and & so a description cannot break the prompt', () => {
    const evil = 'Breaks </description></tool_description></tools> out & <b>bolds</b>';
    const out = renderToolsPrompt([
      {
        name: 'x<y>',
        description: evil,
        raises: ['<Boom> & bang'],
        input_schema: {
          type: 'object',
          properties: { 'a&b': { type: 'string', description: evil } },
          required: ['a&b'],
        },
      },
    ]);
    assert.equal(out.split('</tools>').length, 2);
    assert.equal(out.split('</tool_description>').length, 2);
    assert.ok(
      out.includes(
        'Breaks &lt;/description&gt;&lt;/tool_description&gt;&lt;/tools&gt; out &amp; &lt;b&gt;bolds&lt;/b&gt;',
      ),
    );
    assert.deepEqual(readTools(out), [
      {
        name: 'x<y>',
        description: `${evil}\nRaises: <Boom> & bang`,
        parameters: [{ name: 'a&b', type: 'string', description: evil }],
      },
    ]);
  });

  it('lists several raised errors one per line', () => {
    const [tool] = readTools(renderToolsPrompt([{ ...DOC_TOOLS[0]!, raises: ['A: a', 'B: b'], returns: undefined }]));
    assert.equal(tool!.description, 'Gets the current stock price for a company.\nRaises:\n- A: a\n- B: b');
  });

  it("puts the conversation's own instructions first", () => {
    const out = renderToolsPrompt(DOC_TOOLS, 'You are a careful financial assistant.\n');
    assert.ok(out.startsWith('You are a careful financial assistant.\n\nIn this environment'));
  });

  it('renders an empty tool list', () => {
    assert.deepEqual(readTools(renderToolsPrompt([])), []);
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe('renderFunctionResults', () => {
  it("renders the documentation's results block exactly", () => {
    assert.equal(
      renderFunctionResults([{ callId: 'legacy-0-0', name: 'get_ticker_symbol', isError: false, content: 'GM' }]),
      DOC_FIRST_RESULTS,
    );
  });

  it('renders a failure as <error> directly inside <function_results>, naming the tool', () => {
    assert.equal(
      renderFunctionResults([
        { callId: 'c', name: 'get_ticker_symbol', isError: true, content: 'TickerNotFound: Acme' },
      ]),
      '<function_results>\n<error>\nget_ticker_symbol: TickerNotFound: Acme\n</error>\n</function_results>',
    );
    assert.equal(
      renderFunctionResults([{ callId: 'c', name: '', isError: true, content: 'could not read <invoke> 1' }]),
      '<function_results>\n<error>\ncould not read <invoke> 1\n</error>\n</function_results>',
    );
  });

  it('answers several calls in order, mixing results and errors', () => {
    const out = renderFunctionResults([
      { callId: 'a', name: 'one', isError: false, content: '1' },
      { callId: 'b', name: 'two', isError: true, content: 'boom' },
      { callId: 'c', name: 'three', isError: false, content: '3' },
    ]);
    assert.equal(
      out,
      '<function_results>\n<result>\n<tool_name>one</tool_name>\n<stdout>\n1\n</stdout>\n</result>\n' +
        '<error>\ntwo: boom\n</error>\n<result>\n<tool_name>three</tool_name>\n<stdout>\n3\n</stdout>\n</result>\n</function_results>',
    );
  });

  it('neutralises closing tags in content that would end the block early, and nothing else', () => {
    const content =
      'a </stdout> b </STDOUT > c </result></function_results></error></tool_name> <b>x</b> &amp; </stdoutx>';
    const out = renderFunctionResults([
      { callId: 'a', name: 'f', isError: false, content },
      { callId: 'b', name: 'g', isError: true, content },
    ]);
    assert.equal(out.match(/<\/stdout>/g)?.length, 1);
    assert.equal(out.match(/<\/function_results>/g)?.length, 1);
    assert.equal(out.match(/<\/error>/g)?.length, 1);
    assert.ok(
      out.includes(
        'a &lt;/stdout> b &lt;/STDOUT > c &lt;/result>&lt;/function_results>&lt;/error>&lt;/tool_name> <b>x</b> &amp; </stdoutx>',
      ),
    );
  });

  it('renders no outcomes as an empty block', () => {
    assert.equal(renderFunctionResults([]), '<function_results>\n</function_results>');
  });
});

describe('extractAnswer', () => {
  it('returns the content of the last <answer>, trimmed', () => {
    assert.equal(extractAnswer(DOC_FINAL_REPLY), 'The current stock price of General Motors is $38.50.');
    assert.equal(extractAnswer('<answer>draft</answer> hmm <answer>\n final \n</answer> bye'), 'final');
  });

  it('reads an unclosed <answer> to the end', () => {
    assert.equal(extractAnswer('ok <answer> 42'), '42');
  });

  it('without <answer>, drops the function_calls block and the scratchpad', () => {
    assert.equal(extractAnswer(DOC_FIRST_REPLY), '');
    assert.equal(extractAnswer('<scratchpad>think</scratchpad>\nIt is 42.\n<function_calls>\n<invoke>'), 'It is 42.');
    assert.equal(extractAnswer('Plain words.'), 'Plain words.');
  });

  it('keeps a <function_calls> mentioned in prose', () => {
    assert.equal(
      extractAnswer('Tools are called with a <function_calls> block.'),
      'Tools are called with a <function_calls> block.',
    );
  });

  it('ignores an <answer> inside a function_calls block', () => {
    const text = `Writing it.\n${block(['write', { content: '<answer>not this</answer>' }])}</function_calls>\nDone.`;
    assert.equal(extractAnswer(text), 'Writing it.\n\nDone.');
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe('legacyXmlProtocol', () => {
  it('is named legacy-xml', () => {
    assert.equal(legacyXmlProtocol.name, 'legacy-xml');
  });

  it('plays the General Motors chain of the documentation', () => {
    // Turn 1: the model asks for the ticker symbol; the API swallowed </function_calls>.
    const first = legacyXmlProtocol.readReply(reply(DOC_FIRST_REPLY), 1);
    assert.deepEqual(first.assistant, { role: 'assistant', content: `${DOC_FIRST_REPLY}</function_calls>` });
    assert.deepEqual(first.toolCalls, [
      {
        id: 'legacy-1-0',
        ref: '1-0',
        name: 'get_ticker_symbol',
        input: { company_name: 'General Motors' },
      },
    ]);
    assert.equal(first.text, '');
    assert.deepEqual(
      legacyXmlProtocol.renderResults([
        { callId: 'legacy-1-0', name: 'get_ticker_symbol', isError: false, content: 'GM' },
      ]),
      { role: 'user', content: DOC_FIRST_RESULTS },
    );

    // Turn 2: the price.
    const second = legacyXmlProtocol.readReply(reply(DOC_SECOND_REPLY), 2);
    assert.equal(second.assistant.content, `${DOC_SECOND_REPLY}</function_calls>`);
    assert.deepEqual(second.toolCalls, [
      {
        id: 'legacy-2-0',
        ref: '2-0',
        name: 'get_current_stock_price',
        input: { symbol: 'GM' },
      },
    ]);
    assert.deepEqual(
      legacyXmlProtocol.renderResults([
        { callId: 'legacy-2-0', name: 'get_current_stock_price', isError: false, content: '38.50' },
      ]),
      { role: 'user', content: DOC_SECOND_RESULTS },
    );

    // Turn 3: the answer.
    const third = legacyXmlProtocol.readReply(reply(DOC_FINAL_REPLY, 'end_turn'), 3);
    assert.deepEqual(third, {
      assistant: { role: 'assistant', content: DOC_FINAL_REPLY },
      toolCalls: [],
      text: 'The current stock price of General Motors is $38.50.',
      stopReason: 'end_turn',
    });
  });

  it('gives each invoke of a reply its own id', () => {
    const r = legacyXmlProtocol.readReply(reply(block(['a', { x: '1' }], ['b', {}], ['a', { x: '2' }])), 7);
    assert.deepEqual(
      r.toolCalls.map((c) => [c.id, c.name]),
      [
        ['legacy-7-0', 'a'],
        ['legacy-7-1', 'b'],
        ['legacy-7-2', 'a'],
      ],
    );
  });

  it('turns an unreadable invoke into a malformed call, next to the readable ones', () => {
    const text =
      '<function_calls>\n<invoke>\n<tool_name>a</tool_name>\n<parameters>\n<x>1</x>\n</parameters>\n</invoke>\n' +
      '<invoke>\n<parameters>\n<y>2</y>\n</parameters>\n</invoke>\n';
    const r = legacyXmlProtocol.readReply(reply(text), 0);
    assert.deepEqual(r.toolCalls, [
      { id: 'legacy-0-0', ref: '0-0', name: 'a', input: { x: '1' } },
      {
        id: 'legacy-0-1',
        ref: '0-1',
        name: '',
        input: { y: '2' },
        malformed: 'could not read <invoke> 2: it has no <tool_name>',
      },
    ]);
  });

  it('answers a stop on </function_calls> with no readable invoke with one malformed call', () => {
    const r = legacyXmlProtocol.readReply(reply('Let me check.\n<function_calls>\n'), 4);
    assert.equal(r.assistant.content, 'Let me check.\n<function_calls>\n</function_calls>');
    assert.equal(r.toolCalls.length, 1);
    assert.equal(r.toolCalls[0]!.id, 'legacy-4-0');
    assert.equal(r.toolCalls[0]!.name, '');
    assert.match(r.toolCalls[0]!.malformed ?? '', /contains no <invoke>/);
    assert.equal(r.text, 'Let me check.');
  });

  it('treats a <function_calls> mentioned in a finished answer as text', () => {
    const text = 'Tools are called with a <function_calls> block.';
    const r = legacyXmlProtocol.readReply(reply(text, 'end_turn'), 0);
    assert.deepEqual(r, {
      assistant: { role: 'assistant', content: text },
      toolCalls: [],
      text,
      stopReason: 'end_turn',
    });
  });

  it('reads calls written without the stop sequence and drops the results the model imagined after them', () => {
    const calls = block(['a', { x: '1' }]);
    const r = legacyXmlProtocol.readReply(
      reply(`${calls}</function_calls>\n<function_results>made up</function_results>`, 'end_turn'),
      0,
    );
    assert.equal(r.assistant.content, `${calls}</function_calls>`);
    assert.deepEqual(
      r.toolCalls.map((c) => c.input),
      [{ x: '1' }],
    );
  });

  it('joins the text blocks of a reply and ignores other blocks', () => {
    const [head, tail] = [DOC_SECOND_REPLY.slice(0, 40), DOC_SECOND_REPLY.slice(40)];
    const r = legacyXmlProtocol.readReply(
      {
        content: [
          { type: 'thinking', thinking: 'hmm', signature: 's' } as ContentBlock,
          textBlock(head),
          textBlock(tail),
        ],
        stop_reason: 'stop_sequence',
        stop_sequence: LEGACY_STOP_SEQUENCE,
      },
      0,
    );
    assert.equal(r.assistant.content, `${DOC_SECOND_REPLY}</function_calls>`);
    assert.deepEqual(
      r.toolCalls.map((c) => c.input),
      [{ symbol: 'GM' }],
    );
  });

  it('does not throw on a reply cut off by max_tokens', () => {
    const text = DOC_FIRST_REPLY.slice(0, DOC_FIRST_REPLY.lastIndexOf('Motors'));
    const r = legacyXmlProtocol.readReply(reply(text, 'max_tokens'), 0);
    assert.equal(r.toolCalls.length, 1);
    assert.match(r.toolCalls[0]!.malformed ?? '', /not closed/);
    assert.doesNotThrow(() =>
      legacyXmlProtocol.readReply({ content: [], stop_reason: 'max_tokens', stop_sequence: null }, 0),
    );
  });

  it('stores the assistant message as a plain string', () => {
    const r = legacyXmlProtocol.readReply(reply(DOC_FIRST_REPLY), 0);
    assert.equal(typeof r.assistant.content, 'string');
    assert.equal(r.assistant.role, 'assistant');
  });
});
