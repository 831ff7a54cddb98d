// One model step: a `callModel` activity, climbing the `max_tokens` ladder while the reply is cut off. A cut-off
// reply is dropped whole: nothing of it enters the transcript and none of its tool calls run. A call that fails
// for good (after Temporal's retries, or at once for a request the API refuses) is a step outcome, not an error.
// Each call, every rung of the ladder included, goes out through the door (model-requests.ts) with the budget's
// admission; a refused one ends the step as over budget.
import { ApplicationFailure, type ActivityFailure } from '@temporalio/common';
import { setCurrentDetails } from '@temporalio/workflow';
import { type CallModelInput, type CallModelResult, modelActivityId } from '../common/activity-contracts';
import { type BudgetRefusal, type BudgetScope, type CallEstimate, hasLimits } from '../common/budget';
import { compactionNote } from '../common/context-accounting';
import { apiContextManagement } from '../common/context-options';
import type { TurnFailure } from '../common/conversation-types';
import { allOverloadedMessage, fallbackNote, modelChain, overloadedAttempts } from '../common/fallback-models';
import { FailureType, ModelFailureType } from '../common/failure-types';
import { typedCallOptions } from '../common/structured-output';
import { serverToolEvent } from '../streaming/workflow/server-tool-events';
import { serverToolsNote } from '../common/server-tools';
import { modelCallSummary } from '../common/summaries';
import { fallbackEstimate, nextCallEstimate, rungEstimate } from './budget-guard';
import { resolveFallbackPrices } from './model-prices';
import type { ConversationState } from './conversation-state';
import type { ConversationStream } from '../streaming/workflow/conversation-stream';
import type { OfferedTools } from './offered-tools';
import { modelOutputCap, nextMaxTokens } from '../common/max-tokens-ladder';
import {
  type Admission,
  admit,
  isRefusal,
  type Sent,
  sendBatchedModelCall,
  sendModelCall,
  UNCHECKED,
} from './model-requests';
import { batchModeOf } from '../common/batch-mode';

export { MODEL_RETRY } from './model-requests';

export type ModelStep =
  | { kind: 'reply'; reply: CallModelResult }
  | { kind: 'max_tokens_exhausted'; maxTokens: number }
  | { kind: 'over_budget'; scope: BudgetScope; message: string }
  | { kind: 'failed'; failure: TurnFailure };

/** One model step's request (askModel). */
export interface ModelStepRequest {
  state: ConversationState;
  offered: OfferedTools;
  /** Where readers see the calls and the reply. */
  stream: ConversationStream;
  /**
   * Every call is checked at the door, the first against its estimate, each rung at its worst case; false only for
   * histories from before the every-request patch (their step's first call was checked before it, the rungs not at
   * all: model-requests.ts checksEveryRequest).
   */
  everyRequestChecked: boolean;
  /** The step continues the paused turn the transcript ends with, and its reply joins that turn's message. */
  joinsPausedTurn?: boolean;
}

