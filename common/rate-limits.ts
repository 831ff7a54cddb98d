// The fleet's rate limits as a pure state (docs/rate-limits.md): per model, one token bucket per dimension (requests,
// input tokens, output tokens per minute) that refills continuously, as the API's do. A reservation deducts its cost
// at once — the level may go below zero, a queue — and is told how long to wait until the level it left would have
// been back at zero (GCRA). What the API says after each response (limits, remaining, retry-after, the usage that
// settles the estimate) corrects the buckets. The limiter workflow (workflows/rate-limiter.ts) holds this state;
// nothing here reads a clock: `now` is passed in. Workflow-safe.
import { z } from 'zod';

export const RATE_DIMENSIONS = ['requests', 'inputTokens', 'outputTokens'] as const;
export type RateDimension = (typeof RATE_DIMENSIONS)[number];

/** An amount per dimension: a call's cost, a bucket's limit per minute, what the API says remains. */
export type RateAmounts = Partial<Record<RateDimension, number>>;

/** At most this many models are kept (the least recently used goes), so callers cannot grow the state. */
export const MAX_MODELS = 64;
/** Reservations kept for idempotency and settlement; the oldest go first. */
export const MAX_RESERVATIONS = 5_000;
/** A reservation is forgotten this long after its ready time (a call that never reported back). */
export const RESERVATION_TTL_MS = 10 * 60_000;
/** A model's buckets are blocked at most this long by one retry-after. */
export const MAX_BLOCK_MS = 10 * 60_000;
const MINUTE_MS = 60_000;

export interface Bucket {
  /** Per minute; the bucket's capacity too. */
  limit: number;
  /** May be negative: what was reserved ahead of the refill. */
  level: number;
  /** When `level` was last brought up to date (ms since the epoch). */
  at: number;
}

export interface ModelLimits {
  buckets: Partial<Record<RateDimension, Bucket>>;
  /**
   * What the API counts as input tokens per token of the calls' own estimate, learned from their usage (a moving
   * average): reservations are scaled by it, so a rule of thumb that counts short (JSON, another tokenizer) does not
   * overbook the bucket. Unset: 1.
   */
  inputRatio?: number;
  /** A 429's retry-after: no reservation is ready before this. */
  blockedUntil?: number;
  lastUsed: number;
}

export interface Reservation {
  model: string;
  cost: RateAmounts;
  readyAt: number;
  settled?: true;
}

/** What the limiter has handled since it first started (carried across continue-as-new), for operators and benches. */
export interface RateLimitTotals {
  /** Reservations made (asking again with the same key not counted). */
  reserved: number;
  /** Of those, the ones told to wait. */
  waited: number;
  /** Reports of a response received. */
  observed: number;
  /** Reports of a 429 (a retry-after). */
  refused: number;
}

export interface RateLimitState {
  models: Record<string, ModelLimits>;
  reservations: Record<string, Reservation>;
  totals?: RateLimitTotals;
}

export function emptyRateLimitState(): RateLimitState {
  return { models: {}, reservations: {}, totals: emptyTotals() };
}

function emptyTotals(): RateLimitTotals {
  return { reserved: 0, waited: 0, observed: 0, refused: 0 };
}

/** The input ratio stays within these bounds (a wild report cannot stop a model's calls, nor unleash them). */
export const INPUT_RATIO_BOUNDS = [0.05, 20] as const;
/** How much one report moves the input ratio. */
const INPUT_RATIO_WEIGHT = 0.2;

const amount = z.number().finite().min(0).max(1e12);
const amountsSchema = z
  .object({ requests: amount.optional(), inputTokens: amount.optional(), outputTokens: amount.optional() })
  .strict();
const modelSchema = z.string().min(1).max(200);
const keySchema = z.string().min(1).max(1000);

