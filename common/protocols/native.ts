// The Messages API's own tool use: `tools` in the request, `tool_use` blocks in the reply, `tool_result` blocks in
// the next user message.
import type { ContentBlockParam, Tool, ToolChoice, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { serverToolBlock } from '../server-tools';
import { knownStopReason, sendableBlock } from './reply-content';
import { readToolUse } from './tool-use-blocks';
import type { Protocol, ToolCall, ToolDescription, ToolRequestOptions } from './types';

/** The description, then what the tool returns and raises: the API has no fields for those. */
function describe(tool: ToolDescription): string {
  const lines = [tool.description];
  if (tool.returns) lines.push(`Returns ${tool.returns}`);
  for (const raised of tool.raises ?? []) lines.push(`Raises ${raised}`);
  return lines.join('\n');
}

function toolChoice(options: ToolRequestOptions): ToolChoice | undefined {
  if (!options.disableParallelToolUse) return options.toolChoice;
  const choice = options.toolChoice ?? { type: 'auto' };
  return choice.type === 'none' ? choice : { ...choice, disable_parallel_tool_use: true };
}

export const nativeProtocol: Protocol = {
  name: 'native',

  renderTools(tools, options) {
    if (tools.length === 0) return {};
    const rendered = tools.map((tool, index): Tool => ({
      name: tool.name,
      description: describe(tool),
      input_schema: tool.input_schema,
      ...(options.promptCaching && index === tools.length - 1 && { cache_control: { type: 'ephemeral' } }),
    }));
    const choice = toolChoice(options);
    return { tools: rendered, ...(choice && { tool_choice: choice }) };
  },

  readReply(reply, callNumber, takenIds = new Set(), options = {}) {
    const toolCalls: ToolCall[] = [];
    const texts: string[] = [];
    const blocks: ContentBlockParam[] = [];
    const taken = new Set(takenIds);
    for (const block of Array.isArray(reply.content) ? (reply.content as unknown[]) : []) {
      const type = typeof block === 'object' && block !== null ? (block as { type?: unknown }).type : undefined;
      if (type === 'tool_use') {
        const read = readToolUse(block, callNumber, toolCalls.length, taken);
        blocks.push(read.block);
        toolCalls.push(read.call);
        continue;
      }
      const text = type === 'text' ? (block as { text?: unknown }).text : undefined;
      if (typeof text === 'string') texts.push(text);
      const server = options.serverTools ? serverToolBlock(block as Record<string, unknown>) : undefined;
      if (server) {
        blocks.push(server);
        continue;
      }
      const sendable = sendableBlock(block);
      if (sendable) blocks.push(sendable);
    }
    return {
      assistant: { role: 'assistant', content: blocks },
      toolCalls,
      text: texts.join('\n').trim(),
      stopReason: knownStopReason(reply.stop_reason),
    };
  },

  decodeToolInput: (input) => ({ ok: true, value: input }),

  renderResults(outcomes) {
    const blocks: ToolResultBlockParam[] = outcomes.map((outcome) => ({
      type: 'tool_result',
      tool_use_id: outcome.callId,
      content: outcome.content,
      ...(outcome.isError && { is_error: true }),
    }));
    return { role: 'user', content: blocks };
  },
};
