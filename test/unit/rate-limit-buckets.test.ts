// The local Messages API's rate-limit arithmetic (testing/messages-api/rate-limits.ts), with a clock the test moves:
// buckets that start full and refill continuously at limit/60 per second, a request admitted only when every
// dimension has room, the output estimate (max_tokens) settled against the real output, and the headers' figures.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RateLimiter, rateLimitsSchema, TokenBucket } from '../../testing/messages-api/rate-limits';

const T0 = Date.UTC(2026, 11, 7, 20, 0, 0);
const MODEL = 'claude-test';

describe('rate limits: one token bucket', () => {
  test('starts full, refills at capacity per minute, never above capacity', () => {
    const bucket = new TokenBucket(6_000, T0);
    assert.equal(bucket.levelAt(T0), 6_000);
    bucket.take(6_000, T0);
    assert.equal(bucket.levelAt(T0), 0);
    assert.equal(bucket.levelAt(T0 + 1_000), 100, '6,000 per minute is 100 per second');
    assert.equal(bucket.levelAt(T0 + 30_000), 3_000);
    assert.equal(bucket.levelAt(T0 + 120_000), 6_000, 'capped at capacity');
  });

  test('says how long until an amount fits, and when it is full again', () => {
    const bucket = new TokenBucket(600, T0);
    bucket.take(500, T0);
    assert.equal(bucket.waitMs(100, T0), 0, '100 left: fits now');
    assert.equal(bucket.waitMs(160, T0), 6_000, '60 missing at 10 per second');
    assert.equal(bucket.fullAt(T0), T0 + 50_000);
    assert.equal(bucket.waitMs(10_000, T0), 50_000, 'more than the capacity: until full');
  });

  test('may go into debt, and a give-back never passes capacity', () => {
    const bucket = new TokenBucket(100, T0);
    bucket.take(150, T0);
    assert.equal(bucket.levelAt(T0), -50);
    bucket.give(500, T0);
    assert.equal(bucket.levelAt(T0), 100);
  });
});

describe('rate limits: admission per model', () => {
  test('requests per minute: the limit passes at once, the next is refused with retry-after, and fits after refill', () => {
    const limiter = new RateLimiter({ requestsPerMinute: 3 });
    for (let i = 0; i < 3; i++) assert.equal(limiter.admit(MODEL, { inputTokens: 10, outputTokens: 10 }, T0).ok, true);
    const refused = limiter.admit(MODEL, { inputTokens: 10, outputTokens: 10 }, T0);
    assert.equal(refused.ok, false);
    assert.ok(!refused.ok);
    assert.equal(refused.retryAfterSeconds, 20, 'one request refills in 20 s at 3 per minute');
    assert.match(refused.message, /rate limit of 3 requests per minute/);
    assert.equal(refused.headers['anthropic-ratelimit-requests-remaining'], '0');
    assert.equal(limiter.admit(MODEL, { inputTokens: 10, outputTokens: 10 }, T0 + 19_000).ok, false);
    assert.equal(limiter.admit(MODEL, { inputTokens: 10, outputTokens: 10 }, T0 + 20_000).ok, true);
  });

  test('each model has its own buckets', () => {
    const limiter = new RateLimiter({ requestsPerMinute: 1 });
    assert.equal(limiter.admit('model-a', { inputTokens: 1, outputTokens: 1 }, T0).ok, true);
    assert.equal(limiter.admit('model-a', { inputTokens: 1, outputTokens: 1 }, T0).ok, false);
    assert.equal(limiter.admit('model-b', { inputTokens: 1, outputTokens: 1 }, T0).ok, true);
  });

  test('a refused request takes nothing from any bucket', () => {
    const limiter = new RateLimiter({ requestsPerMinute: 10, inputTokensPerMinute: 1_000 });
    assert.equal(limiter.admit(MODEL, { inputTokens: 900, outputTokens: 0 }, T0).ok, true);
    const refused = limiter.admit(MODEL, { inputTokens: 200, outputTokens: 0 }, T0);
    assert.ok(!refused.ok);
    assert.equal(refused.retryAfterSeconds, 6, '100 tokens missing at 1,000 per minute: 6 s');
    assert.equal(refused.headers['anthropic-ratelimit-requests-remaining'], '9', 'the refusal took no request');
    assert.equal(
      limiter.admit(MODEL, { inputTokens: 100, outputTokens: 0 }, T0).ok,
      true,
      'its tokens are still there',
    );
  });

  test('retry-after is whole seconds rounded up, at least 1', () => {
    const limiter = new RateLimiter({ inputTokensPerMinute: 60_000 });
    assert.equal(limiter.admit(MODEL, { inputTokens: 60_000, outputTokens: 0 }, T0).ok, true);
    const refused = limiter.admit(MODEL, { inputTokens: 1_500, outputTokens: 0 }, T0 + 1_000);
    assert.ok(!refused.ok);
    assert.equal(refused.retryAfterSeconds, 1, '500 missing at 1,000 per second: 0.5 s → 1');
  });

  test('a request larger than the limit is refused even with a full bucket, saying so', () => {
    const limiter = new RateLimiter({ inputTokensPerMinute: 1_000 });
    const refused = limiter.admit(MODEL, { inputTokens: 5_000, outputTokens: 0 }, T0);
    assert.ok(!refused.ok);
    assert.match(refused.message, /rate limit of 1,000 input tokens per minute .* on its own/);
  });

  test('output is charged max_tokens up front and settled to the real output when the reply ends', () => {
    const limiter = new RateLimiter({ outputTokensPerMinute: 10_000 });
    const first = limiter.admit(MODEL, { inputTokens: 0, outputTokens: 8_000 }, T0);
    assert.ok(first.ok);
    assert.equal(limiter.admit(MODEL, { inputTokens: 0, outputTokens: 8_000 }, T0).ok, false, 'the estimate counts');
    first.settle({ outputTokens: 500, cacheReadInputTokens: 0 }, T0);
    assert.equal(limiter.admit(MODEL, { inputTokens: 0, outputTokens: 8_000 }, T0).ok, true, '7,500 given back');
  });

  test('cache reads are given back to the input bucket when the reply ends', () => {
    const limiter = new RateLimiter({ inputTokensPerMinute: 10_000 });
    const first = limiter.admit(MODEL, { inputTokens: 9_000, outputTokens: 0 }, T0);
    assert.ok(first.ok);
    first.settle({ outputTokens: 0, cacheReadInputTokens: 8_000 }, T0);
    first.settle({ outputTokens: 0, cacheReadInputTokens: 8_000 }, T0); // settled once only
    assert.equal(limiter.headers(MODEL, T0)['anthropic-ratelimit-input-tokens-remaining'], '9000');
  });
});