export async function askModel({
  state,
  offered,
  stream,
  everyRequestChecked,
  joinsPausedTurn = false,
}: ModelStepRequest): Promise<ModelStep> {
  const { options } = state;
  // The models this call may go to: the conversation's first, then its fallback models, each after the one before
  // stayed overloaded for `fallbackAfter` attempts (common/fallback-models.ts). The rest of the step stays on the
  // model that answered.
  const chain = modelChain(options);
  const fallbackAfter = overloadedAttempts(options);
  let modelIndex = 0;
  let model = options.model;
  let cap = options.maxTokensCap ?? modelOutputCap(model);
  let maxTokens = Math.min(state.currentTurn?.maxTokens ?? options.maxTokens, cap);
  // A forced tool_choice (`any`, `tool`) applies to the first call of a user turn only: forcing every call
  // would never let the model answer.
  const forced = options.toolChoice?.type === 'any' || options.toolChoice?.type === 'tool';
  const firstChoice = forced && (state.currentTurn?.modelCalls ?? 0) > 0 ? undefined : options.toolChoice;
  // A typed answer adds its spec, and in mode `tool` decides the tool choice (common/structured-output.ts).
  const { toolChoice, output } = typedCallOptions(state.currentTurn, firstChoice);
  const contextManagement = apiContextManagement(options.contextManagement);
  const container = state.liveContainer();
  // Batch mode (common/batch-mode.ts): the turn's option, else the conversation's. Its calls neither stream nor thread.
  const batch = batchModeOf(options.batch, state.currentTurn?.batch);
  const streaming = batch ? { enabled: false, intervalMs: 0 } : options.streaming;
  // Threads (common/threads.ts): only the step's first call may continue the thread; rungs and fallbacks create anew.
  const threads = options.threads === true && !state.threadsUnsupported && !batch;
  let firstOfStep = true;
  let admission: Admission | BudgetRefusal = UNCHECKED;
  // What the admitted call was estimated at: a fallback call is the same request, priced at its model's prices.
  let estimate: CallEstimate | undefined;
  // Without limits every admission is the same `ok`: the estimate (and its await) is skipped.
  if (everyRequestChecked && hasLimits(options.budget)) {
    const next = await nextCallEstimate({ state, offered, everyRequestChecked: true });
    if (!isRefusal(next)) estimate = next;
    admission = isRefusal(next) ? next : admit(state, next);
  }

  for (;;) {
    if (!admission.ok) return { kind: 'over_budget', scope: admission.scope, message: admission.message };
    const callNumber = state.modelCalls + 1;
    // A reply is continued once, whatever comes of this call: the state lets go of the anchor as it is taken.
    const continuing = threads ? state.takeThreadContinuation({ firstOfStep, joinsPausedTurn }) : undefined;
    firstOfStep = false;
    const summary =
      modelCallSummary(model, callNumber, maxTokens, options) +
      fallbackNote(chain, modelIndex) +
      compactionNote(state.context) +
      serverToolsNote(options.serverTools) +
      (joinsPausedTurn ? ' · continues a paused turn' : '') +
      (threads ? (continuing ? ' · continues its thread' : ' · new thread') : '') +
      (batch ? ' · batch' : '');
    setCurrentDetails(`Waiting for the model: ${summary}`);
    state.startActivity('model', { kind: 'model', name: summary, startedAt: new Date().toISOString() });
    const onFallback = modelIndex > 0 ? { model } : {};
    stream.publish({ type: 'model_call_started', call: callNumber, ...onFallback });
    const input: CallModelInput = {
      callNumber,
      transcriptLength: state.transcript.length,
      newMessages: continuing ? state.transcript.slice(continuing.from) : state.newMessages(),
      ...(state.sentUpTo === 0 && { fullContext: options.system !== undefined ? { system: options.system } : {} }),
      ...(state.lastReplyId !== undefined && { afterReply: state.lastReplyId }),
      ...(streaming.enabled && { stream: { intervalMs: streaming.intervalMs } }),
      ...(joinsPausedTurn && { joinsPausedTurn: true as const }),
      ...(fallbackAfter !== undefined && { fallbackAfter }),
      ...(threads && {
        thread: continuing ? { continueFrom: continuing.id, fingerprint: continuing.fingerprint } : {},
      }),
      request: {
        model,
        maxTokens,
        protocol: options.protocol,
        tools: offered.tools,
        ...(offered.mcpToolSet !== undefined && { mcpToolSet: offered.mcpToolSet }),
        promptCaching: options.promptCaching,
        ...(toolChoice !== undefined && { toolChoice }),
        ...(options.disableParallelToolUse !== undefined && {
          disableParallelToolUse: options.disableParallelToolUse,
        }),
        ...(contextManagement && { contextManagement }),
        ...(output && { output }),
        // Checked with the options for every rung (common/thinking.ts): budget_tokens stays below max_tokens.
        ...(options.thinking && { thinking: options.thinking }),
        ...(options.effort && { effort: options.effort }),
        ...(options.serverTools && { serverTools: options.serverTools }),
        ...(container !== undefined && { container }),
      },
    };
    let sent: Sent<CallModelResult>;
    try {
      const activityId = modelActivityId(callNumber, modelIndex);
      sent = batch
        ? await sendBatchedModelCall(state, input, batch, { summary, activityId })
        : await sendModelCall(state, admission, input, { summary, activityId });
    } finally {
      state.finishActivity('model');
    }
    if (sent.kind !== 'sent') stream.publish({ type: 'model_output_discarded', call: callNumber, reason: 'failed' });
    if (sent.kind === 'refused') return { kind: 'over_budget', ...sent.refusal };
    if (sent.kind === 'failed') {
      const failure = modelFailure(sent.failure);
      if (fallbackAfter === undefined || failure.type !== ModelFailureType.Overloaded)
        return { kind: 'failed', failure };
      const next = chain[modelIndex + 1];
      if (next === undefined) {
        return {
          kind: 'failed',
          failure: { type: ModelFailureType.Overloaded, message: allOverloadedMessage(chain, fallbackAfter) },
        };
      }
      // The same call on the next model: its own prices (read once per run), its own output cap, its own check.
      modelIndex++;
      model = next;
      await resolveFallbackPrices(state, model);
      cap = options.maxTokensCap ?? modelOutputCap(model);
      maxTokens = Math.min(maxTokens, cap);
      if (everyRequestChecked && estimate) {
        estimate = fallbackEstimate(state, estimate, model);
        admission = admit(state, estimate, model);
      }
      continue;
    }
    const reply = sent.value;
    const costUsd = state.recordModelCall(reply.usage, model, { batch: batch !== undefined });
    if (threads) state.recordThreadUse(reply);
    if (reply.stop_reason !== 'max_tokens') {
      publishReply(stream, callNumber, reply);
      stream.publish({
        type: 'model_call_finished',
        call: callNumber,
        stopReason: reply.stop_reason,
        usage: reply.usage,
        costUsd,
        ...onFallback,
      });
      return { kind: 'reply', reply };
    }
    // A cut-off reply is asked again higher up the ladder: readers drop what it streamed.
    stream.publish({ type: 'model_output_discarded', call: callNumber, reason: 'max_tokens' });
    const next = nextMaxTokens(maxTokens, cap);
    if (next === undefined) return { kind: 'max_tokens_exhausted', maxTokens };
    if (everyRequestChecked) {
      estimate = rungEstimate(state, { cutOff: reply.usage, cutAt: maxTokens, maxTokens: next, model });
      admission = admit(state, estimate, model);
    }
    maxTokens = next;
    state.raiseMaxTokens(next);
  }
}

