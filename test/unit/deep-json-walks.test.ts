// Every walk of JSON that a caller or the model controls, in workflow code, survives a value nested 100,000 deep:
// measuring it, digesting it (an approval binds to the arguments' digest), summarising it (an activity's summary).
// Recursion over such a value overflows the stack inside a workflow task, which then fails on every retry.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { canonicalJson, digest } from '../../common/digest';
import { jsonExtentProblem } from '../../common/json-extent';
import { toolCallSummary } from '../../common/summaries';
import { wellFormed } from '../../common/safe-text';

function nested(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { a: value };
  return value;
}
const DEEP = nested(100_000);

describe('measuring', () => {
  test('depth and size are measured without recursion, and the walk stops at the first excess', () => {
    assert.equal(jsonExtentProblem(DEEP, { maxDepth: 64, maxNodes: 1_000_000 }), 'it nests deeper than 64 levels');
    assert.equal(jsonExtentProblem(nested(64), { maxDepth: 64, maxNodes: 1_000 }), undefined);
    assert.equal(jsonExtentProblem(nested(65), { maxDepth: 64, maxNodes: 1_000 }), 'it nests deeper than 64 levels');
    const wide = Array.from({ length: 10_000 }, (_, i) => i);
    assert.equal(jsonExtentProblem(wide, { maxDepth: 64, maxNodes: 5_000 }), 'it has more than 5000 values');
    assert.equal(jsonExtentProblem('text', { maxDepth: 0, maxNodes: 1 }), undefined, 'a scalar is depth 0');
  });
});

describe('digesting', () => {
  test('the canonical form is the same as before it was iterative: sorted keys, undefined members left out', () => {
    const value = {
      name: 'get_ticker_symbol',
      input: { company_name: 'General Motors', list: [1, 'two', null, { b: 2, a: [true, false], u: undefined }] },
    };
    assert.equal(
      canonicalJson(value),
      '{"input":{"company_name":"General Motors","list":[1,"two",null,{"a":[true,false],"b":2}]},' +
        '"name":"get_ticker_symbol"}',
    );
    // Recorded by the recursive version: an approval's digest in a history must still match.
    assert.equal(
      digest({
        name: 'get_ticker_symbol',
        input: {
          company_name: 'General Motors',
          list: [1, 'two', null, { b: 2, a: [true, false], u: undefined }],
          nested: { z: { y: {} } },
          e: [],
        },
      }),
      'db971d302d7a9dc4',
    );
    assert.equal(canonicalJson([undefined, () => 1]), '[null,null]');
  });

  test('a value nested 100,000 deep is digested', () => {
    assert.match(digest(DEEP), /^[0-9a-f]{16}$/);
    assert.ok(canonicalJson(DEEP).startsWith('[{"a":[{"a":'));
  });
});

describe('summarising', () => {
  test('a deep argument is shown as the head of its JSON, cut short; a shallow one as before', () => {
    const deep = toolCallSummary('lookup', { deep: DEEP as never });
    assert.match(deep, /^lookup\(deep=\[\{"a":\[\{"a":.*…\)$/);
    assert.ok(deep.length <= 100, `${deep.length} characters`);
    assert.equal(
      toolCallSummary('get_ticker_symbol', { company_name: 'General Motors' }),
      'get_ticker_symbol(company_name="General Motors")',
    );
  });

  test('many or long argument names make a summary of at most 100 characters, well-formed', () => {
    const input = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`\ud800${'k'.repeat(5_000)}${i}`, i]));
    const summary = toolCallSummary('lookup', input);
    assert.ok(summary.length <= 100, `${summary.length} characters`);
    assert.equal(summary, wellFormed(summary), 'no lone surrogate');
  });

  test('an input that is not an object (the model’s mistake) is summarised, not thrown on', () => {
    assert.equal(toolCallSummary('lookup', null as never), 'lookup()');
    assert.equal(toolCallSummary('lookup', 'text' as never), 'lookup()');
  });
});
