// One model call's dealings with the fleet's rate limiter (activities/fleet-rate-limiter.ts, docs/rate-limits.md).
// Before each request it reserves the request's estimated cost; a short wait is slept here, a longer one ends the
// attempt (WaitingForRateLimit) so that Temporal starts the next attempt after the wait — a server-side timer, no
// worker slot held, no event in the conversation's history — and that attempt takes over the same reservation (its
// key travels in the heartbeat details) instead of reserving again. After each response it reports the headers and
// the usage that settles the estimate.
import type { BetaMessage, BetaMessageStreamParams } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import Anthropic from '@anthropic-ai/sdk';
import { ApplicationFailure, type Context } from '@temporalio/activity';
import { ModelFailureType } from '../common/failure-types';
import type { RateAmounts } from '../common/rate-limits';
import type { FleetRateLimiter } from './fleet-rate-limiter';
import { readRateLimitHeaders } from './rate-limit-headers';

/** A wait up to this long is slept in the attempt; a longer one ends it and Temporal waits instead. */
export const SHORT_WAIT_MS = 1_000;

/** Thrown before a request that must wait longer than SHORT_WAIT_MS; failureOf turns it into the retry. */
export class RateLimitWait extends Error {
  override name = 'RateLimitWait';
  constructor(
    readonly waitMs: number,
    readonly model: string,
    readonly waitingFor: string | undefined,
  ) {
    super(`Waiting ${(waitMs / 1000).toFixed(1)} s for rate-limit capacity (${waitingFor ?? 'limits'} of ${model})`);
  }
}

export class CallRateLimits {
  private requests = 0;
  /** The reservation an earlier attempt of this call made and waited for, not yet sent. */
  private pending: string | undefined;
  /** Each request's estimate, by key, until its reply reports it (the limiter learns how far off it was). */
  private readonly estimates = new Map<string, RateAmounts>();
  /** The requests sent without a reservation (a first call of a model, a limiter that did not answer). */
  private readonly unreserved = new Set<string>();

  constructor(
    private readonly limiter: FleetRateLimiter,
    private readonly context: Context,
  ) {
    this.pending = reservationKeyIn(context.info.heartbeatDetails);
  }

  /** Heartbeat details with the reservation still to send, so that the next attempt finds it. */
  details<T extends object>(base: T | undefined): (T & { rateLimitKey?: string }) | undefined {
    return this.pending ? { ...(base as T), rateLimitKey: this.pending } : base;
  }

  /** Reserves the request's cost; returns the reservation's key, after a short wait, or throws RateLimitWait. */
  async beforeSend(request: BetaMessageStreamParams): Promise<string> {
    const { info } = this.context;
    const run = info.workflowExecution;
    const key = this.pending ?? `${run?.workflowId}/${run?.runId}/${info.activityId}/${info.attempt}/${this.requests}`;
    this.requests++;
    // A model known to be unlimited costs no walk over the request (the estimate is as long as the transcript).
    if (!this.limiter.mayReserve(request.model)) {
      this.pending = undefined;
      return key;
    }
    const cost = requestCost(request);
    this.estimates.set(key, cost);
    const reserved = await this.limiter.reserve(request.model, key, cost);
    if (!reserved) this.unreserved.add(key);
    if (
      reserved &&
      reserved.waitMs > SHORT_WAIT_MS &&
      waitMayEndAttempt(info.attempt, info.retryPolicy?.maximumAttempts)
    ) {
      this.pending = key;
      throw new RateLimitWait(reserved.waitMs, request.model, reserved.waitingFor);
    }
    this.pending = undefined;
    if (reserved && reserved.waitMs > 0) await this.context.sleep(reserved.waitMs);
    return key;
  }

  /** As soon as a reply begins: its headers say whether its model is limited (the calls waiting to know go on). */
  onResponse(key: string, model: string, headers: Headers | undefined): void {
    // A `connect` listener that throws aborts the stream: what the headers teach is never worth the reply.
    try {
      const estimate = this.estimates.get(key);
      this.limiter.learn(model, readRateLimitHeaders(headers), {
        answered: true,
        ...(this.unreserved.has(key) && { unreserved: { key, ...(estimate && { estimate }) } }),
      });
    } catch {
      /* learned at the reply instead */
    }
  }

