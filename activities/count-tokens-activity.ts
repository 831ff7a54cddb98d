// The budget's estimate of the next model call, by the API: the request the model call would send, counted by the
// count_tokens endpoint (POST /v1/messages/count_tokens) instead of answered. The context is read like a model
// call's (the worker's cache, or a query); nothing is remembered.
import type Anthropic from '@anthropic-ai/sdk';
import { Context } from '@temporalio/activity';
import type { CallModelInput } from '../common/activity-contracts';
import type { ToolDescription } from '../common/protocols/types';
import { keepAlive } from './keep-alive';
import { type ModelContextCache, withConversation } from './model-context-cache';
import type { McpToolSets } from './mcp/mcp-tool-sets';
import { toModelFailure } from './model-failure';
import { buildModelRequest } from './model-request';

export interface CountTokensActivityDeps {
  anthropic: Anthropic;
  tools: readonly ToolDescription[];
  cache: ModelContextCache;
  mcpToolSets?: McpToolSets;
}

export function createCountTokensActivity({ anthropic, tools, cache, mcpToolSets }: CountTokensActivityDeps) {
  const described = new Map(tools.map((tool) => [tool.name, tool]));

  /** The input tokens of the model call `input` describes: the prompt, cached or not. */
  async function countPromptTokens(given: CallModelInput): Promise<number> {
    const input = withConversation(given);
    const context = Context.current();
    const stopHeartbeats = keepAlive(context);
    try {
      const { system, messages } = await cache.assemble(input);
      const { mcpToolSet } = input.request;
      const mcpTools = mcpToolSet !== undefined ? await mcpToolSets?.get(input.conversation, mcpToolSet) : undefined;
      const offered = input.request.tools.flatMap((name) => described.get(name) ?? mcpTools?.get(name) ?? []);
      const request = buildModelRequest(
        { ...input.request, ...(system !== undefined && { system }) },
        messages,
        offered,
      );
      const counted = await anthropic.messages.countTokens(
        {
          model: request.model,
          messages: request.messages,
          ...(request.system !== undefined && { system: request.system }),
          ...(request.tools !== undefined && { tools: request.tools }),
          ...(request.tool_choice !== undefined && { tool_choice: request.tool_choice }),
        },
        { signal: context.cancellationSignal },
      );
      return counted.input_tokens;
    } catch (err) {
      if (context.cancellationSignal.aborted) throw err;
      throw toModelFailure(err);
    } finally {
      stopHeartbeats();
    }
  }

  return { countPromptTokens };
}