describe('rate limits: headers', () => {
  test('limit, remaining (tokens to the nearest thousand) and reset (RFC 3339) for each configured dimension', () => {
    const limiter = new RateLimiter({
      requestsPerMinute: 50,
      inputTokensPerMinute: 40_000,
      outputTokensPerMinute: 8_000,
    });
    const admitted = limiter.admit(MODEL, { inputTokens: 1_400, outputTokens: 2_600 }, T0);
    assert.ok(admitted.ok);
    assert.deepEqual(admitted.headers, {
      'anthropic-ratelimit-requests-limit': '50',
      'anthropic-ratelimit-requests-remaining': '49',
      'anthropic-ratelimit-requests-reset': '2026-12-07T20:00:02Z',
      'anthropic-ratelimit-input-tokens-limit': '40000',
      'anthropic-ratelimit-input-tokens-remaining': '39000',
      'anthropic-ratelimit-input-tokens-reset': '2026-12-07T20:00:03Z',
      'anthropic-ratelimit-output-tokens-limit': '8000',
      'anthropic-ratelimit-output-tokens-remaining': '5000',
      'anthropic-ratelimit-output-tokens-reset': '2026-12-07T20:00:20Z',
      // the most restrictive token limit: the one with the fewest tokens left
      'anthropic-ratelimit-tokens-limit': '8000',
      'anthropic-ratelimit-tokens-remaining': '5000',
      'anthropic-ratelimit-tokens-reset': '2026-12-07T20:00:20Z',
    });
  });

  test('only the configured dimensions; requests alone have no tokens-* headers', () => {
    const limiter = new RateLimiter({ requestsPerMinute: 5 });
    assert.deepEqual(Object.keys(limiter.headers(MODEL, T0)).sort(), [
      'anthropic-ratelimit-requests-limit',
      'anthropic-ratelimit-requests-remaining',
      'anthropic-ratelimit-requests-reset',
    ]);
  });

  test('a model never admitted shows full buckets', () => {
    const limiter = new RateLimiter({ inputTokensPerMinute: 40_000 });
    assert.equal(limiter.headers('never-seen', T0)['anthropic-ratelimit-input-tokens-remaining'], '40000');
  });
});

describe('rate limits: the settings', () => {
  test('each limit optional; null and {} are accepted', () => {
    assert.deepEqual(rateLimitsSchema.parse({ inputTokensPerMinute: 40_000 }), { inputTokensPerMinute: 40_000 });
    assert.equal(rateLimitsSchema.parse(null), null);
    assert.equal(new RateLimiter(rateLimitsSchema.parse({}) ?? {}).active, false);
  });

  test('a limit that is not a positive integer, or an unknown key, is refused', () => {
    for (const bad of [
      { requestsPerMinute: 0 },
      { inputTokensPerMinute: -5 },
      { outputTokensPerMinute: 1.5 },
      { inputTokensPerMinute: '40000' },
      { itpm: 40_000 },
      [],
    ]) {
      assert.equal(rateLimitsSchema.safeParse(bad).success, false, JSON.stringify(bad));
    }
  });
});
