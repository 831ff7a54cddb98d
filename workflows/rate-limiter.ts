// The limiter workflow (docs/rate-limits.md): one per scope, the fleet's shared rate-limit state (common/rate-limits.ts)
// held by Temporal itself. Model calls reserve with an update (validated: a bad one is rejected before it enters the
// history), and report what the API told with a signal (a bad one is dropped with a log line). It continues as new
// with its buckets after MAX_MESSAGES_PER_RUN messages or when Temporal suggests it, and ends after an idle period (the
// next call starts it again, and the next response's headers teach it the limits again).
import { ApplicationFailure } from '@temporalio/common';
import { allHandlersFinished, condition, continueAsNew, log, setHandler, workflowInfo } from '@temporalio/workflow';
import { observeSignal, rateLimitStateQuery, reserveUpdate } from '../common/rate-limiter-messages';
import {
  emptyRateLimitState,
  observationSchema,
  observe,
  prune,
  type RateLimitState,
  rateLimitStateSchema,
  reserve,
  type ReserveRequest,
  reserveRequestSchema,
} from '../common/rate-limits';
import { describeIssues } from '../common/options';
import { FailureType } from '../common/failure-types';

/** Updates and signals handled before the run continues as new (each adds a few events to the history). */
export const MAX_MESSAGES_PER_RUN = 1_000;
/** A limiter that handled nothing for this long ends. */
const IDLE_MS = 15 * 60_000;

export async function rateLimiter(carried?: RateLimitState): Promise<void> {
  const parsed = rateLimitStateSchema.safeParse(carried ?? emptyRateLimitState());
  if (!parsed.success) log.warn('The carried rate-limit state was malformed: starting afresh', {});
  const state: RateLimitState = parsed.success ? (parsed.data as RateLimitState) : emptyRateLimitState();
  let messages = 0;
  setHandler(
    reserveUpdate,
    (request: ReserveRequest) => {
      messages++;
      const now = Date.now();
      const answer = reserve(state, request, now);
      return { ...answer, readyAt: now + answer.waitMs };
    },
    {
      validator: (request: unknown) => {
        const checked = reserveRequestSchema.safeParse(request);
        if (!checked.success) {
          throw ApplicationFailure.create({
            type: FailureType.Rejected,
            message: `Invalid reservation: ${describeIssues(checked.error, 'reservation')}`,
            nonRetryable: true,
          });
        }
      },
    },
  );
  setHandler(observeSignal, (seen: unknown) => {
    const checked = observationSchema.safeParse(seen);
    if (!checked.success) {
      log.warn('A malformed observe signal was ignored', { issues: describeIssues(checked.error, 'observation') });
      return;
    }
    messages++;
    observe(state, checked.data, Date.now());
  });
  setHandler(rateLimitStateQuery, () => state);

  for (;;) {
    const before = messages;
    const full = await condition(
      () => messages >= MAX_MESSAGES_PER_RUN || workflowInfo().continueAsNewSuggested,
      IDLE_MS,
    );
    if (!full && messages === before && allHandlersFinished()) return;
    if (!full) continue;
    await condition(allHandlersFinished);
    prune(state, Date.now());
    await continueAsNew<typeof rateLimiter>(state);
  }
}
