// Per-minute rate limits as the API enforces them (https://platform.claude.com/docs/en/api/rate-limits): one token
// bucket per dimension (requests, input tokens, output tokens) and per model, whose capacity is the per-minute limit
// and which refills continuously at limit/60 per second. A request is admitted only when every configured dimension
// has room for it; then it takes 1 request, its input tokens and an output estimate (its `max_tokens`, as the API
// estimates OTPM), and the estimate is settled against the output it really produced once the reply ends.
//
// Pure: the clock is passed in, so the arithmetic is tested without waiting.
import { z } from 'zod';

/** `MESSAGES_API_RATE_LIMITS`, `POST /_test/rate-limits`, `setRateLimits`: each limit optional; null or {} is none. */
export const rateLimitsSchema = z
  .object({
    requestsPerMinute: z.number().int().positive().optional(),
    inputTokensPerMinute: z.number().int().positive().optional(),
    outputTokensPerMinute: z.number().int().positive().optional(),
  })
  .strict()
  .nullable();

export type RateLimits = NonNullable<z.infer<typeof rateLimitsSchema>>;

/** The dimensions by their header names (`anthropic-ratelimit-<name>-*`). */
type Dimension = 'requests' | 'input-tokens' | 'output-tokens';

const LIMIT_OF: Record<Dimension, keyof RateLimits> = {
  requests: 'requestsPerMinute',
  'input-tokens': 'inputTokensPerMinute',
  'output-tokens': 'outputTokensPerMinute',
};

const DESCRIBED: Record<Dimension, string> = {
  requests: 'requests',
  'input-tokens': 'input tokens',
  'output-tokens': 'output tokens',
};

/** A bucket of `capacity` that refills `capacity` per minute, continuously. Its level may go below 0 (a debt). */
export class TokenBucket {
  private level: number;
  private updatedAt: number;

  constructor(
    readonly capacity: number,
    now: number,
  ) {
    this.level = capacity;
    this.updatedAt = now;
  }

  /** Refill per millisecond. */
  get ratePerMs(): number {
    return this.capacity / 60_000;
  }

  /** The level at `now` (never above capacity). */
  levelAt(now: number): number {
    const elapsed = Math.max(0, now - this.updatedAt);
    this.level = Math.min(this.capacity, this.level + elapsed * this.ratePerMs);
    this.updatedAt = Math.max(this.updatedAt, now);
    return this.level;
  }

  /** Milliseconds until `amount` fits (0: it fits now); an amount over capacity: until the bucket is full. */
  waitMs(amount: number, now: number): number {
    const missing = Math.min(amount, this.capacity) - this.levelAt(now);
    return missing <= 0 ? 0 : missing / this.ratePerMs;
  }

  take(amount: number, now: number): void {
    this.levelAt(now);
    this.level -= amount;
  }

  /** Gives back what was taken and not used (never above capacity). */
  give(amount: number, now: number): void {
    this.levelAt(now);
    this.level = Math.min(this.capacity, this.level + amount);
  }

  /** When the bucket will be full again. */
  fullAt(now: number): number {
    return now + (this.capacity - this.levelAt(now)) / this.ratePerMs;
  }
}

/** What one request costs at admission. */
export interface RequestCost {
  inputTokens: number;
  /** The output estimate: the request's `max_tokens`. */
  outputTokens: number;
}

export type Admission =
  | {
      ok: true;
      headers: Record<string, string>;
      /** Settles the request once its reply ended: the output it produced and the input the cache served. */
      settle(used: { outputTokens: number; cacheReadInputTokens: number }, now: number): void;
    }
  | { ok: false; headers: Record<string, string>; retryAfterSeconds: number; message: string };

