// The limiter workflow (docs/rate-limits.md): one per scope, the fleet's shared rate-limit state (common/rate-limits.ts)
// held by Temporal itself. Model calls reserve with an update, a batch per worker process at a time (validated: a bad
// one is rejected before it enters the history), and report what the API told with a signal, a batch at a time (a bad
// report is dropped with a log line). It continues as new with its buckets before its history grows large or its
// updates reach the server's limit per run, and ends after an idle period (the next call starts it again, and the next
// response's headers teach it the limits again).
import { ApplicationFailure } from '@temporalio/common';
import { allHandlersFinished, condition, continueAsNew, log, setHandler, workflowInfo } from '@temporalio/workflow';
import { observeSignal, rateLimitStateQuery, reserveUpdate } from '../common/rate-limiter-messages';
import {
  emptyRateLimitState,
  MAX_BATCH,
  observationSchema,
  observe,
  prune,
  type RateLimitState,
  rateLimitStateSchema,
  reserve,
  reserveBatchSchema,
  type ReserveRequest,
} from '../common/rate-limits';
import { describeIssues } from '../common/options';
import { FailureType } from '../common/failure-types';

/** Updates a run takes before it continues as new (the server refuses more than 2,000 per run by default). */
export const MAX_UPDATES_PER_RUN = 1_000;
/** History events, and bytes, a run grows to before it continues as new. */
export const MAX_HISTORY_EVENTS = 5_000;
export const MAX_HISTORY_BYTES = 4 * 1024 * 1024;
/** A limiter that handled nothing for this long ends. */
const IDLE_MS = 15 * 60_000;

export async function rateLimiter(carried?: RateLimitState): Promise<void> {
  const parsed = rateLimitStateSchema.safeParse(carried ?? emptyRateLimitState());
  if (!parsed.success) {
    log.warn('The carried rate-limit state was malformed: starting afresh', {
      issues: describeIssues(parsed.error, 'state'),
    });
  }
  const state: RateLimitState = parsed.success ? (parsed.data as RateLimitState) : emptyRateLimitState();
  let messages = 0;
  let updates = 0;
  setHandler(
    reserveUpdate,
    (requests: ReserveRequest[]) => {
      messages++;
      updates++;
      const now = Date.now();
      return requests.map((request) => {
        const answer = reserve(state, request, now);
        return { ...answer, readyAt: now + answer.waitMs };
      });
    },
    {
      validator: (requests: unknown) => {
        const checked = reserveBatchSchema.safeParse(requests);
        if (!checked.success) {
          throw ApplicationFailure.create({
            type: FailureType.Rejected,
            message: `Invalid reservation: ${describeIssues(checked.error, 'reservations')}`,
            nonRetryable: true,
          });
        }
      },
    },
  );
  setHandler(observeSignal, (batch: unknown) => {
    messages++;
    if (!Array.isArray(batch)) {
      log.warn('A malformed observe signal was ignored: not a list of reports', {});
      return;
    }
    const now = Date.now();
    let dropped: { count: number; issues: string } | undefined;
    for (const seen of batch.slice(0, MAX_BATCH)) {
      const checked = observationSchema.safeParse(seen);
      if (checked.success) observe(state, checked.data, now);
      else dropped = { count: (dropped?.count ?? 0) + 1, issues: describeIssues(checked.error, 'observation') };
    }
    if (dropped) log.warn('Malformed reports were ignored', dropped);
  });
  setHandler(rateLimitStateQuery, () => state);

  const full = () => {
    const info = workflowInfo();
    return (
      updates >= MAX_UPDATES_PER_RUN ||
      info.historyLength >= MAX_HISTORY_EVENTS ||
      info.historySize >= MAX_HISTORY_BYTES ||
      info.continueAsNewSuggested
    );
  };
  for (;;) {
    const before = messages;
    const continuing = await condition(full, IDLE_MS);
    if (!continuing && messages === before && allHandlersFinished()) return;
    if (!continuing) continue;
    await condition(allHandlersFinished);
    prune(state, Date.now());
    await continueAsNew<typeof rateLimiter>(state);
  }
}
