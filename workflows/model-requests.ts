// The one door every request the orchestrator sends to the Messages API for a conversation passes: each model call
// and each retry up the max_tokens ladder (ask-model.ts), the orchestrator's own summary call (compact-context.ts) and
// count_tokens (budget-guard.ts). Their activities are proxied here and nowhere else, and a model call or a summary
// is sent only with an admission: the budget's verdict on what was spent plus the request's estimate. The admission's
// guard travels with the request, so the activity checks Temporal's retries of it the same way
// (activities/billed-attempts.ts). What a request's failed attempts billed is counted here, whether it ended in a
// reply or a failure.
import { ActivityFailure, ApplicationFailure, RetryState, TimeoutFailure } from '@temporalio/common';
import {
  type ActivityOptions,
  CancellationScope,
  isCancellation,
  patched,
  proxyActivities,
  setCurrentDetails,
  sleep,
} from '@temporalio/workflow';
import type {
  BatchedCall,
  BatchedCallCheck,
  CallModelInput,
  CallModelResult,
  CheckBatchedCallInput,
  SubmitBatchedCallInput,
  SummariseContextInput,
  SummariseContextResult,
} from '../common/activity-contracts';
import { type BatchMode, MAX_POLLS, MAX_SUBMISSIONS, pollDelayMs } from '../common/batch-mode';
import { type BudgetRefusal, type CallEstimate, type CallGuard, checkBudget, hasLimits } from '../common/budget';
import { FailureType } from '../common/failure-types';
import { billedIn } from '../common/usage';
import { INPUT_FORMAT } from '../common/input-format';
import type { ConversationState } from './conversation-state';
import { turnPriority } from './task-priority';

type ModelActivities = {
  callModel(input: CallModelInput): Promise<CallModelResult>;
  summariseContext(input: SummariseContextInput): Promise<SummariseContextResult>;
  countPromptTokens(input: CallModelInput): Promise<number>;
  submitBatchedModelCall(input: SubmitBatchedCallInput): Promise<BatchedCall>;
  checkBatchedModelCall(input: CheckBatchedCallInput): Promise<BatchedCallCheck>;
  cancelBatchedModelCall(input: BatchedCall): Promise<{ canceled: boolean }>;
};

/**
 * Batch mode's activities are short (no worker slot is held while a batch runs): the submission waits at most its
 * window and a `batches.create`, a check one `retrieve` and at most one read of the results.
 */
const BATCH_ACTIVITY_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 8 },
};

/** Non-retryable failure types come from the worker's classifier (activities/model-failure.ts). */
export const MODEL_RETRY = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '1 minute',
  maximumAttempts: 12,
};

/**
 * Histories recorded before every request was checked (0.1.0) checked only the first call of each step, before any
 * summary: they replay that way. Asked only of conversations with a budget (nothing differs without one).
 */
export const EVERY_REQUEST_PATCH = 'budget-checks-every-request';

export function checksEveryRequest(state: ConversationState): boolean {
  return !hasLimits(state.options.budget) || patched(EVERY_REQUEST_PATCH);
}

/** A request the budget lets through; `guard` goes with it to its activity. */
export interface Admission {
  ok: true;
  guard?: CallGuard;
}

/** What a history from before every request was checked sends its rungs and summaries with: no check. */
export const UNCHECKED: Admission = { ok: true };

/** The budget's verdict on a request to `model` (a fallback model, or the conversation's) estimated at `estimate`. */
export function admit(
  state: ConversationState,
  estimate: CallEstimate,
  model = state.options.model,
): Admission | BudgetRefusal {
  const { budget } = state.options;
  if (!hasLimits(budget)) return { ok: true };
  const spent = state.spent();
  const verdict = checkBudget(budget, spent, estimate, model);
  if (!verdict.ok) return { ...verdict, message: verdict.message + turnSoFar(state) };
  return { ok: true, guard: { budget, spent, estimate, prices: state.pricesOf(model), model } };
}

export type Sent<T> =
  | { kind: 'sent'; value: T }
  | { kind: 'refused'; refusal: BudgetRefusal }
  | { kind: 'failed'; failure: ActivityFailure };

type How = Pick<ActivityOptions, 'summary'> & { activityId: string };

