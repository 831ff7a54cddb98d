// The model call activity: one streamed Messages API call through the real SDK. The SDK's own retries are
// off (Temporal retries, with the classifier's verdict); the worker heartbeats while the stream runs, so a
// worker that dies mid-call is noticed within the heartbeat timeout and the call runs again elsewhere.
import type Anthropic from '@anthropic-ai/sdk';
import type { ContentBlock, Message, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { Context } from '@temporalio/activity';
import type { CallModelInput, CallModelResult } from '../workflows/activity-contracts';
import { protocolFor } from '../workflows/protocols';
import { toModelFailure } from './model-failure';
import { buildModelRequest, type DescribedTool } from './model-request';
import { keepAlive } from './heartbeat';
import type { ModelContextCache } from './model-context-cache';

export interface ModelActivityDeps {
  anthropic: Anthropic;
  /** Every tool the worker registers, as the model is told about it. */
  tools: readonly DescribedTool[];
  cache: ModelContextCache;
}

export function createModelActivities({ anthropic, tools, cache }: ModelActivityDeps) {
  const described = new Map(tools.map((tool) => [tool.name, tool]));

  async function callModel(input: CallModelInput): Promise<CallModelResult> {
    const context = Context.current();
    // Heartbeat from the start: reading the context may wait on a query (a dead worker's sticky queue).
    const stopHeartbeats = keepAlive(context);
    let system: string | undefined;
    let messages: MessageParam[];
    let message: Message;
    try {
      ({ system, messages } = await cache.assemble(input));
      const offered = input.request.tools.map((name) => {
        const tool = described.get(name);
        if (!tool) throw new Error(`Tool ${name} is not registered on this worker.`);
        return tool;
      });
      const request = buildModelRequest({ ...input.request, ...(system !== undefined && { system }) }, messages, offered);
      message = await anthropic.messages.stream(request, { signal: context.cancellationSignal }).finalMessage();
    } catch (err) {
      if (context.cancellationSignal.aborted) throw err; // cancelled or timed out: Temporal already knows why
      throw toModelFailure(err);
    } finally {
      stopHeartbeats();
    }

    if (message.stop_reason !== 'max_tokens') {
      // The workflow appends exactly this message (same pure protocol code), so the next call needs only what follows.
      const reading = protocolFor(input.request.protocol).readReply(message, input.callNumber);
      cache.remember(input.conversation, {
        ...(system !== undefined && { system }),
        messages: [...messages, reading.assistant],
        lastReplyId: message.id,
      });
    }
    // Content first: the Web UI previews a result by its first characters.
    return {
      content: message.content.map(withoutEmptyFields),
      stop_reason: message.stop_reason,
      stop_sequence: message.stop_sequence,
      id: message.id,
      model: message.model,
      usage: {
        inputTokens: message.usage.input_tokens,
        outputTokens: message.usage.output_tokens,
        cacheReadInputTokens: message.usage.cache_read_input_tokens ?? 0,
        cacheCreationInputTokens: message.usage.cache_creation_input_tokens ?? 0,
      },
    };
  }

  return { callModel };
}

/** Drops response fields that say nothing (`citations: null`, `caller: {type: 'direct'}`) to keep histories readable. */
function withoutEmptyFields(block: ContentBlock): ContentBlock {
  const entries = Object.entries(block).filter(([key, value]) => value !== null && !(key === 'caller' && (value as { type?: string }).type === 'direct'));
  return Object.fromEntries(entries) as ContentBlock;
}
