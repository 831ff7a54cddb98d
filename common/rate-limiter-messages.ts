// The limiter workflow's name, id and messages (docs/rate-limits.md): what a worker's model call and the limiter
// (workflows/rate-limiter.ts) share. One limiter per scope: the workers that share an organisation's limits.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { Observation, RateLimitState, ReserveAnswer, ReserveRequest } from './rate-limits';

export const RATE_LIMITER_WORKFLOW = 'rateLimiter';

/** The limiter's workflow id for a scope (a digest of the API's URL and key, or ANTHROPIC_RATE_LIMIT_SCOPE). */
export function rateLimiterId(scope: string): string {
  return `claude-rate-limits:${scope}`;
}

/**
 * Reserves calls' costs, a batch at a time (a worker process sends what its calls asked for while its last batch was
 * on its way: Temporal takes at most a few updates in flight per workflow): for each, in order, how long to wait (0:
 * go now) and when it is ready, by the limiter's clock.
 */
export const reserveUpdate = defineUpdate<Array<ReserveAnswer & { readyAt: number }>, [requests: ReserveRequest[]]>(
  'reserve',
);

/** What responses told (headers, retry-after, usage), a batch at a time: fire and forget. */
export const observeSignal = defineSignal<[seen: Observation[]]>('observe');

/** The buckets as they are now, for operators and tests. */
export const rateLimitStateQuery = defineQuery<RateLimitState>('rateLimitState');