export function sendModelCall(
  state: ConversationState,
  admission: Admission,
  input: CallModelInput,
  how: How,
): Promise<Sent<CallModelResult>> {
  const { callModel } = proxyActivities<ModelActivities>(modelCallOptions(state));
  // What failed attempts billed is priced at the prices of the model they went to.
  const model = input.request.model;
  // A `then`, not an async function: every step passes here, and each promise in workflow code costs a stack trace.
  return callModel.executeWithOptions({ ...how, ...turnPriority(state) }, [withGuard(input, admission)]).then(
    (value): Sent<CallModelResult> => {
      countFailedAttempts(state, value.failedAttempts, model);
      return { kind: 'sent', value };
    },
    (err: unknown) => {
      if (err instanceof ActivityFailure) return afterFailure<CallModelResult>(state, err, model);
      throw err;
    },
  );
}

/**
 * A model call through a Message Batch (common/batch-mode.ts): submitted (one short activity), then polled with
 * durable timers, backing off from 2 s to 60 s, until its batch ended; an expired, cancelled, retryably errored or
 * unreadable result is submitted again (a new custom_id), at most MAX_SUBMISSIONS times. The reply is what callModel
 * returns, so the step reads it the same way. A cancelled conversation stops waiting and cancels the batch when no
 * other call of the worker still waits for it.
 */
export async function sendBatchedModelCall(
  state: ConversationState,
  input: CallModelInput,
  mode: BatchMode,
  how: How,
): Promise<Sent<CallModelResult>> {
  const { submitBatchedModelCall, checkBatchedModelCall, cancelBatchedModelCall } = proxyActivities<ModelActivities>({
    ...BATCH_ACTIVITY_OPTIONS,
    ...turnPriority(state),
  });
  const reasons: string[] = [];
  for (let submission = 1; submission <= MAX_SUBMISSIONS; submission++) {
    const submitId = `${how.activityId}-batch-${submission}`;
    let call: BatchedCall;
    try {
      call = await submitBatchedModelCall.executeWithOptions(
        { summary: `${how.summary} · batch submission ${submission}`, activityId: submitId },
        [{ ...input, batch: mode }],
      );
    } catch (err) {
      if (err instanceof ActivityFailure) return afterFailure<CallModelResult>(state, err, input.request.model);
      throw err;
    }
    try {
      for (let poll = 0; poll < MAX_POLLS; poll++) {
        setCurrentDetails(`Waiting for batch ${call.batchId}: ${how.summary}`);
        await sleep(pollDelayMs(poll));
        const check = await checkBatchedModelCall.executeWithOptions(
          { summary: `batch ${call.batchId} · call ${input.callNumber}`, activityId: `${submitId}-poll-${poll + 1}` },
          [{ ...call, callNumber: input.callNumber }],
        );
        if (check.kind === 'reply') return { kind: 'sent', value: check.reply };
        if (check.kind === 'resubmit') {
          reasons.push(check.reason);
          break;
        }
        if (poll === MAX_POLLS - 1) reasons.push(`batch ${call.batchId} had not ended after ${MAX_POLLS} polls`);
      }
    } catch (err) {
      if (isCancellation(err)) {
        // The conversation stopped waiting: its batch is cancelled unless another call still needs it.
        await CancellationScope.nonCancellable(() =>
          cancelBatchedModelCall
            .executeWithOptions({ summary: `cancel batch ${call.batchId}`, activityId: `${submitId}-cancel` }, [call])
            .catch(() => undefined),
        );
        throw err;
      }
      if (err instanceof ActivityFailure) return afterFailure<CallModelResult>(state, err, input.request.model);
      throw err;
    }
  }
  const message = `The model call went through ${MAX_SUBMISSIONS} Message Batches without a result: ${reasons.join('; ')}`;
  const cause = ApplicationFailure.create({ type: FailureType.ModelCallFailed, message, nonRetryable: true });
  const failure = new ActivityFailure(
    message,
    'checkBatchedModelCall',
    how.activityId,
    RetryState.MAXIMUM_ATTEMPTS_REACHED,
    'workflow',
    cause,
  );
  return { kind: 'failed', failure };
}