/** The classifier's type and message when it named the failure; otherwise what Temporal says ran out. */
function modelFailure(err: ActivityFailure): TurnFailure {
  const cause = err.cause;
  if (cause instanceof ApplicationFailure)
    return { type: cause.type ?? FailureType.ModelCallFailed, message: cause.message };
  return { type: FailureType.ModelCallFailed, message: `The model call failed: ${cause?.message ?? err.message}` };
}

/**
 * The final reply enters the log whole (its text is in the activity's result already: no history cost). Readers that
 * saw it live show only what they had not seen; a reader that comes later gets it from here.
 */
function publishReply(stream: ConversationStream, call: number, reply: CallModelResult): void {
  const attempt = { call, attempt: reply.attempt ?? 1 }; // replies recorded before streaming have no attempt
  for (const [block, content] of reply.content.entries()) {
    if (content.type === 'text') stream.publish({ type: 'text', ...attempt, block, at: 0, text: content.text });
    if (content.type === 'thinking' && typeof content.thinking === 'string') {
      stream.publish({ type: 'thinking', ...attempt, block, at: 0, text: content.thinking });
    }
    if (content.type === 'redacted_thinking') {
      stream.publish({ type: 'thinking', ...attempt, block, at: 0, text: '', redacted: true });
    }
    if (content.type === 'tool_use') {
      const { id, name, input } = content;
      stream.publish({ type: 'tool_call_started', ...attempt, block, id, name });
      stream.publish({ type: 'tool_call_input', ...attempt, block, id, name, input });
    }
    const server = serverToolEvent(content);
    if (server) stream.publish({ ...server, ...attempt, block });
  }
}
