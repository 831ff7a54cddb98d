// The Messages API's own tool use: `tool_use` blocks in the reply, `tool_result` blocks in the next user message.
import type { ContentBlock, ContentBlockParam, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { Protocol, ToolCall } from './types';

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

export const nativeProtocol: Protocol = {
  name: 'native',

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
          encoding: 'json',
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
