// The orchestrator's own compaction, for a model or endpoint without the API's: one extra model call summarises the
// older part of the transcript, which then gives way to the summary (a user message) followed by the most recent
// exchange. The cut is always at an assistant message, so a tool call and its results stay on the same side.
// Pure: the workflow and the summarising activity apply the same rules.
import type { MessageParam, TextBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { compactionOf } from './compaction';

/** How the summary opens in the transcript (and how it is recognised there). */
export const SUMMARY_HEADING =
  'The earlier part of this conversation was summarised to fit the context window. Summary:';

/** What the summary call asks for, after the messages it summarises. */
export const SUMMARY_REQUEST =
  'Summarise the conversation above so that it can go on from your summary alone: what the user asked for and ' +
  'why, what has been done so far (each tool that was used and what it returned that still matters), decisions ' +
  'made, open questions, and what remains to be done. Keep names, numbers and identifiers exactly. Answer with ' +
  'the summary only, inside <summary></summary> tags.';

/**
 * Where the transcript is cut: the index of its last assistant message, so the summary replaces everything before
 * that reply and the reply and its results stay as they are. Undefined when fewer than two messages would be
 * summarised (nothing worth a model call).
 */
export function summaryCut(messages: readonly MessageParam[]): number | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === 'assistant') return i >= 2 ? i : undefined;
  }
  return undefined;
}

/** The messages a summary call sends: the ones to summarise, the request added to the last (a user message). */
export function summaryRequestMessages(toSummarise: readonly MessageParam[], instructions?: string): MessageParam[] {
  const last = toSummarise.at(-1);
  if (!last || last.role !== 'user') throw new Error('a summary call summarises up to a user message');
  const request: TextBlockParam = { type: 'text', text: instructions ?? SUMMARY_REQUEST };
  const blocks = typeof last.content === 'string' ? [{ type: 'text' as const, text: last.content }] : last.content;
  return [...toSummarise.slice(0, -1), { role: 'user', content: [...blocks, request] }];
}

/** The summary out of the model's answer: inside `<summary>` tags when it used them. */
export function summaryText(answer: string): string {
  const match = /<summary>([\s\S]*?)(?:<\/summary>|$)/.exec(answer);
  return (match ? match[1]! : answer).trim();
}

/** The message that stands for the summarised part. */
export function summaryMessage(summary: string): MessageParam {
  return { role: 'user', content: [{ type: 'text', text: `${SUMMARY_HEADING}\n<summary>\n${summary}\n</summary>` }] };
}

export function isSummaryMessage(message: MessageParam | undefined): boolean {
  const first = message && Array.isArray(message.content) ? message.content[0] : undefined;
  return message?.role === 'user' && first?.type === 'text' && first.text.startsWith(SUMMARY_HEADING);
}

/**
 * What a turn that failed after compacting the context goes back to: the compaction alone (the API's block, or the
 * orchestrator's summary), so the next message starts from it rather than from nothing. Empty when the transcript
 * does not open with one.
 */
export function compactedHead(transcript: readonly MessageParam[]): MessageParam[] {
  const first = transcript[0];
  const block = compactionOf(first);
  if (block) return [{ role: 'assistant', content: [block] as unknown as MessageParam['content'] }];
  if (isSummaryMessage(first) && Array.isArray(first!.content))
    return [{ role: 'user', content: [first!.content[0]!] }];
  return [];
}