/** RFC 3339 at whole seconds (rounded up), as the API writes its reset times. */
function rfc3339(ms: number): string {
  return new Date(Math.ceil(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** Token counts in the headers are rounded to the nearest thousand, as the API's are; requests are exact. */
function shownRemaining(dimension: Dimension, level: number): number {
  const remaining = Math.max(0, Math.floor(level));
  return dimension === 'requests' ? remaining : Math.round(remaining / 1000) * 1000;
}

/** The buckets of every model, for one set of limits. */
export class RateLimiter {
  private readonly buckets = new Map<string, Map<Dimension, TokenBucket>>();

  constructor(readonly limits: RateLimits) {}

  /** Whether any limit is configured. */
  get active(): boolean {
    return (Object.keys(LIMIT_OF) as Dimension[]).some((d) => this.limits[LIMIT_OF[d]] !== undefined);
  }

  private bucketsOf(model: string, now: number): Map<Dimension, TokenBucket> {
    let buckets = this.buckets.get(model);
    if (!buckets) {
      buckets = new Map();
      for (const dimension of Object.keys(LIMIT_OF) as Dimension[]) {
        const limit = this.limits[LIMIT_OF[dimension]];
        if (limit !== undefined) buckets.set(dimension, new TokenBucket(limit, now));
      }
      this.buckets.set(model, buckets);
    }
    return buckets;
  }

  /** Admits the request (taking its cost from every bucket) or refuses it (taking nothing). */
  admit(model: string, cost: RequestCost, now: number): Admission {
    const buckets = this.bucketsOf(model, now);
    const amounts: Record<Dimension, number> = {
      requests: 1,
      'input-tokens': cost.inputTokens,
      'output-tokens': cost.outputTokens,
    };
    let waitMs = 0;
    let refused: Dimension | undefined;
    let tooLarge = false;
    for (const [dimension, bucket] of buckets) {
      const wait = bucket.waitMs(amounts[dimension], now);
      if (wait > 0 || amounts[dimension] > bucket.capacity) {
        if (refused === undefined || wait > waitMs) refused = dimension;
        waitMs = Math.max(waitMs, wait);
        if (amounts[dimension] > bucket.capacity) tooLarge = true;
      }
    }
    if (refused !== undefined) {
      const limit = buckets.get(refused)?.capacity ?? 0;
      const message = tooLarge
        ? `This request would exceed your organization's rate limit of ${limit.toLocaleString('en-US')} ` +
          `${DESCRIBED[refused]} per minute (model: ${model}) on its own: reduce the prompt length or max_tokens.`
        : `This request would exceed your organization's rate limit of ${limit.toLocaleString('en-US')} ` +
          `${DESCRIBED[refused]} per minute (model: ${model}). Please try again later, or see the response headers ` +
          `for current usage.`;
      return {
        ok: false,
        headers: this.headersAt(buckets, now),
        retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)),
        message,
      };
    }
    for (const [dimension, bucket] of buckets) bucket.take(amounts[dimension], now);
    const headers = this.headersAt(buckets, now);
    let settled = false;
    return {
      ok: true,
      headers,
      settle: (used, at) => {
        if (settled) return;
        settled = true;
        this.settle(buckets, cost, used, at);
      },
    };
  }

  /** Gives back the unused part of the output estimate and the input tokens the cache served. */
  private settle(
    buckets: Map<Dimension, TokenBucket>,
    cost: RequestCost,
    used: { outputTokens: number; cacheReadInputTokens: number },
    now: number,
  ): void {
    buckets.get('output-tokens')?.give(cost.outputTokens - used.outputTokens, now);
    buckets.get('input-tokens')?.give(Math.min(cost.inputTokens, used.cacheReadInputTokens), now);
  }

  /** The headers of the model's buckets as they are now, without taking anything. */
  headers(model: string, now: number): Record<string, string> {
    // A model never admitted shows full buckets, and gets none kept for it (the model name is the caller's).
    if (!this.buckets.has(model)) return this.headersAt(new RateLimiter(this.limits).bucketsOf(model, now), now);
    return this.headersAt(this.bucketsOf(model, now), now);
  }

  private headersAt(buckets: Map<Dimension, TokenBucket>, now: number): Record<string, string> {
    const headers: Record<string, string> = {};
    let tightest: { bucket: TokenBucket; dimension: Dimension; level: number } | undefined;
    for (const [dimension, bucket] of buckets) {
      const level = bucket.levelAt(now);
      headers[`anthropic-ratelimit-${dimension}-limit`] = String(bucket.capacity);
      headers[`anthropic-ratelimit-${dimension}-remaining`] = String(shownRemaining(dimension, level));
      headers[`anthropic-ratelimit-${dimension}-reset`] = rfc3339(bucket.fullAt(now));
      if (dimension !== 'requests' && (tightest === undefined || level < tightest.level))
        tightest = { bucket, dimension, level };
    }
    // `tokens-*`: the most restrictive token limit in effect (the one with the fewest tokens left).
    if (tightest) {
      headers['anthropic-ratelimit-tokens-limit'] = String(tightest.bucket.capacity);
      headers['anthropic-ratelimit-tokens-remaining'] = String(shownRemaining(tightest.dimension, tightest.level));
      headers['anthropic-ratelimit-tokens-reset'] = rfc3339(tightest.bucket.fullAt(now));
    }
    return headers;
  }
}
