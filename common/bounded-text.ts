// Text that comes from outside (a tool's result or error, an MCP server's answer) and goes into the transcript, a
// failure or a heartbeat: cut to a limit with a visible marker, and well-formed. The transcript is resent with every
// later model call; a failure message and heartbeat details go through the worker's own encoder, which refuses a
// lone surrogate (half of a UTF-16 pair) — an activity failure holding one stops the worker — and the API refuses one
// in a request. Pure, linear in the text: used by the workflow and the activities alike.
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { ProtocolName, ToolOutcome } from './protocols/types';
import { keptBefore, truncate, truncationMarker, wellFormed } from './safe-text';

/** What one tool result or error, or any other text the orchestrator writes, may hold in the transcript. */
export const DEFAULT_MAX_RESULT_CHARS = 100_000;

/**
 * At most `max` characters of text in all, well-formed: the text block that crosses the limit is cut and ends with
 * `[output truncated: N of M characters omitted]` (N and M over the whole result); later text blocks are left out.
 * Other blocks (images) stay where they are.
 */
export function limitText<B extends { type: string }>(blocks: B[], max: number): B[] {
  const total = blocks.reduce((sum, block) => sum + (isText(block) ? block.text.length : 0), 0);
  if (total <= max) {
    const out = blocks.map((block) => (isText(block) ? withText(block, wellFormed(block.text)) : block));
    return out.every((block, i) => block === blocks[i]) ? blocks : out;
  }
  const kept = keptBefore(total, max);
  const out: B[] = [];
  let room = kept;
  let cut = false;
  for (const block of blocks) {
    if (!isText(block)) {
      out.push(block);
      continue;
    }
    if (cut) continue;
    if (block.text.length <= room) {
      out.push({ ...block, text: wellFormed(block.text) });
      room -= block.text.length;
      continue;
    }
    out.push({ ...block, text: wellFormed(block.text.slice(0, room)) + truncationMarker(total, kept) });
    cut = true;
  }
  return out;
}

/** A tool call's outcome as it may enter the transcript: its text within `max` characters in all, well-formed. */
export function boundedOutcome(outcome: ToolOutcome, max: number): ToolOutcome {
  const content =
    typeof outcome.content === 'string' ? truncate(outcome.content, max) : limitText(outcome.content, max);
  return { ...outcome, content };
}

/**
 * A message the orchestrator writes (tool results, a correction of a typed answer) as it may enter the transcript:
 * each text in it within `max` characters, well-formed. The legacy protocol writes every result of a reply into one
 * text, each result bounded already (run-tool-calls.ts): that text is only made well-formed.
 */
export function boundedMessage(message: MessageParam, protocol: ProtocolName, max: number): MessageParam {
  const { content } = message;
  if (typeof content === 'string') {
    const text = protocol === 'legacy-xml' ? wellFormed(content) : truncate(content, max);
    return text === content ? message : { ...message, content: text };
  }
  const blocks = content.map((block) => {
    if (block.type === 'text') return withText(block, truncate(block.text, max));
    if (block.type !== 'tool_result' || block.content === undefined) return block;
    const inner = block.content;
    const bounded = typeof inner === 'string' ? truncate(inner, max) : limitText(inner, max);
    return bounded === inner ? block : { ...block, content: bounded };
  });
  // The same message when nothing was cut: the caller can tell a cut from none.
  return blocks.every((block, i) => block === content[i]) ? message : ({ ...message, content: blocks } as MessageParam);
}

/** The block with `text`, or the block itself when its text is that already. */
function withText<B extends { type: 'text'; text: string }>(block: B, text: string): B {
  return text === block.text ? block : { ...block, text };
}

function isText<B extends { type: string }>(block: B): block is B & { type: 'text'; text: string } {
  return block.type === 'text' && typeof (block as { text?: unknown }).text === 'string';
}
