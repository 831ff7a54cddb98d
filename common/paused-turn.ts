// A turn the API paused (`stop_reason: pause_turn`: a long server-side loop of server tools) is continued by sending
// the paused assistant message back as it is, with no user message after it. The continuation is the same assistant
// turn: its blocks join the paused message, so the transcript keeps alternating roles and every server tool block
// stays where it came, in the one assistant message of the turn. Pure: the workflow and the worker's cache join alike.
import type { ContentBlockParam, MessageParam, StopReason } from '@anthropic-ai/sdk/resources/messages';
import { closedReply } from './open-server-tool-calls';

/** The workflow's patch: histories from before joined nothing (a continuation followed the paused message). */
export const PAUSED_TURN_PATCH = 'pause-turn-joins-paused-message';

/** Whether the next model call continues a paused turn: the transcript ends with an assistant message. */
export function endsWithPausedTurn(transcript: readonly MessageParam[]): boolean {
  return transcript.at(-1)?.role === 'assistant';
}

function blocksOf(message: MessageParam): ContentBlockParam[] {
  return typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
}

/** The paused assistant message with the continuation's blocks after its own. */
export function joinPausedTurn(paused: MessageParam, continuation: MessageParam): MessageParam {
  return { role: 'assistant', content: [...blocksOf(paused), ...blocksOf(continuation)] };
}

/** A reply to put after a transcript (withReply). */
export interface FollowingReply {
  reply: MessageParam;
  /** The reply continues the paused turn the transcript ends with (the workflow's PAUSED_TURN_PATCH). */
  joinsPausedTurn: boolean;
  /** Why it stopped: server tool calls it leaves open go, unless it stopped where they may stay open. */
  stopReason: StopReason | null;
}

/**
 * `transcript` with `reply` after it, or joined to its last message when that is a paused assistant turn; the server
 * tool calls it leaves open are closed unless its stop reason lets them stay open (open-server-tool-calls.ts).
 */
export function withReply(
  transcript: readonly MessageParam[],
  { reply, joinsPausedTurn, stopReason }: FollowingReply,
): MessageParam[] {
  const last = transcript.at(-1);
  if (joinsPausedTurn && last?.role === 'assistant') {
    const prior = transcript.slice(0, -1);
    return [...prior, closedReply(prior, joinPausedTurn(last, reply), stopReason)];
  }
  return [...transcript, closedReply(transcript, reply, stopReason)];
}
