// Builds the Messages API request for one model call: the conversation's options and transcript, with the tools
// put in by the conversation's protocol. With prompt caching on, three breakpoints: after the tools, after the
// system prompt (both byte-identical across turns) and on the newest message, so each call reads the previous
// call's prefix from the cache and writes only what the turn added.
import type {
  ContentBlockParam,
  MessageCreateParamsStreaming,
  MessageParam,
  TextBlockParam,
  Tool,
  ToolUnion,
} from '@anthropic-ai/sdk/resources/messages';
import { transformJSONSchema } from '@anthropic-ai/sdk/lib/transform-json-schema';
import type { ModelRequestOptions } from '../common/activity-contracts';
import { protocolFor } from '../common/protocols';
import type { ToolDescription } from '../common/protocols/types';
import { isDeferred, offersServerTools, serverToolParams, type ServerToolsOption } from '../common/server-tools';
import { answerToolDescription, type OutputSpec } from '../common/structured-output';
import { thinkingParam } from '../common/thinking';

const EPHEMERAL = { type: 'ephemeral' } as const;

export function buildModelRequest(
  options: ModelRequestOptions & { system?: string },
  messages: MessageParam[],
  tools: readonly ToolDescription[],
): MessageCreateParamsStreaming {
  const caching = options.promptCaching;
  const output = options.output;
  // The answer tool goes last: the tools' cache breakpoint then covers it too, and it is the same every call.
  const answerTool = output?.mode === 'tool' ? answerToolDescription(output) : undefined;
  const offered = answerTool ? [...tools, answerTool] : tools;
  const { systemPrefix, ...toolFields } = protocolFor(options.protocol).renderTools(offered, {
    promptCaching: caching,
    ...(options.toolChoice && { toolChoice: options.toolChoice }),
    ...(options.disableParallelToolUse !== undefined && { disableParallelToolUse: options.disableParallelToolUse }),
  });
  const system = [systemPrefix, options.system].filter(Boolean).join('\n\n');
  const serverTools = options.serverTools;
  const withServerTools = offersServerTools(serverTools)
    ? { ...toolFields, tools: withServerToolsOffered(toolFields.tools ?? [], serverTools, caching, answerTool?.name) }
    : toolFields;
  return {
    model: options.model,
    max_tokens: options.maxTokens,
    messages: caching ? withBreakpointOnLast(messages) : messages,
    ...withServerTools,
    ...(options.container !== undefined && { container: options.container }),
    ...(system && { system: caching ? [{ type: 'text', text: system, cache_control: EPHEMERAL }] : system }),
    ...(options.thinking && { thinking: thinkingParam(options.thinking) }),
    ...((output?.mode === 'native' || options.effort) && {
      output_config: {
        ...(options.effort && { effort: options.effort }),
        ...(output?.mode === 'native' && { format: outputFormat(output) }),
      },
    }),
    stream: true,
  };
}

/**
 * The server tools first (fixed, so the cached prefix stays the same), then the conversation's tools, those tool
 * search defers marked `defer_loading`. A deferred tool is not part of the prompt until the model finds it, so the
 * tools' cache breakpoint goes on the last tool that is.
 */
function withServerToolsOffered(
  tools: Tool[],
  option: ServerToolsOption,
  caching: boolean,
  answerTool: string | undefined,
): ToolUnion[] {
  const own = tools.map((tool): Tool => {
    const { cache_control: _breakpoint, ...rest } = tool;
    // The answer tool of a typed answer is never deferred: the model must be able to answer without searching.
    return tool.name !== answerTool && isDeferred(tool.name, option) ? { ...rest, defer_loading: true } : rest;
  });
  const all: ToolUnion[] = [...serverToolParams(option), ...own];
  if (!caching) return all;
  for (let i = all.length - 1; i >= 0; i--) {
    const tool = all[i]!;
    if ('defer_loading' in tool && tool.defer_loading) continue;
    all[i] = { ...tool, cache_control: EPHEMERAL } as ToolUnion;
    break;
  }
  return all;
}

/**
 * `output_config.format` of a typed answer. The API takes a subset of JSON Schema (no bounds like `minimum`, every
 * object closed): the SDK's own transform moves the rest into descriptions; the answer is checked against the whole
 * schema (workflows/answer-check.ts).
 */
export function outputFormat(output: OutputSpec): { type: 'json_schema'; schema: Record<string, unknown> } {
  return { type: 'json_schema', schema: transformJSONSchema(output.schema) as Record<string, unknown> };
}

/** A copy of the messages whose last block carries a cache breakpoint; the transcript itself is not touched. */
function withBreakpointOnLast(messages: MessageParam[]): MessageParam[] {
  const last = messages.at(-1);
  if (!last) return messages;
  const blocks: ContentBlockParam[] =
    typeof last.content === 'string'
      ? [{ type: 'text', text: last.content } satisfies TextBlockParam]
      : [...last.content];
  const tail = blocks.at(-1);
  if (
    !tail ||
    (tail.type === 'text' && tail.text === '') ||
    tail.type === 'thinking' ||
    tail.type === 'redacted_thinking'
  ) {
    return messages;
  }
  blocks[blocks.length - 1] = { ...tail, cache_control: EPHEMERAL } as ContentBlockParam;
  return [...messages.slice(0, -1), { ...last, content: blocks } as MessageParam];
}
