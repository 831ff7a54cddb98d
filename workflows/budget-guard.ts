// Before each model call: would it stay within the conversation's budgets? What is spent plus an estimate of the next
// call (common/budget.ts). The estimate comes from the API's count_tokens endpoint when the `budget.estimate` option
// asks for it (an activity; if it fails the last-call estimate stands in), else from the last call.
import { ActivityFailure } from '@temporalio/common';
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { CallModelInput } from '../common/activity-contracts';
import { type BudgetVerdict, checkBudget, estimateCallUsd, roughTokens } from '../common/budget';
import type { OfferedTools } from './ask-model';
import type { ConversationState } from './conversation-state';

const { countPromptTokens } = proxyActivities<{ countPromptTokens(input: CallModelInput): Promise<number> }>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumAttempts: 3 },
});

export async function checkNextCall(state: ConversationState, offered: OfferedTools): Promise<BudgetVerdict> {
  const { budget, model, promptCaching } = state.options;
  if (!budget?.perTurn && !budget?.perConversation) return { ok: true };
  const counted = budget.estimate === 'count-tokens' ? await countedPrompt(state, offered) : undefined;
  const prompt = counted ?? estimatedPrompt(state);
  const outputTokens = state.lastCallUsage?.outputTokens ?? 0;
  const usd = estimateCallUsd(
    state.prices,
    { promptTokens: prompt, outputTokens },
    state.lastPromptTokens ?? 0,
    promptCaching,
  );
  const verdict = checkBudget(budget, state.spent(), { promptTokens: prompt, outputTokens, usd }, model);
  const turn = state.currentTurn;
  if (verdict.ok || !turn || turn.modelCalls === 0) return verdict;
  // Mid chain, the tool results gathered stay in the transcript (valid as it is); the model is not called again.
  return {
    ...verdict,
    message: `${verdict.message} The turn stopped after ${turn.modelCalls} model calls and ${turn.toolCalls} tool calls; the last tool results are kept in the transcript, not yet read by the model.`,
  };
}

/** The last call's prompt and what was added since; a conversation's first call: the whole context, roughly. */
function estimatedPrompt(state: ConversationState): number {
  const last = state.lastPromptTokens;
  if (last !== undefined) return last + roughTokens(state.newMessages());
  return roughTokens(state.options.system ?? '') + roughTokens(state.transcript);
}

async function countedPrompt(state: ConversationState, offered: OfferedTools): Promise<number | undefined> {
  const { options } = state;
  const input: CallModelInput = {
    conversation: { workflowId: workflowInfo().workflowId, runId: workflowInfo().runId },
    callNumber: state.modelCalls + 1,
    transcriptLength: state.transcript.length,
    newMessages: state.newMessages(),
    ...(state.sentUpTo === 0 && { fullContext: options.system !== undefined ? { system: options.system } : {} }),
    ...(state.lastReplyId !== undefined && { afterReply: state.lastReplyId }),
    request: {
      model: options.model,
      maxTokens: options.maxTokens,
      protocol: options.protocol,
      tools: offered.tools,
      ...(offered.mcpToolSet !== undefined && { mcpToolSet: offered.mcpToolSet }),
      promptCaching: options.promptCaching,
    },
  };
  try {
    return await countPromptTokens.executeWithOptions({ summary: `count_tokens · call ${input.callNumber}` }, [input]);
  } catch (err) {
    if (err instanceof ActivityFailure) return undefined;
    throw err;
  }
}
