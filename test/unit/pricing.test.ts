// From usage to dollars: each kind of token at its own price, the published table and its overrides, and a cost that
// is unknown (null), not free, for a model nobody priced.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { addCost, costUsd, formatUsd, PUBLISHED_PRICES, pricesFor, modelPriceTableSchema } from '../../common/pricing';
import { DEFAULT_MODEL, withDefaults } from '../../common/options';

const SONNET_4_6 = { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3 };
const usage = (input: number, output: number, cacheWrite = 0, cacheRead = 0) => ({
  inputTokens: input,
  outputTokens: output,
  cacheCreationInputTokens: cacheWrite,
  cacheReadInputTokens: cacheRead,
});

describe('the cost of one call', () => {
  test('input and output at their prices per million tokens', () => {
    assert.equal(costUsd(usage(1_000_000, 0), SONNET_4_6), 3);
    assert.equal(costUsd(usage(0, 1_000_000), SONNET_4_6), 15);
    assert.equal(costUsd(usage(2_000, 500), SONNET_4_6), (2_000 * 3 + 500 * 15) / 1e6);
  });

  test('cache writes and cache reads are priced apart from uncached input', () => {
    // 100 uncached + 4,000 written to the cache + 20,000 read from it, 300 out.
    const cost = costUsd(usage(100, 300, 4_000, 20_000), SONNET_4_6);
    assert.ok(Math.abs(cost - (100 * 3 + 300 * 15 + 4_000 * 3.75 + 20_000 * 0.3) / 1e6) < 1e-12);
    // The same prompt uncached costs more: caching pays once the prefix is read back.
    assert.ok(costUsd(usage(24_100, 300), SONNET_4_6) > cost);
  });
});

describe('which prices', () => {
  test('the default model has published prices; cache reads are cheaper than input, writes dearer', () => {
    const prices = pricesFor(DEFAULT_MODEL, PUBLISHED_PRICES);
    assert.ok(prices);
    assert.ok(prices.cacheRead < prices.input && prices.cacheWrite > prices.input);
  });

  test('a dated model id has the price of its alias', () => {
    assert.deepEqual(pricesFor('claude-sonnet-4-5-20250929', PUBLISHED_PRICES), PUBLISHED_PRICES['claude-sonnet-4-5']);
  });

  test('an override comes before the published table; an unknown model has no price at all', () => {
    const mine = { 'claude-sonnet-4-6': { input: 1, output: 2, cacheWrite: 1, cacheRead: 0.1 } };
    assert.deepEqual(pricesFor('claude-sonnet-4-6', mine, PUBLISHED_PRICES), mine['claude-sonnet-4-6']);
    assert.equal(pricesFor('my-own-model', mine, PUBLISHED_PRICES), undefined);
  });

  test('prices are validated: as a conversation option and as a worker table', () => {
    assert.throws(
      () => withDefaults({ prices: { input: -1, output: 1, cacheWrite: 1, cacheRead: 1 } }),
      /prices\.input/,
    );
    assert.throws(() => withDefaults({ prices: { input: 1, output: 1 } as never }), /prices\.cacheWrite/);
    assert.equal(
      modelPriceTableSchema.safeParse({ m: { input: 1, output: 1, cacheWrite: 1, cacheRead: 'x' } }).success,
      false,
    );
  });
});

describe('totals', () => {
  test('a total turns unknown for good once one part is unknown', () => {
    assert.equal(addCost(0.5, 0.25), 0.75);
    assert.equal(addCost(0.5, null), null);
    assert.equal(addCost(null, 0.25), null);
    assert.equal(formatUsd(null), 'unknown');
    assert.equal(formatUsd(0.01234), '$0.0123');
  });
});
