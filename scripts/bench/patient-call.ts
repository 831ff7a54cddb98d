// On an overloaded server an update RPC (update-with-start, awaitTurn) can give up with DEADLINE_EXCEEDED while the
// workflow goes on fine. A benchmark caller then waits for the outcome another way instead of counting a failure:
// `first` once, then `again` (which must not repeat side effects, e.g. awaitTurn instead of a second sendMessage)
// until it answers, a non-timeout error happens, or `deadline` (performance.now()) passes.
import { WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';

export function isRpcTimeout(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (e instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return true;
    if ((e as { code?: unknown }).code === 4 /* grpc DEADLINE_EXCEEDED */) return true;
  }
  return false;
}

export class DeadlinePassed extends Error {
  override name = 'DeadlinePassed';
}

export async function patiently<T>(
  first: () => Promise<T>,
  again: () => Promise<T>,
  deadline: number,
  onTimeout: () => void,
): Promise<T> {
  let call = first;
  for (;;) {
    try {
      return await call();
    } catch (err) {
      if (!isRpcTimeout(err)) throw err;
      onTimeout();
      if (performance.now() > deadline) throw new DeadlinePassed('the run deadline passed while waiting');
      call = again;
    }
  }
}
