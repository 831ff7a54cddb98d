// Where a typed answer is checked: in a local activity (activities/check-answer-activity.ts), whose recorded verdict
// replay reads instead of checking again. A local activity, not an activity: the check is short, CPU-bound and needs
// nothing but its input, so it runs on the workflow's own worker within the workflow task (one marker in the history,
// no task queue round trip), and its timeout, unlike the workflow isolate's, harms nothing.
import { isCancellation, patched, proxyLocalActivities } from '@temporalio/workflow';
import type { CheckAnswerInput, RecordedAnswerCheck } from '../common/activity-contracts';
import { boundedText } from '../common/safe-text';
import { type AnswerCheck, checkAnswer, checkTextAnswer } from '../common/structured-output';

/** Histories from before it checked every answer in workflow code, with no activity: they replay that way. */
export const ANSWER_CHECK_ACTIVITY_PATCH = 'typed-answer-check-activity';

const { checkTypedAnswer } = proxyLocalActivities<{
  checkTypedAnswer(input: CheckAnswerInput): Promise<RecordedAnswerCheck>;
}>({
  // Over the activity's own time limit (5 s), so a starved attempt ends with its own failure first.
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 3 },
});

/** The verdict on `answer`; never throws but to cancel. An answer that could not be checked at all is wrong. */
export async function checkedAnswer(
  schema: Record<string, unknown>,
  answer: CheckAnswerInput['answer'],
): Promise<AnswerCheck> {
  if (!patched(ANSWER_CHECK_ACTIVITY_PATCH)) {
    return 'text' in answer ? checkTextAnswer(schema, answer.text) : checkAnswer(schema, answer.value);
  }
  let recorded: RecordedAnswerCheck;
  try {
    recorded = await checkTypedAnswer({ schema, answer });
  } catch (error) {
    if (isCancellation(error)) throw error;
    const why = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
    return { ok: false, error: `the answer could not be checked (${boundedText(why, 200)})` };
  }
  if (!recorded.ok) return recorded;
  if ('value' in recorded) return { ok: true, value: recorded.value };
  // Unchanged by the check: the answer itself, as the history holds it in the reply.
  return { ok: true, value: 'text' in answer ? (JSON.parse(answer.text) as unknown) : answer.value };
}