export async function sendSummary(
  state: ConversationState,
  admission: Admission,
  input: SummariseContextInput,
  how: How,
): Promise<Sent<SummariseContextResult>> {
  const { summariseContext } = proxyActivities<ModelActivities>(modelCallOptions(state));
  try {
    const value = await summariseContext.executeWithOptions({ ...how, ...turnPriority(state) }, [
      withGuard(input, admission),
    ]);
    countFailedAttempts(state, value.failedAttempts);
    return { kind: 'sent', value };
  } catch (err) {
    if (err instanceof ActivityFailure) return afterFailure(state, err);
    throw err;
  }
}

const { countPromptTokens } = proxyActivities<ModelActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumAttempts: 3 },
});

/**
 * The prompt of the call `input` describes, counted by the API (count_tokens is free: no estimate of its own). Not
 * sent once the budget is spent already; undefined when the count failed.
 */
export async function countPrompt({
  state,
  input,
  everyRequestChecked,
}: {
  state: ConversationState;
  input: CallModelInput;
  /** The history comes after the every-request patch (checksEveryRequest): the budget is checked first. */
  everyRequestChecked: boolean;
}): Promise<number | undefined | BudgetRefusal> {
  if (everyRequestChecked) {
    const admission = admit(state, { promptTokens: 0, outputTokens: 0, usd: 0 });
    if (!admission.ok) return admission;
  }
  try {
    return await countPromptTokens.executeWithOptions(
      { summary: `count_tokens · call ${input.callNumber}`, ...turnPriority(state) },
      [{ v: INPUT_FORMAT, ...input }],
    );
  } catch (err) {
    if (err instanceof ActivityFailure) return undefined;
    throw err;
  }
}

export function isRefusal(value: unknown): value is BudgetRefusal {
  return typeof value === 'object' && value !== null && (value as { ok?: unknown }).ok === false;
}

function modelCallOptions(state: ConversationState): ActivityOptions {
  const { timeouts } = state.options;
  return { startToCloseTimeout: timeouts.modelCall, heartbeatTimeout: timeouts.modelHeartbeat, retry: MODEL_RETRY };
}

/** The input as it goes out: in this build's format (common/input-format.ts), with the budget's guard if any. */
function withGuard<T extends CallModelInput>(input: T, admission: Admission): T {
  return { v: INPUT_FORMAT, ...input, ...(admission.guard && { guard: admission.guard }) };
}

/** Usage that came back from an activity is checked before it is added (a result of another worker version). */
function countFailedAttempts(state: ConversationState, usage: unknown, model?: string): void {
  if (usage === undefined) return; // a call whose first attempt answered (most): nothing to check
  const billed = billedIn({ billed: usage });
  if (billed) state.recordExtraUsage(billed, model);
}

/**
 * What the attempts of a failed request billed counts (the last failure's details say, or the last heartbeat of one
 * that timed out); a retry the guard refused ends the turn as over budget, like a refusal here.
 */
function afterFailure<T>(state: ConversationState, failure: ActivityFailure, model?: string): Sent<T> {
  const cause = failure.cause;
  const details = cause instanceof ApplicationFailure ? cause.details?.[0] : undefined;
  const carrier = cause instanceof TimeoutFailure ? cause.lastHeartbeatDetails : details;
  countFailedAttempts(state, billedIn(carrier), model);
  if (cause instanceof ApplicationFailure && cause.type === FailureType.BudgetExhausted) {
    const scope = (details as { scope?: unknown } | undefined)?.scope === 'conversation' ? 'conversation' : 'turn';
    return { kind: 'refused', refusal: { ok: false, scope, message: cause.message + turnSoFar(state) } };
  }
  return { kind: 'failed', failure };
}

/** Mid turn, what the turn did and kept. */
function turnSoFar(state: ConversationState): string {
  const turn = state.currentTurn;
  if (!turn || turn.modelCalls === 0) return '';
  if (turn.toolCalls === 0) return ` The turn stopped after ${turn.modelCalls} model calls.`;
  // The tool results gathered stay in the transcript (valid as it is); the model is not called again.
  return ` The turn stopped after ${turn.modelCalls} model calls and ${turn.toolCalls} tool calls; the last tool results are kept in the transcript, not yet read by the model.`;
}
