// The API's compaction blocks in the transcript. A reply that opens with a `compaction` block (one with a summary)
// stands for everything before it: the API drops the earlier messages on the next request, and so does the
// orchestrator — the workflow's transcript, what it carries to the next run and what the worker caches all start at
// that reply. The earlier messages stay readable where they were produced (this run's and earlier runs' histories).
// Pure: the workflow and the worker apply the same rules, so their copies agree.
import type { BetaCompactionBlock, BetaCompactionBlockParam } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { ContentBlock, ContentBlockParam, MessageParam, StopReason } from '@anthropic-ai/sdk/resources/messages';
import { EMPTY_REPLY_TEXT, isSendableText } from './protocols/reply-content';
import { toolUseIdsOf } from './protocols/tool-use-blocks';
import type { Protocol, ReadOptions, ReplyReading } from './protocols/types';

/** A reply block as a model call returns it: the usual blocks, or the API's compaction block. */
export type ReplyBlock = ContentBlock | BetaCompactionBlock;

/** A model reply as the protocols read it, compaction block included. */
export interface ReplyWithCompaction {
  content: ReplyBlock[];
  stop_reason: StopReason | null;
  stop_sequence?: string | null;
}

export function isCompactionBlock(block: unknown): block is BetaCompactionBlockParam {
  return typeof block === 'object' && block !== null && (block as { type?: unknown }).type === 'compaction';
}

/** The compaction block a message opens with, when it holds a summary (a null content is a failed compaction). */
export function compactionOf(message: MessageParam | undefined): BetaCompactionBlockParam | undefined {
  const first: unknown = message && Array.isArray(message.content) ? message.content[0] : undefined;
  return isCompactionBlock(first) && typeof first.content === 'string' ? first : undefined;
}

/** The index of the last message that opens with a compaction summary, or -1. */
export function lastCompactionIndex(messages: readonly MessageParam[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (compactionOf(messages[i])) return i;
  return -1;
}

/** What the model sees: everything from the last compaction on (all of it when there was none). */
export function afterCompaction(messages: MessageParam[]): MessageParam[] {
  const at = lastCompactionIndex(messages);
  return at > 0 ? messages.slice(at) : messages;
}

/** The block as it goes back to the API: every field as returned, nothing added. */
export function compactionParam(block: BetaCompactionBlock | BetaCompactionBlockParam): BetaCompactionBlockParam {
  return {
    type: 'compaction',
    content: block.content ?? null,
    ...(block.encrypted_content != null && { encrypted_content: block.encrypted_content }),
    ...(block.signature != null && { signature: block.signature }),
    ...(block.tool_changes != null && { tool_changes: block.tool_changes }),
  } as BetaCompactionBlockParam;
}

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
