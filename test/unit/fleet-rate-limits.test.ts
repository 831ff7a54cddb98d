// The fleet rate limiter's arithmetic (common/rate-limits.ts), the API's headers as it reads them
// (activities/rate-limit-headers.ts), a request's estimated cost (activities/call-rate-limits.ts) and the worker's
// configuration (workers/rate-limit-config.ts): pure, with the clock passed in.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  emptyRateLimitState,
  MAX_MODELS,
  observe,
  prune,
  RESERVATION_TTL_MS,
  reserve,
  reserveRequestSchema,
  observationSchema,
  INPUT_RATIO_BOUNDS,
  rateLimitStateSchema,
  take,
} from '../../common/rate-limits';
import { fleetLimits, readRateLimitHeaders } from '../../activities/rate-limit-headers';
import { jsonLength, requestCost, waitMayEndAttempt } from '../../activities/call-rate-limits';
import { capsInDimensions, rateLimitCapsSchema, rateLimitOptionsOf } from '../../workers/rate-limit-config';
import { loadConfig } from '../../workers/config';

const T0 = 1_700_000_000_000;
const MODEL = 'claude-test';

/** A state whose model has learned `limits` (full buckets) at T0. */
function learned(limits: { requests?: number; inputTokens?: number; outputTokens?: number }) {
  const state = emptyRateLimitState();
  observe(state, { model: MODEL, limits }, T0);
  return state;
}

describe('buckets', () => {
  test('a bucket refills continuously at its limit per minute and never above it', () => {
    const bucket = { limit: 60, level: 0, at: T0 };
    assert.equal(take(bucket, 0, T0 + 10_000), 0);
    assert.equal(bucket.level, 10); // 10 s of 1 per second
    take(bucket, 0, T0 + 10 * 60_000);
    assert.equal(bucket.level, 60);
  });

  test('a reservation past the level waits exactly until the level it left is back at zero (reserve-ahead)', () => {
    const bucket = { limit: 60, level: 1, at: T0 };
    assert.equal(take(bucket, 1, T0), 0);
    assert.equal(take(bucket, 1, T0), 1_000); // one request per second
    assert.equal(take(bucket, 1, T0), 2_000); // queued behind the one before, not beside it
    assert.equal(take(bucket, 0, T0 + 2_000), 0);
    assert.equal(bucket.level, 0);
  });
});

describe('reservations', () => {
  test('before any limit is known, every call goes at once', () => {
    const state = emptyRateLimitState();
    for (let i = 0; i < 100; i++)
      assert.deepEqual(reserve(state, { key: `k${i}`, model: MODEL, cost: { requests: 1 } }, T0), { waitMs: 0 });
  });

  test('the longest wait of all dimensions wins, and names its dimension', () => {
    const state = learned({ requests: 600, inputTokens: 6_000 });
    assert.deepEqual(reserve(state, { key: 'a', model: MODEL, cost: { requests: 1, inputTokens: 6_000 } }, T0), {
      waitMs: 0,
    });
    const second = reserve(state, { key: 'b', model: MODEL, cost: { requests: 1, inputTokens: 3_000 } }, T0);
    assert.deepEqual(second, { waitMs: 30_000, waitingFor: 'inputTokens' });
  });

  test('asking again with the same key gets the same reservation, its wait counted down, not a second one', () => {
    const state = learned({ requests: 60 });
    state.models[MODEL]!.buckets.requests!.level = 0;
    assert.equal(reserve(state, { key: 'k', model: MODEL, cost: { requests: 1 } }, T0).waitMs, 1_000);
    assert.equal(reserve(state, { key: 'k', model: MODEL, cost: { requests: 1 } }, T0 + 400).waitMs, 600);
    assert.equal(reserve(state, { key: 'k', model: MODEL, cost: { requests: 1 } }, T0 + 5_000).waitMs, 0);
    // Only one request was taken: the bucket is back at zero one second in, and full-rate after.
    assert.equal(reserve(state, { key: 'other', model: MODEL, cost: { requests: 1 } }, T0 + 2_000).waitMs, 0);
  });

  test('configured caps make the limits known before any header, and only ever lower them', () => {
    const state = emptyRateLimitState();
    const capped = { requests: 60 };
    assert.equal(reserve(state, { key: 'a', model: MODEL, cost: { requests: 60 }, caps: capped }, T0).waitMs, 0);
    assert.equal(reserve(state, { key: 'b', model: MODEL, cost: { requests: 1 }, caps: capped }, T0).waitMs, 1_000);
    reserve(state, { key: 'c', model: MODEL, cost: {}, caps: { requests: 600 } }, T0);
    assert.equal(state.models[MODEL]!.buckets.requests!.limit, 60);
  });
});

