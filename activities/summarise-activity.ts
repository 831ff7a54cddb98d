// The orchestrator's own compaction, for a model or endpoint without the API's: one model call that summarises the
// older part of a conversation. The context is read like a model call's (the worker's cache, or a query), the first
// `summariseUpTo` messages go to the model with the summary request, and the worker's cache is left holding the
// transcript as the workflow will hold it after the summary. Failures are classified like a model call's.
import type Anthropic from '@anthropic-ai/sdk';
import type { MessageCountTokensParams } from '@anthropic-ai/sdk/resources/messages';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { SummariseContextInput, SummariseContextResult } from '../common/activity-contracts';
import { summaryMessage, summaryRequestMessages, summaryText } from '../common/orchestrator-summary';
import type { ToolDescription } from '../common/protocols/types';
import { AttemptBilling } from './billed-attempts';
import { keepAlive } from './keep-alive';
import { type ModelContextCache, withConversation } from './model-context-cache';
import type { McpToolSets } from './mcp/mcp-tool-sets';
import { toModelFailure } from './model-failure';
import { buildModelRequest } from './model-request';

export interface SummariseActivityDeps {
  anthropic: Anthropic;
  tools: readonly ToolDescription[];
  cache: ModelContextCache;
  /** The MCP tool lists of the conversations (by digest): the summary request offers those tools too. */
  mcpToolSets?: McpToolSets;
}

export function createSummariseActivity({ anthropic, tools, cache, mcpToolSets }: SummariseActivityDeps) {
  const described = new Map(tools.map((tool) => [tool.name, tool]));

  async function summariseContext(given: SummariseContextInput): Promise<SummariseContextResult> {
    const input = withConversation(given);
    const context = Context.current();
    // Like a model call's: what earlier attempts billed counts, and a retry the budget no longer allows is not sent.
    const billing = new AttemptBilling(context);
    billing.checkRetry(input.guard);
    const stopHeartbeats = keepAlive(context, () => billing.details());
    try {
      const { system, messages } = await cache.assemble(input);
      const cut = input.summariseUpTo;
      if (!(cut >= 2 && cut < messages.length && messages[cut]!.role === 'assistant')) {
        throw ApplicationFailure.nonRetryable(`Cannot summarise up to message ${cut} of ${messages.length}.`);
      }
      // The messages to summarise may hold tool calls, so the request offers the same tools (with tool_choice none).
      const { mcpToolSet } = input.request;
      const mcpTools = mcpToolSet !== undefined ? await mcpToolSets?.get(input.conversation, mcpToolSet) : undefined;
      const offered = input.request.tools.flatMap((name) => described.get(name) ?? mcpTools?.get(name) ?? []);
      const request = buildModelRequest(
        { ...input.request, ...(system !== undefined && { system }) },
        summaryRequestMessages(messages.slice(0, cut), input.instructions),
        offered,
      );
      const stream = anthropic.messages.stream(request, { signal: context.cancellationSignal });
      billing.follow(stream);
      const message = await stream.finalMessage();
      const answer = message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
      const summary = summaryText(answer);
      if (!summary) throw ApplicationFailure.retryable('The model answered the summary request with no text.');

      const { usage } = message;
      const readSummarised = usage.input_tokens + (usage.cache_read_input_tokens ?? 0);
      const inputTokensBefore = await countTokens(anthropic, {
        model: request.model,
        messages,
        ...(request.system !== undefined && { system: request.system }),
        ...(request.tools !== undefined && { tools: request.tools }),
      }).catch(() => readSummarised + (usage.cache_creation_input_tokens ?? 0));

      // The worker's copy as the workflow will have it: the summary, then the messages up to the last reply.
      const known = messages.length - input.newMessages.length;
      if (input.afterReply !== undefined && known > cut) {
        cache.remember(input.conversation, {
          ...(system !== undefined && { system }),
          messages: [summaryMessage(summary), ...messages.slice(cut, known)],
          lastReplyId: input.afterReply,
        });
      }
      return {
        summary,
        id: message.id,
        usage: {
          inputTokens: usage.input_tokens,
          outputTokens: usage.output_tokens,
          cacheReadInputTokens: usage.cache_read_input_tokens ?? 0,
          cacheCreationInputTokens: usage.cache_creation_input_tokens ?? 0,
        },
        inputTokensBefore,
        ...(billing.before && { failedAttempts: billing.before }),
      };
    } catch (err) {
      // The last heartbeat (flushed with the failure) hands what was billed to the next attempt.
      const billed = billing.total();
      if (billed) context.heartbeat(billing.details());
      if (context.cancellationSignal.aborted) throw err;
      if (!(err instanceof ApplicationFailure)) throw toModelFailure(err, billed);
      if (!billed) throw err;
      // A reply that could not be used (no text) was billed all the same.
      throw ApplicationFailure.create({
        ...(err.type && { type: err.type }),
        message: err.message,
        nonRetryable: err.nonRetryable === true,
        details: [{ billed }],
      });
    } finally {
      stopHeartbeats();
    }
  }

  return { summariseContext };
}

async function countTokens(anthropic: Anthropic, params: MessageCountTokensParams): Promise<number> {
  return (await anthropic.messages.countTokens(params)).input_tokens;
}
