// The model call's side of context management: the beta request fields (`context_management` and its beta headers),
// and what the reply says about the context — usage summed over its iterations (the top-level usage leaves a
// compaction's own tokens out), input tokens after the API's edits and before them.
import type Anthropic from '@anthropic-ai/sdk';
import type {
  BetaMessage,
  BetaMessageStreamParams,
  MessageCountTokensParams,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { MessageCreateParamsStreaming, StopReason } from '@anthropic-ai/sdk/resources/messages';
import type { CallModelResult, ModelRequestOptions } from '../common/activity-contracts';
import { isCompactionBlock, type ReplyBlock } from '../common/compaction';
import { type CallContext, contextOfUsage } from '../common/context-accounting';
import type { TokenUsage } from '../common/conversation-types';

/** The request as the beta endpoint takes it: `context_management` and the betas it needs, when there are any. */
export function withContextManagement(
  request: MessageCreateParamsStreaming,
  contextManagement: ModelRequestOptions['contextManagement'],
): BetaMessageStreamParams {
  if (!contextManagement) return request;
  return { ...request, betas: contextManagement.betas, context_management: contextManagement.config };
}

/**
 * Exactly how large a prompt the API compacted was, from the token counting endpoint (free, and only asked after a
 * compaction). A compaction iteration's own usage may be far smaller than what it closed, so it cannot tell.
 * Undefined when counting fails: the reply is already there and counts more than the figure.
 */
export async function compactedPromptTokens(
  anthropic: Anthropic,
  request: BetaMessageStreamParams,
  message: BetaMessage,
  signal: AbortSignal,
): Promise<number | undefined> {
  if (!isCompactionBlock(message.content[0])) return undefined;
  const params: MessageCountTokensParams = {
    model: request.model,
    messages: request.messages,
    ...(request.system !== undefined && { system: request.system }),
    ...(request.tools !== undefined && { tools: request.tools }),
    ...(request.tool_choice !== undefined && { tool_choice: request.tool_choice }),
    ...(request.betas !== undefined && { betas: request.betas }),
  };
  try {
    return (await anthropic.beta.messages.countTokens(params, { signal })).input_tokens;
  } catch {
    return undefined;
  }
}

/** The activity's result for a reply: content first (the Web UI previews a result by its first characters). */
export function callModelResultOf(message: BetaMessage, compactedTokens?: number): CallModelResult {
  const usage = message.usage;
  const iterations = usage.iterations ?? [];
  const summed = iterations.length > 0 ? iterations : [usage];
  const total: TokenUsage = {
    inputTokens: sum(summed.map((u) => u.input_tokens)),
    outputTokens: sum(summed.map((u) => u.output_tokens)),
    cacheReadInputTokens: sum(summed.map((u) => u.cache_read_input_tokens ?? 0)),
    cacheCreationInputTokens: sum(summed.map((u) => u.cache_creation_input_tokens ?? 0)),
  };
  // Thinking tokens are output tokens already; the API breaks them out on the top-level usage.
  const thinkingTokens = usage.output_tokens_details?.thinking_tokens;
  if (typeof thinkingTokens === 'number' && thinkingTokens > 0) total.thinkingTokens = thinkingTokens;
  // Server tools the API ran for the reply: web searches are priced per search (common/pricing.ts).
  const searches = usage.server_tool_use?.web_search_requests;
  if (typeof searches === 'number' && searches > 0) total.webSearchRequests = searches;
  const fetches = usage.server_tool_use?.web_fetch_requests;
  if (typeof fetches === 'number' && fetches > 0) total.webFetchRequests = fetches;
  // The context the reply was sampled from: the last sampling iteration's prompt (never a compaction's).
  const sampled = iterations.filter((u) => u.type === 'message').at(-1) ?? usage;
  const inputTokens =
    sampled.input_tokens + (sampled.cache_read_input_tokens ?? 0) + (sampled.cache_creation_input_tokens ?? 0);
  let clearedToolUses = 0;
  let clearedInputTokens = 0;
  for (const edit of message.context_management?.applied_edits ?? []) {
    if (edit.type !== 'clear_tool_uses_20250919') continue;
    clearedToolUses += edit.cleared_tool_uses;
    clearedInputTokens += edit.cleared_input_tokens;
  }
  // Without a count, the compaction's own prompt is the best lower bound there is.
  const compaction = iterations.find((u) => u.type === 'compaction');
  const compactionInput = compaction
    ? compaction.input_tokens + compaction.cache_read_input_tokens + compaction.cache_creation_input_tokens
    : 0;
  const before = isCompactionBlock(message.content[0]) ? (compactedTokens ?? compactionInput) : 0;
  const context: CallContext = {
    inputTokens,
    inputTokensBefore: Math.max(before, inputTokens + clearedInputTokens),
    clearedToolUses,
    clearedInputTokens,
  };
  // The workflow derives the context from the usage when nothing was compacted or cleared: the history leaves it out.
  const plain = JSON.stringify(context) === JSON.stringify(contextOfUsage(total));
  return {
    // Beta-only block types other than compaction come only with features these requests never enable.
    content: message.content as ReplyBlock[],
    // With `pause_after_compaction` the API stops after the compaction block; like a paused turn, the reply goes
    // back as it is and the model carries on.
    stop_reason: message.stop_reason === 'compaction' ? 'pause_turn' : (message.stop_reason as StopReason | null),
    ...(message.stop_sequence !== null && { stop_sequence: message.stop_sequence }),
    id: message.id,
    model: message.model,
    usage: total,
    ...(!plain && { context }),
    ...(message.container && { container: { id: message.container.id, expiresAt: message.container.expires_at } }),
  };
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
