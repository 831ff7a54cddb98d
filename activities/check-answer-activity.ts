// A typed answer checked against its schema: a local activity, so the check runs on the worker's main thread, where
// running long is harmless, and not in the workflow's isolate, whose timeout interrupts the activation and corrupts
// Node's async hooks. Its verdict is recorded in the history; replay reads it and never checks again.
import { ApplicationFailure } from '@temporalio/common';
import type { CheckAnswerInput, RecordedAnswerCheck } from '../common/activity-contracts';
import { ANSWER_CHECK_ACTIVITY_BUDGET, checkAnswer, checkTextAnswer } from '../common/structured-output';

/**
 * How long one attempt may check. The budget ends any check in well under a second; this is for a starved worker.
 * An attempt past it fails and is tried again: time says nothing about the answer, so it is never a verdict.
 */
export const ANSWER_CHECK_TIME_LIMIT_MS = 5_000;
/** The failure type of an attempt that ran out of time. */
export const ANSWER_CHECK_TIMED_OUT = 'AnswerCheckTimedOut';

export function createCheckAnswerActivity(timeLimitMs = ANSWER_CHECK_TIME_LIMIT_MS) {
  return {
    async checkTypedAnswer({ schema, answer }: CheckAnswerInput): Promise<RecordedAnswerCheck> {
      const deadline = Date.now() + timeLimitMs;
      const limits = {
        budget: ANSWER_CHECK_ACTIVITY_BUDGET,
        interrupt: () => {
          if (Date.now() <= deadline) return;
          throw ApplicationFailure.retryable(
            `checking the answer took longer than ${timeLimitMs} ms (a busy worker)`,
            ANSWER_CHECK_TIMED_OUT,
          );
        },
      };
      const check =
        'text' in answer ? checkTextAnswer(schema, answer.text, limits) : checkAnswer(schema, answer.value, limits);
      if (!check.ok) return check;
      const given = 'text' in answer ? (JSON.parse(answer.text) as unknown) : answer.value;
      return JSON.stringify(check.value) === JSON.stringify(given) ? { ok: true } : check;
    },
  };
}