describe('what responses tell', () => {
  test("what remains by the API's count clamps the bucket (other fleets spend the same limits)", () => {
    const state = learned({ inputTokens: 10_000 });
    observe(state, { model: MODEL, remaining: { inputTokens: 2_000 } }, T0);
    assert.equal(state.models[MODEL]!.buckets.inputTokens!.level, 2_000);
    observe(state, { model: MODEL, remaining: { inputTokens: 9_000 } }, T0);
    assert.equal(state.models[MODEL]!.buckets.inputTokens!.level, 2_000, 'never raised by it');
  });

  test("a 429's retry-after holds every reservation of the model until then", () => {
    const state = learned({ requests: 1_000 });
    observe(state, { model: MODEL, retryAfterMs: 5_000 }, T0);
    assert.deepEqual(reserve(state, { key: 'a', model: MODEL, cost: { requests: 1 } }, T0 + 1_000), {
      waitMs: 4_000,
      waitingFor: 'retry-after',
    });
    assert.equal(reserve(state, { key: 'b', model: 'another-model', cost: { requests: 1 } }, T0 + 1_000).waitMs, 0);
  });

  test("reservations are scaled by what the API's usage showed of the calls' estimates", () => {
    const state = learned({ inputTokens: 60_000 });
    // The API counted 1.5 times what the calls estimated, then 2 times: the ratio moves towards it, bounded.
    observe(state, { model: MODEL, usage: { requests: 1, inputTokens: 150 }, estimate: { inputTokens: 100 } }, T0);
    assert.equal(state.models[MODEL]!.inputRatio, 1.5);
    observe(state, { model: MODEL, usage: { requests: 1, inputTokens: 200 }, estimate: { inputTokens: 100 } }, T0);
    assert.equal(state.models[MODEL]!.inputRatio, 1.6);
    reserve(state, { key: 'a', model: MODEL, cost: { requests: 1, inputTokens: 1_000 } }, T0);
    assert.deepEqual(state.reservations['a']!.cost, { requests: 1, inputTokens: 1_600 });
    assert.equal(state.models[MODEL]!.buckets.inputTokens!.level, 60_000 - 1_600);
    // Settled against the scaled cost: a usage equal to it changes nothing.
    observe(state, { model: MODEL, key: 'a', usage: { requests: 1, inputTokens: 1_600 } }, T0);
    assert.equal(state.models[MODEL]!.buckets.inputTokens!.level, 60_000 - 1_600);
  });

  test('a refused request, or a wild one, cannot drive the input ratio out of its bounds', () => {
    const state = learned({ inputTokens: 60_000 });
    observe(state, { model: MODEL, usage: { requests: 0, inputTokens: 0 }, estimate: { inputTokens: 100 } }, T0);
    assert.equal(state.models[MODEL]!.inputRatio, undefined, 'a 429 says nothing of the estimate');
    observe(state, { model: MODEL, usage: { requests: 1, inputTokens: 1e9 }, estimate: { inputTokens: 1 } }, T0);
    assert.equal(state.models[MODEL]!.inputRatio, INPUT_RATIO_BOUNDS[1]);
    for (let i = 0; i < 200; i++)
      observe(state, { model: MODEL, usage: { requests: 1, inputTokens: 0 }, estimate: { inputTokens: 100 } }, T0);
    assert.ok(state.models[MODEL]!.inputRatio! >= INPUT_RATIO_BOUNDS[0]);
  });

  test('a request sent unreserved is taken from the buckets that knew the limits before, and settled by its usage', () => {
    const state = learned({ requests: 60, inputTokens: 60_000 });
    const sent = { model: MODEL, key: 'u', unreserved: true as const };
    observe(state, { ...sent, estimate: { requests: 1, inputTokens: 500 } }, T0);
    const buckets = state.models[MODEL]!.buckets;
    assert.equal(buckets.requests!.level, 59);
    assert.equal(buckets.inputTokens!.level, 59_500);
    observe(state, { ...sent, usage: { requests: 1, inputTokens: 800 } }, T0);
    assert.equal(buckets.inputTokens!.level, 59_200, 'settled as a reservation');
    // Reported only once it was answered (a limiter that did not answer in time): its usage is taken.
    observe(state, { ...sent, key: 'v', usage: { requests: 1, inputTokens: 200 } }, T0);
    assert.equal(buckets.inputTokens!.level, 59_000);
  });

  test("a worker's first request, whose own headers teach the limits, is not counted twice", () => {
    const state = emptyRateLimitState();
    const probe = { model: MODEL, key: 'p', unreserved: true as const };
    // The API's `remaining` counted it already.
    observe(state, { ...probe, estimate: { requests: 1 }, limits: { requests: 60 }, remaining: { requests: 59 } }, T0);
    assert.equal(state.models[MODEL]!.buckets.requests!.level, 59);
    observe(state, { ...probe, usage: { requests: 1 } }, T0);
    assert.equal(state.models[MODEL]!.buckets.requests!.level, 59);
  });

  test('the limiter counts what it handled: reservations, waits, reports and refusals', () => {
    const state = learned({ requests: 60 });
    state.models[MODEL]!.buckets.requests!.level = 1;
    reserve(state, { key: 'a', model: MODEL, cost: { requests: 1 } }, T0);
    reserve(state, { key: 'b', model: MODEL, cost: { requests: 1 } }, T0);
    reserve(state, { key: 'b', model: MODEL, cost: { requests: 1 } }, T0); // the same reservation
    observe(state, { model: MODEL, retryAfterMs: 1_000 }, T0);
    assert.deepEqual(state.totals, { reserved: 2, waited: 1, observed: 2, refused: 1 });
  });

  test('usage settles the estimate once: what it took too much comes back, too little is taken', () => {
    const state = learned({ outputTokens: 60_000 });
    reserve(state, { key: 'a', model: MODEL, cost: { outputTokens: 4_096 } }, T0);
    observe(state, { model: MODEL, key: 'a', usage: { outputTokens: 96 } }, T0);
    assert.equal(state.models[MODEL]!.buckets.outputTokens!.level, 60_000 - 96);
    observe(state, { model: MODEL, key: 'a', usage: { outputTokens: 96 } }, T0);
    assert.equal(state.models[MODEL]!.buckets.outputTokens!.level, 60_000 - 96, 'a second report changes nothing');
    reserve(state, { key: 'b', model: MODEL, cost: { outputTokens: 100 } }, T0);
    observe(state, { model: MODEL, key: 'b', usage: { outputTokens: 400 } }, T0);
    assert.equal(state.models[MODEL]!.buckets.outputTokens!.level, 60_000 - 96 - 400);
  });
});

