// The patterns of a typed-answer schema run on RE2 (linear time), or are refused by name when RE2 cannot run them or
// would read them differently from JavaScript.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compilePattern, MAX_PATTERN_CHARS } from '../../common/linear-regex';

function regex(pattern: string) {
  const compiled = compilePattern(pattern);
  assert.ok(compiled.ok, `${pattern} compiles`);
  return compiled.regex;
}

function refusal(pattern: string): string {
  const compiled = compilePattern(pattern);
  assert.equal(compiled.ok, false, `${pattern} is refused`);
  return (compiled as { error: string }).error;
}

describe('matching', () => {
  test('a catastrophic pattern for a backtracking engine answers at once on RE2', () => {
    const re = regex('^(a+)+$');
    // A backtracking RegExp takes about 2^n steps on this text; this test finishing at all is the point.
    assert.equal(re.test(`${'a'.repeat(5_000)}!`), false);
    assert.equal(re.test('a'.repeat(5_000)), true);
  });

  test('JSON Schema patterns are not anchored, as in JavaScript', () => {
    assert.equal(regex('b+').test('abbbc'), true);
    assert.equal(regex('^b+$').test('abbbc'), false);
  });

  test('the JavaScript syntax re2js translates means the same: \\u, \\u{…}, named groups, [^], [], \\d \\w \\b', () => {
    assert.equal(regex('^\\u0041$').test('A'), true);
    assert.equal(regex('^\\u{1F600}$').test('😀'), true);
    assert.equal(regex('^(?<word>\\w+)\\b').test('hello world'), true);
    assert.equal(regex('^[^]$').test('\n'), true);
    assert.equal(regex('a[]').test('a'), false);
    assert.equal(regex('^\\d{3}-\\d{4}$').test('555-1234'), true);
    assert.equal(regex('^\\-?\\d+$').test('-12'), true, 'an identity escape that only non-unicode mode allows');
    assert.equal(regex('^\\p{L}+$').test('héllo'), true, 'a unicode class, as z.toJSONSchema writes a /u regex');
  });

  test('zod reads what it needs to: source, flags, lastIndex, toString', () => {
    const re = regex('^x$');
    assert.equal(re.source, '^x$');
    assert.equal(re.flags, '');
    assert.equal(re.toString(), '/^x$/');
  });

  test('each match charges the meter for the text it scans', () => {
    const charged: number[] = [];
    const compiled = compilePattern('^a+$', (units) => charged.push(units));
    assert.ok(compiled.ok);
    compiled.regex.test('aaaa');
    assert.equal(charged.length, 1);
    assert.ok(charged[0]! >= 5);
  });
});

describe('refusals, each naming what is wrong without repeating the pattern', () => {
  for (const [pattern, why] of [
    ['(a)\\1', /backreferences/],
    ['(?<n>a)\\k<n>', /backreferences/],
    ['(?=a)b', /lookaround/],
    ['(?!a)b', /lookaround/],
    ['(?<=a)b', /lookaround/],
    ['(?<!a)b', /lookaround/],
    ['\\z', /the escape \\z means different things/],
    ['\\Qa.b\\E', /the escape \\Q/],
    ['[[:digit:]]', /POSIX classes/],
    ['\\uD801\\uDC37', /surrogate halves/],
    ['(', /not a valid ECMA-262 regular expression/],
    ['a{1001}', /RE2 cannot run it \(invalid repeat count\)/],
    ['(?:a{1000}){1000}', /RE2 cannot run it/],
    ['x'.repeat(MAX_PATTERN_CHARS + 1), /characters; the limit is 1000/],
  ] as const) {
    test(`${pattern.slice(0, 24)}: ${why.source}`, () => {
      const error = refusal(pattern);
      assert.match(error, why);
      if (pattern.length > 3) assert.ok(!error.includes(pattern), 'the pattern is not repeated');
    });
  }

  test('escaped characters stay escaped: \\\\k and \\\\1 are a backslash and a letter, not backreferences', () => {
    assert.equal(regex('^\\\\k$').test('\\k'), true);
    assert.equal(regex('[(?=]').test('='), true, 'lookaround syntax inside a class is three characters');
  });

  test('a pattern whose RE2 program is too large is refused', () => {
    assert.match(refusal('[a-z]{1,100}'.repeat(70)), /RE2 instructions; the limit is/);
  });
});