/** What a model call asks for (the `reserve` update). */
export const reserveRequestSchema = z
  .object({
    /** One attempt of one call: asking again with the same key gets the same reservation, not a second one. */
    key: keySchema,
    model: modelSchema,
    cost: amountsSchema,
    /** Limits this worker is configured with (they only lower what was learned); known before any header. */
    caps: amountsSchema.optional(),
  })
  .strict();
export type ReserveRequest = z.infer<typeof reserveRequestSchema>;

/** Requests or reports in one message, at most (a worker sends what gathered while its last message was on its way). */
export const MAX_BATCH = 200;

/** The `reserve` update's argument: a batch of reservations, each checked. */
export const reserveBatchSchema = z.array(reserveRequestSchema).min(1).max(MAX_BATCH);

export interface ReserveAnswer {
  /** 0: go now. */
  waitMs: number;
  /** The dimension that makes it wait the longest, or `retry-after`. */
  waitingFor?: RateDimension | 'retry-after';
}

/** What a response told (the `observe` signal): each part optional. */
export const observationSchema = z
  .object({
    model: modelSchema,
    /** The reservation the response answers: its estimate is settled against `usage`. */
    key: keySchema.optional(),
    /** The limits the headers gave, with the worker's share and caps applied. */
    limits: amountsSchema.optional(),
    remaining: amountsSchema.optional(),
    retryAfterMs: amount.optional(),
    /** What the response really cost, in the dimensions the API counts. */
    usage: amountsSchema.optional(),
    /** The call's own estimate of its cost, unscaled: the input ratio is learned from it and `usage`. */
    estimate: amountsSchema.optional(),
    /**
     * The request `key` names went without a reservation (a worker's first call of a model, a reservation that timed
     * out): what it takes is accounted now, so that the calls queued behind it do not count on it.
     */
    unreserved: z.literal(true).optional(),
  })
  .strict();
export type Observation = z.infer<typeof observationSchema>;

/** The state a continued-as-new limiter starts from: checked, as any input. */
export const rateLimitStateSchema = z.object({
  models: z.record(
    modelSchema,
    z.object({
      // partialRecord: a model may know some dimensions only (z.record of an enum demands every key).
      buckets: z.partialRecord(
        z.enum(RATE_DIMENSIONS),
        z.object({ limit: amount, level: z.number().finite(), at: z.number().finite() }),
      ),
      blockedUntil: z.number().finite().optional(),
      lastUsed: z.number().finite(),
      inputRatio: z.number().min(INPUT_RATIO_BOUNDS[0]).max(INPUT_RATIO_BOUNDS[1]).optional(),
    }),
  ),
  reservations: z.record(
    keySchema,
    z.object({
      model: modelSchema,
      cost: amountsSchema,
      readyAt: z.number().finite(),
      settled: z.literal(true).optional(),
    }),
  ),
  totals: z.object({ reserved: amount, waited: amount, observed: amount, refused: amount }).optional(),
});

/** The bucket brought up to `now`: refilled at limit per minute, never above its limit. */
export function refill(bucket: Bucket, now: number): void {
  if (now > bucket.at) {
    bucket.level = Math.min(bucket.limit, bucket.level + ((now - bucket.at) * bucket.limit) / MINUTE_MS);
    bucket.at = now;
  }
}

/** Deducts `cost` now; returns how long until the level is back at zero (0 when it did not go below). */
export function take(bucket: Bucket, cost: number, now: number): number {
  refill(bucket, now);
  bucket.level -= cost;
  return bucket.level >= 0 ? 0 : Math.ceil((-bucket.level * MINUTE_MS) / bucket.limit);
}

