// What each request to the Messages API is estimated to take, for the budget's check at the door
// (workflows/model-requests.ts, common/budget.ts):
// - a model call: its prompt counted by the API's count_tokens endpoint when the `budget.estimate` option asks for it
//   (an activity; if it fails the last-call estimate stands in), else the last call's prompt plus what was added since;
//   and the last call's output again;
// - a retry up the max_tokens ladder: the prompt of the reply that was cut off (its usage says exactly), and all of
//   the rung's max_tokens — the model just showed that it wants more than the last rung;
// - the orchestrator's summary call: at most the next call's prompt, and all of its max_tokens.
import type { CallModelInput } from '../common/activity-contracts';
import {
  type BudgetRefusal,
  type BudgetVerdict,
  type CallEstimate,
  estimateCallUsd,
  hasLimits,
  promptTokens,
  roughTokens,
} from '../common/budget';
import type { TokenUsage } from '../common/conversation-types';
import type { ConversationState } from './conversation-state';
import { admit, countPrompt, isRefusal } from './model-requests';
import type { OfferedTools } from './offered-tools';

/** The next model call of a step, as the budget estimates it (nextCallEstimate). */
export interface NextCall {
  state: ConversationState;
  offered: OfferedTools;
  /**
   * The history comes after the every-request patch (model-requests.ts checksEveryRequest): count_tokens itself is
   * not sent once the budget is spent.
   */
  everyRequestChecked: boolean;
}

export async function nextCallEstimate(next: NextCall): Promise<CallEstimate | BudgetRefusal> {
  const { state } = next;
  const { budget, promptCaching } = state.options;
  const counting = hasLimits(budget) && budget.estimate === 'count-tokens';
  const counted = counting ? await countedPrompt(next) : undefined;
  if (isRefusal(counted)) return counted;
  const prompt = counted ?? estimatedPrompt(state);
  const outputTokens = state.lastCallUsage?.outputTokens ?? 0;
  const usd = estimateCallUsd(
    state.prices,
    { promptTokens: prompt, outputTokens },
    state.lastPromptTokens ?? 0,
    promptCaching,
  );
  return { promptTokens: prompt, outputTokens, usd };
}

/** A retry up the max_tokens ladder (rungEstimate). */
export interface Rung {
  /** What the cut-off reply billed. */
  cutOff: TokenUsage;
  /** The max_tokens the reply was cut off at. */
  cutAt: number;
  /** The retry's max_tokens. */
  maxTokens: number;
  /** The model the retry goes to (a fallback model's, or the conversation's). */
  model?: string;
}

/** A retry with `maxTokens` of a reply that `cutOff` billed and that stopped at `cutAt` output tokens. */
export function rungEstimate(
  state: ConversationState,
  { cutOff, cutAt, maxTokens, model = state.options.model }: Rung,
): CallEstimate {
  const prompt = promptTokens(cutOff);
  // With prompt caching the retry reads from the cache what the cut-off call wrote to it.
  const usd = estimateCallUsd(
    state.pricesOf(model),
    { promptTokens: prompt, outputTokens: maxTokens },
    prompt,
    state.options.promptCaching,
  );
  return {
    promptTokens: prompt,
    outputTokens: maxTokens,
    usd,
    what: `a retry with max_tokens ${maxTokens} (the reply was cut off at ${cutAt} output tokens)`,
    worstCase: true,
  };
}

/**
 * The call `estimate` was made for, sent to the fallback model `model` instead: the same tokens at that model's prices,
 * none of the prompt read from its cache (the cache is the other model's).
 */
export function fallbackEstimate(state: ConversationState, estimate: CallEstimate, model: string): CallEstimate {
  const next = { promptTokens: estimate.promptTokens, outputTokens: estimate.outputTokens };
  const usd = estimateCallUsd(state.pricesOf(model), next, 0, state.options.promptCaching);
  return { ...estimate, usd, what: `${estimate.what ?? 'the next model call'} on the fallback model ${model}` };
}

/** The orchestrator's summary of the context, with `maxTokens`. */
export function summaryEstimate(state: ConversationState, maxTokens: number): CallEstimate {
  const prompt = estimatedPrompt(state);
  const usd = estimateCallUsd(
    state.prices,
    { promptTokens: prompt, outputTokens: maxTokens },
    state.lastPromptTokens ?? 0,
    state.options.promptCaching,
  );
  return {
    promptTokens: prompt,
    outputTokens: maxTokens,
    usd,
    what: `the orchestrator's summary of the context (max_tokens ${maxTokens})`,
    worstCase: true,
  };
}

/** The check of histories from before every request was checked: the first call of a step, before any summary. */
export async function checkNextCall(state: ConversationState, offered: OfferedTools): Promise<BudgetVerdict> {
  const estimate = await nextCallEstimate({ state, offered, everyRequestChecked: false });
  if (isRefusal(estimate)) return estimate;
  const admission = admit(state, estimate);
  return admission.ok ? { ok: true } : admission;
}

/** The last call's prompt and what was added since; a conversation's first call: the whole context, roughly. */
function estimatedPrompt(state: ConversationState): number {
  const last = state.lastPromptTokens;
  if (last !== undefined) return last + roughTokens(state.newMessages());
  return roughTokens(state.options.system ?? '') + roughTokens(state.transcript);
}

async function countedPrompt({
  state,
  offered,
  everyRequestChecked,
}: NextCall): Promise<number | undefined | BudgetRefusal> {
  const { options } = state;
  const input: CallModelInput = {
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
  return countPrompt({ state, input, everyRequestChecked });
}