  /** After a reply: what its headers said, and its usage (the estimate settled, and compared with the usage). */
  afterReply(key: string, model: string, message: BetaMessage, headers: Headers | undefined): void {
    const { usage } = message;
    const reading = readRateLimitHeaders(headers);
    this.limiter.learn(model, reading, { answered: true });
    void this.limiter.report(model, key, reading, {
      usage: {
        requests: 1,
        inputTokens: (usage.input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0),
        outputTokens: usage.output_tokens ?? 0,
      },
      ...this.takeEstimate(key),
    });
  }

  /** After an error: a 429 took nothing and blocks for its retry-after; any error's headers teach the limits. */
  afterError(key: string, model: string, err: unknown): void {
    const estimate = this.takeEstimate(key);
    if (!(err instanceof Anthropic.APIError)) {
      this.limiter.learn(model, undefined, { answered: false });
      return;
    }
    const reading = readRateLimitHeaders(err.headers);
    this.limiter.learn(model, reading, { answered: err.status !== undefined });
    const refused = err.status === 429 ? { requests: 0, inputTokens: 0, outputTokens: 0 } : undefined;
    void this.limiter.report(model, key, reading, { ...(refused && { usage: refused }), ...estimate });
  }

  /** The request's estimate, and whether it went unreserved, for its last report. */
  private takeEstimate(key: string): { estimate?: RateAmounts; unreserved?: true } {
    const estimate = this.estimates.get(key);
    const unreserved = this.unreserved.has(key);
    this.estimates.delete(key);
    this.unreserved.delete(key);
    return { ...(estimate && { estimate }), ...(unreserved && { unreserved }) };
  }
}

/**
 * Whether a long wait may end attempt `attempt` (and so spend one of the retry policy's `maximumAttempts`): only while
 * more than half of them remain. Each request's wait spends at most one attempt (the next takes over its reservation),
 * but a retried error reserves again; in the second half a wait is slept in the attempt (its heartbeats go on), so
 * waits never take more than half the attempts the model call has for its errors.
 */
export function waitMayEndAttempt(attempt: number, maximumAttempts: number | undefined): boolean {
  if (!maximumAttempts) return true; // unlimited attempts: nothing to spend
  return maximumAttempts - attempt >= maximumAttempts / 2;
}

/** The failure that ends an attempt told to wait: retried after the wait, whatever the retry policy's backoff. */
export function waitFailure(wait: RateLimitWait): ApplicationFailure {
  return ApplicationFailure.create({
    type: ModelFailureType.WaitingForRateLimit,
    message: wait.message,
    nonRetryable: false,
    nextRetryDelay: Math.ceil(wait.waitMs),
  });
}

/**
 * What a request costs before it is sent: one request, its input by the usual rule of thumb (a token per 4 characters
 * of its JSON: tool definitions, tool calls and results are read as JSON), and its `max_tokens` of output — how the
 * API estimates output tokens per minute at admission. The limiter scales the input by what the API's usage has shown
 * of these estimates (common/rate-limits.ts), so the rule of thumb need not be exact.
 */
export function requestCost(request: BetaMessageStreamParams): RateAmounts {
  return {
    requests: 1,
    inputTokens: Math.ceil(jsonLength([request.system, request.messages, request.tools]) / 4),
    outputTokens: request.max_tokens,
  };
}

/**
 * About the length of `value` as JSON: strings with their quotes, keys, numbers, brackets and separators. Counted
 * without recursion, so a model's deeply nested tool input cannot stop it.
 */
export function jsonLength(value: unknown): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    if (typeof next === 'string')
      total += next.length + 3; // quotes and a separator
    else if (typeof next === 'number' || typeof next === 'boolean') total += String(next).length + 1;
    else if (Array.isArray(next)) {
      total += 2;
      for (const item of next) stack.push(item);
    } else if (typeof next === 'object' && next !== null) {
      total += 2;
      for (const [key, item] of Object.entries(next)) {
        if (item === undefined) continue;
        total += key.length + 3;
        stack.push(item);
      }
    } else if (next === null) total += 5;
  }
  return total;
}

function reservationKeyIn(details: unknown): string | undefined {
  const key = (details as { rateLimitKey?: unknown } | undefined)?.rateLimitKey;
  return typeof key === 'string' && key.length > 0 && key.length <= 1000 ? key : undefined;
}
