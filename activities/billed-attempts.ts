// What the attempts of one model call billed. Temporal retries a model activity whose attempt failed (an `event: error`
// in the middle of a stream, a dropped connection) without asking the workflow, yet an attempt that got as far as
// `message_start` was billed its prompt and what it streamed. So every heartbeat of an attempt carries the total so
// far, its own usage included; the next attempt reads it from its heartbeat details (Temporal hands them over, and a
// failing attempt's last heartbeat is flushed with its failure). A reply carries what the attempts before it billed as
// `failedAttempts`; the last failure carries the total in its details; a timeout's last heartbeat details hold it.
// And a retry is checked against the call's budget guard before it is sent, with that total added to what was spent.
import type { BetaMessage } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { Message } from '@anthropic-ai/sdk/resources/messages';
import { ApplicationFailure, type Context } from '@temporalio/activity';
import { billedTokens, type CallGuard, checkBudget, spentWith } from '../common/budget';
import type { TokenUsage } from '../common/conversation-types';
import { FailureType } from '../common/failure-types';
import { addUsage, billedIn } from '../common/usage';

/** What the SDK's stream knows of the message so far (`stream.currentMessage`). */
type Snapshot = Pick<Message | BetaMessage, 'usage' | 'content'>;

export class AttemptBilling {
  /** What the attempts before this one billed; undefined when none billed anything (or this is the first). */
  readonly before: TokenUsage | undefined;
  private snapshot: () => Snapshot | undefined = () => undefined;

  constructor(context: Context) {
    this.before = context.info.attempt > 1 ? billedIn(context.info.heartbeatDetails) : undefined;
  }

  /** Follows this attempt's stream: from `message_start` on, its prompt and what it streamed are billed. */
  follow(stream: { readonly currentMessage: Snapshot | undefined }): void {
    this.snapshot = () => stream.currentMessage;
  }

  /** The attempts before this one, and this one so far. */
  total(): TokenUsage | undefined {
    const own = attemptUsage(this.snapshot());
    if (!own) return this.before;
    return this.before ? addUsage(this.before, own) : own;
  }

  /** What each heartbeat of the attempt carries besides its own details, so that no heartbeat loses the total. */
  details(): { billed: TokenUsage } | undefined {
    const billed = this.total();
    return billed && { billed };
  }

  /**
   * Throws a failure that is not retried when the call's budget guard no longer allows this attempt: what was spent
   * when the call was admitted, plus what its failed attempts billed, plus the call's estimate again.
   */
  checkRetry(guard: CallGuard | undefined): void {
    if (!guard || !this.before) return;
    const spent = spentWith(guard.spent, this.before, guard.prices);
    const verdict = checkBudget(guard.budget, spent, guard.estimate, guard.model);
    if (verdict.ok) return;
    throw ApplicationFailure.create({
      type: FailureType.BudgetExhausted,
      message: `An attempt of this call failed after billing ${billedTokens(this.before)} tokens; it is not retried. ${verdict.message}`,
      nonRetryable: true,
      details: [{ scope: verdict.scope, billed: this.before }],
    });
  }
}

/**
 * What an attempt billed by what its stream showed: `message_start`'s prompt, and its output — the last count the API
 * sent, or about a token per 4 characters of what streamed when that is more (a stream cut short never sends the
 * final count). Undefined before `message_start`: nothing was billed.
 */
export function attemptUsage(snapshot: Snapshot | undefined): TokenUsage | undefined {
  if (!snapshot) return undefined;
  const { usage } = snapshot;
  const streamed = snapshot.content.map((block) => {
    if (block.type === 'text') return block.text.length;
    if (block.type === 'thinking') return block.thinking.length;
    if (block.type === 'tool_use') return JSON.stringify(block.input ?? {}).length;
    return 0;
  });
  const streamedTokens = Math.ceil(streamed.reduce((sum, chars) => sum + chars, 0) / 4);
  return {
    inputTokens: usage.input_tokens ?? 0,
    outputTokens: Math.max(usage.output_tokens ?? 0, streamedTokens),
    cacheReadInputTokens: usage.cache_read_input_tokens ?? 0,
    cacheCreationInputTokens: usage.cache_creation_input_tokens ?? 0,
  };
}
