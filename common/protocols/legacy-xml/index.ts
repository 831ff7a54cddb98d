// The legacy prompt-based tool-use protocol: tools are described in the system prompt, the model calls them by
// writing a `<function_calls>` block (the API stops at `</function_calls>`, the stop sequence, and leaves it out of
// the text), and results go back as a `<function_results>` block in the next user message.
//
// Pure and deterministic (it runs in the workflow sandbox): no Node built-ins, no I/O, no clocks, no randomness.
// The pieces live next to this file; it assembles the Protocol and re-exports them.
import { knownStopReason } from '../reply-content';
import type { ModelReply, Protocol, ReplyReading, ToolCall } from '../types';
import { extractAnswer } from './answer';
import { coerceParameters } from './coerce';
import { parseFunctionCalls } from './parse';
import { renderToolsPrompt } from './prompt';
import { renderFunctionResults } from './results';

export { extractAnswer } from './answer';
export { coerceParameters, type CoerceResult } from './coerce';
export { parseFunctionCalls, type ParsedFunctionCalls, type ParsedInvoke } from './parse';
export { escapeXml, renderToolsPrompt } from './prompt';
export { neutraliseClosers, renderFunctionResults } from './results';

/** Pass this as a stop sequence on every request of a legacy conversation. */
export const LEGACY_STOP_SEQUENCE = '</function_calls>';

/** The reply's text blocks, concatenated. Other blocks (thinking, …) are not part of this protocol. */
function replyText(reply: ModelReply): string {
  if (!Array.isArray(reply.content)) return '';
  let text = '';
  for (const block of reply.content) if (block.type === 'text' && typeof block.text === 'string') text += block.text;
  return text;
}

function readReply(reply: ModelReply, callNumber: number): ReplyReading {
  const text = replyText(reply);
  const stopped = reply.stop_reason === 'stop_sequence' && reply.stop_sequence === LEGACY_STOP_SEQUENCE;
  const parsed = parseFunctionCalls(text);
  // A `<function_calls>` mentioned in prose, with no <invoke> and no stop, is just text.
  const stopReason = knownStopReason(reply.stop_reason);
  if (parsed === null || (!stopped && parsed.calls.length === 0)) {
    return { assistant: { role: 'assistant', content: text }, toolCalls: [], text: extractAnswer(text), stopReason };
  }
  const toolCalls: ToolCall[] = parsed.calls.map((call) => {
    const toolCall: ToolCall = {
      id: `legacy-${callNumber}-${call.index}`,
      ref: `${callNumber}-${call.index}`,
      name: call.name,
      input: call.parameters,
    };
    if (call.error !== undefined) toolCall.malformed = `could not read <invoke> ${call.index + 1}: ${call.error}`;
    return toolCall;
  });
  if (toolCalls.length === 0) {
    // The model stopped on `</function_calls>` without a readable call: answer with an error so it can try again.
    toolCalls.push({
      id: `legacy-${callNumber}-0`,
      ref: `${callNumber}-0`,
      name: '',
      input: {},
      malformed: parsed.errors.join('; ') || 'the <function_calls> block contains no <invoke>',
    });
  }
  // The transcript keeps the exchange complete: the block closed by the stop sequence the API swallowed, and nothing
  // after it (text after a written `</function_calls>` can only be the model imagining the results).
  const assistantText = text.slice(0, parsed.end) + LEGACY_STOP_SEQUENCE;
  return { assistant: { role: 'assistant', content: assistantText }, toolCalls, text: extractAnswer(text), stopReason };
}

export const legacyXmlProtocol: Protocol = {
  name: 'legacy-xml',
  // The tools are described in the system prompt; the API stops the reply where the model closes its calls.
  renderTools: (tools) =>
    tools.length === 0 ? {} : { systemPrefix: renderToolsPrompt([...tools]), stop_sequences: [LEGACY_STOP_SEQUENCE] },
  readReply,
  // Parameters arrive as text: they become the types the tool's JSON Schema declares, then zod checks them.
  decodeToolInput: (input, schema) => coerceParameters(input as Record<string, string>, schema),
  renderResults: (outcomes) => ({ role: 'user', content: renderFunctionResults(outcomes) }),
};
