// What the model reads when a tool call failed for good: the error's type and message, or which timeout ran out.
// Pure (no workflow APIs), so it is unit-tested with hand-made failures.
import { type ActivityFailure, ApplicationFailure, TimeoutFailure, TimeoutType } from '@temporalio/common';
import type { ToolPolicy } from '../common/activity-contracts';

/** `TickerNotFound: no ticker for "Genral Motors"`: what the model needs to correct itself. */
export function describeToolFailure(name: string, policy: ToolPolicy, failure: ActivityFailure): string {
  const cause = failure.cause;
  if (cause instanceof TimeoutFailure) {
    // The last attempt's timeout says what went wrong: a slow tool, or a worker that went silent (died, or was starved).
    const attempts = `(${policy.maximumAttempts} attempt(s))`;
    return cause.timeoutType === TimeoutType.HEARTBEAT
      ? `TimeoutError: ${name} sent no heartbeat for ${policy.heartbeatTimeout}; its worker stopped answering ${attempts}.`
      : `TimeoutError: ${name} did not finish within ${policy.startToCloseTimeout} ${attempts}.`;
  }
  if (cause instanceof ApplicationFailure) return `${cause.type ?? 'Error'}: ${cause.message}`;
  return `${cause?.name ?? 'Error'}: ${cause?.message ?? failure.message}`;
}