describe('bounded state', () => {
  test('at most MAX_MODELS models are kept: the least recently used goes', () => {
    const state = emptyRateLimitState();
    for (let i = 0; i <= MAX_MODELS; i++) observe(state, { model: `m${i}`, limits: { requests: 10 } }, T0 + i);
    assert.equal(Object.keys(state.models).length, MAX_MODELS);
    assert.equal(state.models['m0'], undefined);
  });

  test('reservations are forgotten once long ready', () => {
    const state = learned({ requests: 60 });
    reserve(state, { key: 'a', model: MODEL, cost: { requests: 1 } }, T0);
    prune(state, T0 + RESERVATION_TTL_MS + 1);
    assert.deepEqual(state.reservations, {});
  });

  test('the state a limiter continues as new with is read back whole, a model knowing some dimensions only', () => {
    const state = learned({ inputTokens: 60_000 });
    reserve(state, { key: 'a', model: MODEL, cost: { requests: 1, inputTokens: 300 } }, T0);
    observe(state, { model: MODEL, usage: { requests: 1, inputTokens: 250 }, estimate: { inputTokens: 300 } }, T0);
    const carried = JSON.parse(JSON.stringify(state)) as unknown;
    const parsed = rateLimitStateSchema.safeParse(carried);
    assert.ok(parsed.success, JSON.stringify(parsed.error?.issues));
    assert.deepEqual(parsed.data, carried);
  });

  test('what callers send is checked: wrong shapes, unknown fields, huge or negative amounts are refused', () => {
    for (const bad of [
      undefined,
      'reserve',
      { key: 'k', model: MODEL },
      { key: 'k', model: MODEL, cost: { requests: -1 } },
      { key: 'k', model: MODEL, cost: { requests: 1e30 } },
      { key: 'k', model: MODEL, cost: { tokens: 1 } },
      { key: '', model: MODEL, cost: {} },
      { key: 'k'.repeat(2_000), model: MODEL, cost: {} },
      { key: 'k', model: MODEL, cost: {}, extra: true },
    ])
      assert.equal(reserveRequestSchema.safeParse(bad).success, false, JSON.stringify(bad));
    assert.equal(observationSchema.safeParse({ model: MODEL, retryAfterMs: Number.NaN }).success, false);
  });
});

describe("the API's headers", () => {
  const headers = (entries: Record<string, string>) => new Headers(entries);

  test('limits, remaining and retry-after are read per dimension; nothing readable is nothing', () => {
    const reading = readRateLimitHeaders(
      headers({
        'anthropic-ratelimit-requests-limit': '50',
        'anthropic-ratelimit-requests-remaining': '49',
        'anthropic-ratelimit-input-tokens-limit': '40000',
        'anthropic-ratelimit-input-tokens-remaining': '39000',
        'anthropic-ratelimit-output-tokens-limit': 'lots',
        'anthropic-ratelimit-tokens-limit': '90000',
        'retry-after': '3',
      }),
    );
    assert.deepEqual(reading, {
      limits: { requests: 50, inputTokens: 40_000 },
      remaining: { requests: 49, inputTokens: 39_000 },
      retryAfterMs: 3_000,
    });
    assert.equal(readRateLimitHeaders(headers({ 'content-type': 'application/json' })), undefined);
  });

  test('the fleet uses its share of what was learned, never more than the configured cap', () => {
    const settings = { share: 0.5, caps: { all: { requests: 10 }, models: { other: { inputTokens: 1_000 } } } };
    assert.deepEqual(fleetLimits({ requests: 50, inputTokens: 40_000 }, settings, MODEL), {
      requests: 10,
      inputTokens: 20_000,
    });
    assert.deepEqual(fleetLimits({ requests: 50, inputTokens: 40_000 }, settings, 'other'), {
      requests: 10,
      inputTokens: 1_000,
    });
  });
});

