// The API's compaction blocks in the transcript. A reply that opens with a `compaction` block (one with a summary)
// stands for everything before it: the API drops the earlier messages on the next request, and so does the
// orchestrator — the workflow's transcript, what it carries to the next run and what the worker caches all start at
// that reply. The earlier messages stay readable where they were produced (this run's and earlier runs' histories).
// Pure: the workflow and the worker apply the same rules, so their copies agree.
import type { BetaCompactionBlock, BetaCompactionBlockParam } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { ContentBlock, MessageParam, StopReason } from '@anthropic-ai/sdk/resources/messages';

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
