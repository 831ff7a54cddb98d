// One model turn: a `callModel` activity, climbing the `max_tokens` ladder while the reply is cut off.
// A cut-off reply is dropped whole: nothing of it enters the transcript and none of its tool calls run.
import { patched, proxyActivities, setCurrentDetails, workflowInfo } from '@temporalio/workflow';
import type { CallModelInput, CallModelResult } from './activity-contracts';
import type { ConversationState } from './conversation-state';
import { modelOutputCap, nextMaxTokens } from './max-tokens-ladder';
import { modelCallSummary } from './summaries';

type ModelActivities = { callModel(input: CallModelInput): Promise<CallModelResult> };

/** Non-retryable failure types come from the worker's classifier (activities/model-failure.ts). */
const MODEL_RETRY = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 12 };

export type ModelStep = { kind: 'reply'; reply: CallModelResult } | { kind: 'max_tokens_exhausted'; maxTokens: number };

export async function askModel(state: ConversationState): Promise<ModelStep> {
  const { options } = state;
  const { callModel } = proxyActivities<ModelActivities>({
    startToCloseTimeout: options.timeouts.modelCall,
    heartbeatTimeout: options.timeouts.modelHeartbeat,
    retry: MODEL_RETRY,
  });
  const cap = options.maxTokensCap ?? modelOutputCap(options.model);
  let maxTokens = Math.min(state.active?.maxTokens ?? options.maxTokens, cap);
  // A forced tool_choice (`any`, `tool`) applies to the first call of a user turn only: forcing every call
  // would never let the model answer.
  const forced = options.toolChoice?.type === 'any' || options.toolChoice?.type === 'tool';
  const toolChoice = forced && (state.active?.modelCalls ?? 0) > 0 ? undefined : options.toolChoice;
  const { workflowId, runId } = workflowInfo();

  for (;;) {
    const callNumber = state.modelCalls + 1;
    const summary = modelCallSummary(options.model, callNumber, maxTokens);
    setCurrentDetails(`Waiting for the model: ${summary}`);
    state.running.set('model', { kind: 'model', name: summary, startedAt: new Date().toISOString() });
    let reply: CallModelResult;
    try {
      // Histories recorded before model calls had readable ids (`model-3`) replay with the SDK's numbering.
      const activityId = patched('readable-model-activity-ids') ? { activityId: `model-${callNumber}` } : {};
      reply = await callModel.executeWithOptions({ summary, ...activityId }, [{
        conversation: { workflowId, runId },
        callNumber,
        transcriptLength: state.transcript.length,
        newMessages: state.newMessages(),
        ...(state.sentUpTo === 0 && { fullContext: options.system !== undefined ? { system: options.system } : {} }),
        ...(state.lastReplyId !== undefined && { afterReply: state.lastReplyId }),
        request: {
          model: options.model,
          maxTokens,
          protocol: options.protocol,
          tools: options.tools,
          promptCaching: options.promptCaching,
          ...(toolChoice !== undefined && { toolChoice }),
          ...(options.disableParallelToolUse !== undefined && { disableParallelToolUse: options.disableParallelToolUse }),
        },
      }]);
    } finally {
      state.running.delete('model');
    }
    state.recordModelCall(reply.usage);
    if (reply.stop_reason !== 'max_tokens') return { kind: 'reply', reply };
    const next = nextMaxTokens(maxTokens, cap);
    if (next === undefined) return { kind: 'max_tokens_exhausted', maxTokens };
    maxTokens = next;
    if (state.active) state.active.maxTokens = next;
  }
}
