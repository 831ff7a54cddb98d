// Server tool calls left open: a `server_tool_use` whose result never came. The API leaves one open only where its
// result will still come — in a paused turn sent back as the request's final message, and in a message that stopped
// for the conversation's own tool calls (the API runs the server tool once their results are in, and the next reply
// opens with its result). Anywhere else it refuses the request with a 400, on every later turn. So a message the
// conversation closes — a reply that ended otherwise, a paused or deferring turn a user message now follows — keeps
// only the calls it has results for; one left with nothing says EMPTY_REPLY_TEXT, as an empty reply does. Pure: the
// workflow and the worker's cache close alike.
import type { ContentBlockParam, MessageParam, StopReason } from '@anthropic-ai/sdk/resources/messages';
import { EMPTY_REPLY_TEXT } from './protocols/reply-content';
import { SERVER_TOOL_RESULT_TYPES } from './server-tools';

/** The workflow's patch: histories from before kept every call as it came. */
export const CLOSE_SERVER_TOOL_CALLS_PATCH = 'close-open-server-tool-calls';

const RESULT_TYPES: ReadonlySet<string> = new Set(SERVER_TOOL_RESULT_TYPES);

function field(block: ContentBlockParam, name: string): unknown {
  return (block as unknown as Record<string, unknown>)[name];
}

/** Whether a reply that stopped so may leave its server tool calls open: paused, or stopped for the tools' calls. */
export function leavesServerToolCallsOpen(stopReason: StopReason | null, reply: MessageParam): boolean {
  if (stopReason === 'pause_turn') return true;
  return stopReason === 'tool_use' && Array.isArray(reply.content) && reply.content.some((b) => b.type === 'tool_use');
}

/** The assistant message without its open server tool calls; the same object when it has none. */
export function withServerToolCallsClosed(message: MessageParam): MessageParam {
  if (message.role !== 'assistant' || typeof message.content === 'string') return message;
  const answered = new Set(message.content.filter((b) => RESULT_TYPES.has(b.type)).map((b) => field(b, 'tool_use_id')));
  const kept = message.content.filter((b) => b.type !== 'server_tool_use' || answered.has(b.id));
  if (kept.length === message.content.length) return message;
  return { role: 'assistant', content: kept.length > 0 ? kept : [{ type: 'text', text: EMPTY_REPLY_TEXT }] };
}

/** The message a reply leaves in the transcript: its open server tool calls closed, unless it may leave them open. */
export function closedReply(message: MessageParam, stopReason: StopReason | null): MessageParam {
  return leavesServerToolCallsOpen(stopReason, message) ? message : withServerToolCallsClosed(message);
}
