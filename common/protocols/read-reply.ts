// A model reply as it enters the transcript: every reply, in the workflow and in the worker's transcript cache, goes
// through readReply, so both copies of the transcript agree. It hands the reply to its protocol's reader and keeps what
// no protocol knows: a leading compaction block (common/compaction.ts), and an assistant message even when the reply
// had nothing the API would take back. Pure.
import type { BetaCompactionBlock } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { ContentBlock, ContentBlockParam, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { compactionParam, isCompactionBlock, type ReplyWithCompaction } from '../compaction';
import { EMPTY_REPLY_TEXT, isSendableText } from './reply-content';
import { toolUseIdsOf } from './tool-use-blocks';
import type { Protocol, ReadOptions, ReplyReading } from './types';

/**
 * The protocol's reading of a reply as it enters the transcript: the workflow and the worker's cache both take it
 * from here. A leading compaction block stays at the head of the assistant message (the protocols know only the
 * blocks they translate; the API wants the compaction block back first, as it came). `transcript` is what the reply
 * follows: its tool_use ids may not be reused. A reply with nothing the API would take back still takes its place
 * (EMPTY_REPLY_TEXT), so the next message follows an assistant one.
 */
export function readReply(
  protocol: Protocol,
  reply: ReplyWithCompaction,
  callNumber: number,
  transcript: readonly MessageParam[],
  options: ReadOptions = {},
): ReplyReading {
  const all: unknown[] = Array.isArray(reply.content) ? reply.content : [];
  const compaction = isCompactionBlock(all[0]) ? compactionParam(all[0] as BetaCompactionBlock) : undefined;
  const content = (compaction ? all.slice(1) : all) as ContentBlock[];
  const reading = protocol.readReply({ ...reply, content }, callNumber, toolUseIdsOf(transcript), options);
  const read = reading.assistant.content;
  const blocks: ContentBlockParam[] = typeof read === 'string' ? (isSendableText(read) ? [textBlock(read)] : []) : read;
  // The non-beta MessageParam type does not list compaction blocks; the beta request that carries them accepts them.
  if (compaction) {
    const withCompaction = [compaction, ...blocks] as unknown as ContentBlockParam[];
    return { ...reading, assistant: { role: 'assistant', content: withCompaction } };
  }
  if (blocks.length > 0) return reading;
  const empty = typeof read === 'string' ? EMPTY_REPLY_TEXT : [textBlock(EMPTY_REPLY_TEXT)];
  return { ...reading, assistant: { role: 'assistant', content: empty } };
}

function textBlock(text: string): ContentBlockParam {
  return { type: 'text', text };
}
