// Waiting for the next user message, the end, or the idle timeout — and for Temporal's suggestion to continue as new.
// A conversation that waits still grows its history: each long poll of a parked reader is an update (a few events, a
// timer), so a reader left open on an idle conversation would, in hours, reach the history's limits and the 2,000
// updates Temporal takes per run, after which even `sendMessage` is refused. When Temporal suggests it, the run moves
// on to a new one (nothing is lost: the messages, the log and its offsets are carried); the idle timeout starts again
// there. Histories recorded before this waited on (no `patched` marker), and replay the same.
import { CancellationScope, condition, patched, workflowInfo } from '@temporalio/workflow';
import type { ConversationState } from './conversation-state';

export const CONTINUE_AS_NEW_WHILE_WAITING = 'continue-as-new-while-waiting';

/** True: a message came, or the end was asked for; false: the idle timeout passed; or the run should move on. */
export async function waitForUser(state: ConversationState): Promise<boolean | 'continue-as-new'> {
  const woke = condition(() => state.hasPendingMessage || state.endRequested, state.options.timeouts.idle);
  const suggestion = new CancellationScope();
  const suggested = suggestion
    // With Worker Deployments on, a newer build promoted is a reason too: the run moves to it (conversation.ts).
    .run(() =>
      condition(() => workflowInfo().continueAsNewSuggested || workflowInfo().targetWorkerDeploymentVersionChanged),
    )
    .then(
      () => 'suggested' as const,
      () => 'cancelled' as const,
    );
  const first = await Promise.race([woke, suggested]);
  if (first === 'suggested') return patched(CONTINUE_AS_NEW_WHILE_WAITING) ? 'continue-as-new' : woke;
  if (first === 'cancelled') return woke; // the workflow itself is cancelled: `woke` rejects with it
  suggestion.cancel();
  return first;
}
