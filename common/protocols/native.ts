// The Messages API's own tool use: `tools` in the request, `tool_use` blocks in the reply, `tool_result` blocks in
// the next user message.
import type {
  ContentBlock,
  ContentBlockParam,
  Tool,
  ToolChoice,
  ToolResultBlockParam,
} from '@anthropic-ai/sdk/resources/messages';
import type { Protocol, ToolCall, ToolDescription, ToolRequestOptions } from './types';

/** A reply block as it goes back to the API: response-only fields (citations: null, …) dropped. */
function toParam(block: ContentBlock): ContentBlockParam {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'tool_use':
      return { type: 'tool_use', id: block.id, name: block.name, input: block.input };
    default:
      return block as ContentBlockParam;
  }
}

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

  readReply(reply) {
    const toolCalls: ToolCall[] = [];
    const texts: string[] = [];
    for (const block of reply.content) {
      if (block.type === 'text') texts.push(block.text);
      if (block.type === 'tool_use') {
        const input = block.input;
        const isObject = typeof input === 'object' && input !== null && !Array.isArray(input);
        toolCalls.push({
          id: block.id,
          name: block.name,
          input: isObject ? (input as Record<string, unknown>) : {},
          ...(!isObject && { malformed: `the input of ${block.name} must be a JSON object` }),
        });
      }
    }
    return {
      assistant: { role: 'assistant', content: reply.content.map(toParam) },
      toolCalls,
      text: texts.join('\n').trim(),
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
