import assert from 'node:assert/strict';
import { test } from 'node:test';
import { modelOutputCap, nextMaxTokens } from '../../common/max-tokens-ladder';

test('the max_tokens ladder climbs by four up to the cap, then stops', () => {
  const rungs = [1024];
  for (let next = nextMaxTokens(1024, 64000); next !== undefined; next = nextMaxTokens(rungs.at(-1)!, 64000))
    rungs.push(next);
  assert.deepEqual(rungs, [1024, 4096, 16384, 64000]);
});

test('a request already at the cap has no next rung', () => {
  assert.equal(nextMaxTokens(8192, 8192), undefined);
});

test('model output caps follow the model family', () => {
  assert.equal(modelOutputCap('claude-3-5-haiku-latest'), 8192);
  assert.equal(modelOutputCap('claude-opus-4-1'), 32000);
  assert.equal(modelOutputCap('claude-sonnet-4-5'), 64000);
});
