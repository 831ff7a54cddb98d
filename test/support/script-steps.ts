// Replies the local Messages API server is scripted to give (testing/messages-api/types.ts, ScriptStep), for the
// shapes many tests script: a text answer, a turn of tool calls, a typed answer in either of its forms.
import type { ScriptStep } from '../../testing/messages-api/types';

/** The model answers `text` and ends its turn. */
export const says = (text: string): ScriptStep => ({
  reply: { content: [{ type: 'text', text }], stop_reason: 'end_turn' },
});

/** The model calls these tools, by name and input, in one reply. */
export const callsTools = (...calls: [name: string, input: Record<string, unknown>][]): ScriptStep => ({
  reply: { content: calls.map(([name, input]) => ({ type: 'tool_use', name, input })), stop_reason: 'tool_use' },
});

/** A typed answer by the API's structured outputs: the reply is `value` as JSON text. */
export const answersJson = (value: unknown): ScriptStep => ({
  reply: { content: [{ type: 'json', value }], stop_reason: 'end_turn' },
});

/** A typed answer by the answer tool: the model calls `final_answer` with `input`. */
export const answersWithTool = (input: Record<string, unknown>): ScriptStep => ({
  reply: { content: [{ type: 'tool_use', name: 'final_answer', input }], stop_reason: 'tool_use' },
});