/** Reserves a call's cost in its model's buckets; the same key again returns the same reservation's remaining wait. */
export function reserve(state: RateLimitState, request: ReserveRequest, now: number): ReserveAnswer {
  const known = state.reservations[request.key];
  if (known) return { waitMs: Math.max(0, known.readyAt - now) };
  const model = modelLimits(state, request.model, now);
  if (request.caps) applyLimits(state, request.model, request.caps, now, { lowerOnly: true });
  const cost = scaledCost(request.cost, model);
  let answer: ReserveAnswer = { waitMs: 0 };
  for (const dimension of RATE_DIMENSIONS) {
    const bucket = model.buckets[dimension];
    const due = cost[dimension];
    if (!bucket || !due) continue;
    const wait = take(bucket, due, now);
    if (wait > answer.waitMs) answer = { waitMs: wait, waitingFor: dimension };
  }
  const blocked = (model.blockedUntil ?? 0) - now;
  if (blocked > answer.waitMs) answer = { waitMs: blocked, waitingFor: 'retry-after' };
  keepReservation(state, request.key, { model: request.model, cost, readyAt: now + answer.waitMs }, now);
  const totals = (state.totals ??= emptyTotals());
  totals.reserved++;
  if (answer.waitMs > 0) totals.waited++;
  return answer;
}

/** A call's estimate as the API will count it: its input tokens times the model's learned ratio. */
function scaledCost(cost: RateAmounts, model: ModelLimits): RateAmounts {
  if (cost.inputTokens === undefined || model.inputRatio === undefined) return cost;
  return { ...cost, inputTokens: Math.ceil(cost.inputTokens * model.inputRatio) };
}

/** Moves the model's input ratio towards what one answered request's usage says of its estimate. */
function learnInputRatio(model: ModelLimits, seen: Observation): void {
  const estimated = seen.estimate?.inputTokens;
  const used = seen.usage?.inputTokens;
  // A refused request reports no usage (requests: 0): it says nothing of the estimate.
  if (!estimated || used === undefined || seen.usage?.requests === 0) return;
  const [low, high] = INPUT_RATIO_BOUNDS;
  const ratio = Math.min(high, Math.max(low, used / estimated));
  const previous = model.inputRatio;
  model.inputRatio = previous === undefined ? ratio : previous + (ratio - previous) * INPUT_RATIO_WEIGHT;
}

/** What a response told: limits learned, the level clamped to what remains, a retry-after, the estimate settled. */
export function observe(state: RateLimitState, seen: Observation, now: number): void {
  const model = modelLimits(state, seen.model, now);
  const totals = (state.totals ??= emptyTotals());
  totals.observed++;
  if (seen.retryAfterMs !== undefined) totals.refused++;
  learnInputRatio(model, seen);
  const known = new Set(RATE_DIMENSIONS.filter((dimension) => model.buckets[dimension]));
  if (seen.limits) applyLimits(state, seen.model, seen.limits, now, { lowerOnly: false });
  for (const dimension of RATE_DIMENSIONS) {
    const bucket = model.buckets[dimension];
    const remaining = seen.remaining?.[dimension];
    if (!bucket || remaining === undefined) continue;
    refill(bucket, now);
    // Other fleets of the organisation spend from the same limits: the API's word is the upper bound.
    bucket.level = Math.min(bucket.level, remaining);
  }
  if (seen.retryAfterMs !== undefined) {
    const until = now + Math.min(seen.retryAfterMs, MAX_BLOCK_MS);
    model.blockedUntil = Math.max(model.blockedUntil ?? 0, until);
  }
  if (seen.unreserved && seen.key !== undefined && !state.reservations[seen.key]) {
    accountUnreserved(state, model, seen, seen.key, known, now);
    return;
  }
  const reservation = seen.key !== undefined ? state.reservations[seen.key] : undefined;
  if (reservation && !reservation.settled && reservation.model === seen.model && seen.usage) {
    reservation.settled = true;
    for (const dimension of RATE_DIMENSIONS) {
      const bucket = model.buckets[dimension];
      const used = seen.usage[dimension];
      if (!bucket || used === undefined) continue;
      refill(bucket, now);
      // What the estimate took too much comes back (never above the limit); what it took too little is taken now.
      bucket.level = Math.min(bucket.limit, bucket.level + (reservation.cost[dimension] ?? 0) - used);
    }
  }
}

