// Server tool calls left open: a `server_tool_use` whose result never came. The API leaves one open only where its
// result will still come — in a paused turn sent back as the request's final message, and in a message that stopped
// for the conversation's own tool calls (the API runs the server tool once their results are in, and the next reply
// opens with its result). Anywhere else it refuses the request with a 400, on every later turn. So a message the
// conversation closes — a reply that ended otherwise, a paused or deferring turn a user message now follows — keeps
// only the calls it has results for; one left with nothing says EMPTY_REPLY_TEXT, as an empty reply does. A result
// with no call before it (a proxy's or a fallback model's stray block; the API refuses it too) never enters the
// transcript, unless it answers a call the message before the tool results left open. Pure: the workflow and the
// worker's cache close alike.
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

/**
 * The server tool calls a reply following `prior` may answer without a call of its own: those the assistant message
 * before the tool results it follows left open (deferred for the conversation's own tool calls).
 */
export function deferredCalls(prior: readonly MessageParam[]): ReadonlySet<unknown> {
  const deferring = prior.at(-1)?.role === 'user' ? prior.at(-2) : undefined;
  if (deferring?.role !== 'assistant' || typeof deferring.content === 'string') return new Set();
  const answered = new Set(
    deferring.content.filter((b) => RESULT_TYPES.has(b.type)).map((b) => field(b, 'tool_use_id')),
  );
  return new Set(
    deferring.content.filter((b) => b.type === 'server_tool_use' && !answered.has(b.id)).map((b) => field(b, 'id')),
  );
}

/** The reply without server tool results that answer no call before them (nor one `deferred`); the same object if none. */
export function withoutStrayResults(reply: MessageParam, deferred: ReadonlySet<unknown>): MessageParam {
  if (typeof reply.content === 'string') return reply;
  const called = new Set(deferred);
  const kept = reply.content.filter((b) => {
    if (b.type === 'server_tool_use') called.add(b.id);
    return !RESULT_TYPES.has(b.type) || called.has(field(b, 'tool_use_id'));
  });
  if (kept.length === reply.content.length) return reply;
  return { role: 'assistant', content: kept.length > 0 ? kept : [{ type: 'text', text: EMPTY_REPLY_TEXT }] };
}

/** The assistant message without its open server tool calls; the same object when it has none. */
export function withServerToolCallsClosed(message: MessageParam): MessageParam {
  if (message.role !== 'assistant' || typeof message.content === 'string') return message;
  const answered = new Set(message.content.filter((b) => RESULT_TYPES.has(b.type)).map((b) => field(b, 'tool_use_id')));
  const kept = message.content.filter((b) => b.type !== 'server_tool_use' || answered.has(b.id));
  if (kept.length === message.content.length) return message;
  return { role: 'assistant', content: kept.length > 0 ? kept : [{ type: 'text', text: EMPTY_REPLY_TEXT }] };
}

/**
 * The message a reply leaves in the transcript after `prior`: without stray results, and its open server tool calls
 * closed unless it may leave them open.
 */
export function closedReply(
  prior: readonly MessageParam[],
  message: MessageParam,
  stopReason: StopReason | null,
): MessageParam {
  const answered = withoutStrayResults(message, deferredCalls(prior));
  return leavesServerToolCallsOpen(stopReason, answered) ? answered : withServerToolCallsClosed(answered);
}
