// Callers waiting on a turn: `sendMessage` and `awaitTurn` each hold one of the few updates Temporal lets a workflow
// have in flight (`history.maxInFlightUpdates`, 10 by default) until their turn ends. Enough of them would take every
// slot, and then nothing gets in — not even the approval the turn waits for. So a conversation takes at most
// MAX_TURN_WAITERS of them at once, and refuses the next in the update's validator (a refused update is not written
// to the history, nor counted in the 2,000 updates a run takes) with ConversationBusy, which the client reports as
// `busy`. A burst of callers may still meet Temporal's own limit for a moment (each holds a slot until the workflow
// refuses it): their client retries, and is then refused `busy`. Counted here, in the run's memory:
// validators do not run on replay, and a run that continues as new starts with none in flight.
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../common/failure-types';

/**
 * With the long polls' MAX_POLLS_IN_FLIGHT (4, streaming/stream-events.ts), Temporal's default of 10 updates in flight
 * leaves 2 for the updates that answer at once: an approval, `submitMessage`.
 */
export const MAX_TURN_WAITERS = 4;

export class TurnWaiters {
  private waiting = 0;

  /** For a validator: throws ConversationBusy when MAX_TURN_WAITERS callers wait already (nothing changed). */
  admit(): void {
    if (this.waiting < MAX_TURN_WAITERS) return;
    throw ApplicationFailure.create({
      type: FailureType.Busy,
      message: `${MAX_TURN_WAITERS} callers wait on this conversation's turns already (its limit): try again when one is answered, or follow the conversation's events instead.`,
      nonRetryable: true,
    });
  }

  /**
   * One more caller waits, from now (before any other update's validator runs) until the returned `leave` is called.
   * No promise of its own: the handler completes at the same point of the workflow task as without the count.
   */
  enter(): () => void {
    this.waiting++;
    return () => void this.waiting--;
  }
}