/**
 * A request that went without a reservation, first reported: its cost (the usage, or else its estimate, scaled) is
 * taken from each bucket that existed before this report — a bucket this report created started from the API's
 * `remaining`, which counted it already — and kept as its reservation, so that a later report of its usage settles it
 * as any other (in a bucket created from its own headers, that gives back the `max_tokens` the API charged and will
 * give back too; the input is off by one request's estimate at most).
 */
function accountUnreserved(
  state: RateLimitState,
  model: ModelLimits,
  seen: Observation,
  key: string,
  known: ReadonlySet<RateDimension>,
  now: number,
): void {
  const cost = seen.usage ?? scaledCost(seen.estimate ?? {}, model);
  for (const dimension of known) {
    const due = cost[dimension];
    if (due) take(model.buckets[dimension]!, due, now);
  }
  keepReservation(state, key, { model: seen.model, cost, readyAt: now, ...(seen.usage && { settled: true }) }, now);
}

/** Drops what is past its use: reservations long ready, blocks that ended. Keeps the state bounded over time. */
export function prune(state: RateLimitState, now: number): void {
  for (const [key, reservation] of Object.entries(state.reservations)) {
    if (reservation.readyAt + RESERVATION_TTL_MS < now) delete state.reservations[key];
  }
  for (const model of Object.values(state.models)) {
    if (model.blockedUntil !== undefined && model.blockedUntil <= now) delete model.blockedUntil;
  }
}

function modelLimits(state: RateLimitState, name: string, now: number): ModelLimits {
  let model = state.models[name];
  if (!model) {
    const names = Object.keys(state.models);
    if (names.length >= MAX_MODELS) {
      const oldest = names.reduce((a, b) => (state.models[a]!.lastUsed <= state.models[b]!.lastUsed ? a : b));
      delete state.models[oldest];
    }
    model = { buckets: {}, lastUsed: now };
    state.models[name] = model;
  }
  model.lastUsed = now;
  return model;
}

/**
 * New limits: a bucket is created full, less what the calls still in flight reserved before it existed (the first
 * responses' headers are older than those calls; counting one twice errs on the safe side, and settles). An existing
 * bucket keeps its level (at most the new limit).
 */
function applyLimits(
  state: RateLimitState,
  name: string,
  limits: RateAmounts,
  now: number,
  { lowerOnly }: { lowerOnly: boolean },
): void {
  const model = state.models[name]!;
  for (const dimension of RATE_DIMENSIONS) {
    const limit = limits[dimension];
    if (limit === undefined || limit <= 0) continue;
    const bucket = model.buckets[dimension];
    if (!bucket) {
      model.buckets[dimension] = { limit, level: limit - inFlight(state, name, dimension, now), at: now };
      continue;
    }
    refill(bucket, now);
    bucket.limit = lowerOnly ? Math.min(bucket.limit, limit) : limit;
    bucket.level = Math.min(bucket.level, bucket.limit);
  }
}

/** What the unsettled reservations of the last minute took in `dimension` of the model `name`. */
function inFlight(state: RateLimitState, name: string, dimension: RateDimension, now: number): number {
  let total = 0;
  for (const reservation of Object.values(state.reservations)) {
    if (reservation.model === name && !reservation.settled && reservation.readyAt > now - MINUTE_MS)
      total += reservation.cost[dimension] ?? 0;
  }
  return total;
}

function keepReservation(state: RateLimitState, key: string, reservation: Reservation, now: number): void {
  const keys = Object.keys(state.reservations);
  if (keys.length >= MAX_RESERVATIONS) {
    prune(state, now);
    // Insertion order is age order: the oldest go.
    const left = Object.keys(state.reservations);
    for (const old of left.slice(0, Math.max(0, left.length - MAX_RESERVATIONS + 1))) delete state.reservations[old];
  }
  state.reservations[key] = reservation;
}