describe("a request's estimated cost", () => {
  test('one request, a token per 4 characters of its JSON, and max_tokens of output', () => {
    const request = {
      model: MODEL,
      max_tokens: 1_024,
      system: 'x'.repeat(40),
      messages: [
        { role: 'user' as const, content: [{ type: 'text' as const, text: 'y'.repeat(400) }] },
        {
          role: 'assistant' as const,
          content: [{ type: 'tool_use' as const, id: 'toolu_1', name: 'get_weather', input: { n: 12, ok: true } }],
        },
      ],
      tools: [{ name: 'get_weather', input_schema: { type: 'object' as const, properties: {} } }],
    };
    const json = JSON.stringify([request.system, request.messages, request.tools]).length;
    const cost = requestCost(request);
    assert.equal(cost.requests, 1);
    assert.equal(cost.outputTokens, 1_024);
    // Within a few characters per value of the JSON the API reads: keys, tool calls and schemas count.
    assert.ok(Math.abs(cost.inputTokens! * 4 - json) <= json * 0.1, `${cost.inputTokens! * 4} vs ${json}`);
  });

  test('a deeply nested input is walked without recursion', () => {
    let deep: unknown = 'z';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    assert.equal(jsonLength(deep), 100_000 * 2 + 4);
  });
});

describe('configuration', () => {
  const env = { ANTHROPIC_BASE_URL: 'http://127.0.0.1:1' };

  test('on by default, with nothing lowered', () => {
    assert.deepEqual(rateLimitOptionsOf(loadConfig(env)), { limiter: 'on' });
  });

  test('the variables, and options given in code over them', () => {
    const config = loadConfig({
      ...env,
      ANTHROPIC_RATE_LIMITER: 'off',
      ANTHROPIC_RATE_LIMITS: '{"inputTokensPerMinute":40000,"models":{"m":{"requestsPerMinute":5}}}',
      ANTHROPIC_RATE_LIMIT_SHARE: '0.5',
      ANTHROPIC_RATE_LIMIT_SCOPE: 'team-a',
    });
    assert.deepEqual(rateLimitOptionsOf(config), {
      limiter: 'off',
      limits: { inputTokensPerMinute: 40_000, models: { m: { requestsPerMinute: 5 } } },
      share: 0.5,
      scope: 'team-a',
    });
    assert.equal(rateLimitOptionsOf(config, { limiter: 'on', share: 1 }).share, 1);
    assert.deepEqual(capsInDimensions(config.ANTHROPIC_RATE_LIMITS), {
      all: { inputTokens: 40_000 },
      models: { m: { requests: 5 } },
    });
  });

  test('bad values stop the worker with the variable named', () => {
    for (const [name, value] of [
      ['ANTHROPIC_RATE_LIMITER', 'maybe'],
      ['ANTHROPIC_RATE_LIMITS', '{"tokensPerMinute":1}'],
      ['ANTHROPIC_RATE_LIMITS', 'not json'],
      ['ANTHROPIC_RATE_LIMIT_SHARE', '1.5'],
      ['ANTHROPIC_RATE_LIMIT_SHARE', '0'],
      ['ANTHROPIC_RATE_LIMIT_SCOPE', 'has spaces'],
    ] as const)
      assert.throws(() => loadConfig({ ...env, [name]: value }), new RegExp(name), `${name}=${value}`);
    assert.equal(rateLimitCapsSchema.safeParse({ requestsPerMinute: 0 }).success, false);
  });
});

describe("waits and the model call's retry attempts", () => {
  test('of 12 attempts, a long wait ends only the first 6: the last 6 are kept for errors (the wait is slept in them)', () => {
    const ending = Array.from({ length: 12 }, (_, i) => i + 1).filter((attempt) => waitMayEndAttempt(attempt, 12));
    assert.deepEqual(ending, [1, 2, 3, 4, 5, 6]);
  });

  test('with unlimited attempts every long wait ends its attempt', () => {
    assert.equal(waitMayEndAttempt(500, undefined), true);
    assert.equal(waitMayEndAttempt(500, 0), true);
  });
});
