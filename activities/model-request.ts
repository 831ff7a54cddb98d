// Builds the Messages API request for one model call from the conversation's options, the transcript
// and the tools, in the conversation's protocol. With prompt caching on, three breakpoints: after the
// tools, after the system prompt (both byte-identical across turns) and on the newest message, so each
// call reads the previous call's prefix from the cache and writes only what the turn added.
import type {
  ContentBlockParam,
  MessageCreateParamsStreaming,
  MessageParam,
  TextBlockParam,
  Tool,
  ToolChoice,
} from '@anthropic-ai/sdk/resources/messages';
import type { ModelRequestOptions } from '../workflows/activity-contracts';
import { LEGACY_STOP_SEQUENCE, renderToolsPrompt } from '../workflows/protocols/legacy-xml';
import type { ToolDescription } from '../workflows/protocols/types';

export type DescribedTool = ToolDescription & { returns?: string; raises?: string[] };

const EPHEMERAL = { type: 'ephemeral' } as const;

export function buildModelRequest(
  options: ModelRequestOptions & { system?: string },
  messages: MessageParam[],
  tools: DescribedTool[],
): MessageCreateParamsStreaming {
  const caching = options.promptCaching;
  const request: MessageCreateParamsStreaming = {
    model: options.model,
    max_tokens: options.maxTokens,
    messages: caching ? withBreakpointOnLast(messages) : messages,
    stream: true,
  };

  let system = options.system;
  if (options.protocol === 'legacy-xml') {
    if (tools.length > 0) {
      system = [renderToolsPrompt(tools), system].filter(Boolean).join('\n\n');
      request.stop_sequences = [LEGACY_STOP_SEQUENCE];
    }
  } else if (tools.length > 0) {
    request.tools = tools.map((tool, index): Tool => ({
      name: tool.name,
      description: nativeDescription(tool),
      input_schema: tool.input_schema,
      ...(caching && index === tools.length - 1 && { cache_control: EPHEMERAL }),
    }));
    const choice = toolChoice(options);
    if (choice) request.tool_choice = choice;
  }
  if (system) {
    request.system = caching ? [{ type: 'text', text: system, cache_control: EPHEMERAL }] : system;
  }
  return request;
}

function nativeDescription(tool: DescribedTool): string {
  const lines = [tool.description];
  if (tool.returns) lines.push(`Returns ${tool.returns}`);
  for (const raised of tool.raises ?? []) lines.push(`Raises ${raised}`);
  return lines.join('\n');
}

function toolChoice(options: ModelRequestOptions): ToolChoice | undefined {
  if (!options.disableParallelToolUse) return options.toolChoice;
  const choice = options.toolChoice ?? { type: 'auto' };
  return choice.type === 'none' ? choice : { ...choice, disable_parallel_tool_use: true };
}

/** A copy of the messages whose last block carries a cache breakpoint; the transcript itself is not touched. */
function withBreakpointOnLast(messages: MessageParam[]): MessageParam[] {
  const last = messages.at(-1);
  if (!last || last.role === 'system') return messages;
  const blocks: ContentBlockParam[] = typeof last.content === 'string'
    ? [{ type: 'text', text: last.content } satisfies TextBlockParam]
    : [...last.content];
  const tail = blocks.at(-1);
  if (!tail || (tail.type === 'text' && tail.text === '') || tail.type === 'thinking' || tail.type === 'redacted_thinking') return messages;
  blocks[blocks.length - 1] = { ...tail, cache_control: EPHEMERAL } as ContentBlockParam;
  return [...messages.slice(0, -1), { ...last, content: blocks } as MessageParam];
}
