// What a conversation knows about its model context: how many input tokens each call started from before and after
// the API compacted or cleared anything, the peak, and the compactions so far. Kept in the state (and its snapshot),
// carried across continue-as-new, and published as search attributes. Pure.
import { z } from 'zod';
import type { TokenUsage } from './usage';
import { sharedOnce } from './shared-once';

/** What one model call tells about its context (CallModelResult.context). */
export interface CallContext {
  /** Input tokens the model read (input, cache reads and writes), after any compaction or clearing. */
  inputTokens: number;
  /** The same prompt before the API compacted or cleared anything (equal when it did nothing). */
  inputTokensBefore: number;
  /** Tool uses the API cleared from this call's prompt, and their tokens (context editing). */
  clearedToolUses: number;
  clearedInputTokens: number;
}

export interface CompactionRecord {
  /** The model call (conversation-wide count) after which the context was compacted. */
  afterCall: number;
  by: 'api' | 'orchestrator';
  /** Input tokens of the context that was compacted. */
  inputTokensBefore: number;
  /** Messages that gave way to the summary. */
  messages: number;
  /** The summary's first characters. */
  summary: string;
}

export interface ContextAccounting {
  /** The latest call's input tokens, after edits: what the model's context holds now. */
  inputTokens: number;
  /** The latest call's input tokens before edits. */
  inputTokensBefore: number;
  /** The latest call's output tokens (they join the context of the next call). */
  outputTokens: number;
  /** The largest prompt any call was sent, before edits. */
  peakInputTokens: number;
  compactions: number;
  /** Messages that gave way to summaries, over all compactions. */
  compactedMessages: number;
  clearedToolUses: number;
  clearedInputTokens: number;
  lastCompaction?: CompactionRecord;
}

export const ZERO_CONTEXT: ContextAccounting = {
  inputTokens: 0,
  inputTokensBefore: 0,
  outputTokens: 0,
  peakInputTokens: 0,
  compactions: 0,
  compactedMessages: 0,
  clearedToolUses: 0,
  clearedInputTokens: 0,
};

const count = sharedOnce('contextAccounting.count', () => z.number().int().min(0));

export const contextAccountingSchema = sharedOnce(
  'contextAccounting.contextAccountingSchema',
  () =>
    z.strictObject({
      inputTokens: count,
      inputTokensBefore: count,
      outputTokens: count,
      peakInputTokens: count,
      compactions: count,
      compactedMessages: count,
      clearedToolUses: count,
      clearedInputTokens: count,
      lastCompaction: z
        .strictObject({
          afterCall: count,
          by: z.enum(['api', 'orchestrator']),
          inputTokensBefore: count,
          messages: count,
          summary: z.string(),
        })
        .optional(),
    }) satisfies z.ZodType<ContextAccounting>,
);

/** How much of a summary the state keeps and shows. */
export const SUMMARY_PREVIEW_CHARS = 300;

/** A call's context when the API neither compacted nor cleared anything: its prompt, as the usage counts it. */
export function contextOfUsage(usage: TokenUsage): CallContext {
  const inputTokens = usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens;
  return { inputTokens, inputTokensBefore: inputTokens, clearedToolUses: 0, clearedInputTokens: 0 };
}

export function recordCall(context: ContextAccounting, call: CallContext, outputTokens: number): ContextAccounting {
  return {
    ...context,
    inputTokens: call.inputTokens,
    inputTokensBefore: call.inputTokensBefore,
    outputTokens,
    peakInputTokens: Math.max(context.peakInputTokens, call.inputTokensBefore, call.inputTokens),
    clearedToolUses: context.clearedToolUses + call.clearedToolUses,
    clearedInputTokens: context.clearedInputTokens + call.clearedInputTokens,
  };
}

export function recordCompaction(context: ContextAccounting, compaction: CompactionRecord): ContextAccounting {
  const summary =
    compaction.summary.length > SUMMARY_PREVIEW_CHARS
      ? `${compaction.summary.slice(0, SUMMARY_PREVIEW_CHARS - 1)}…`
      : compaction.summary;
  return {
    ...context,
    compactions: context.compactions + 1,
    compactedMessages: context.compactedMessages + compaction.messages,
    peakInputTokens: Math.max(context.peakInputTokens, compaction.inputTokensBefore),
    lastCompaction: { ...compaction, summary },
  };
}

/** What a model call's activity summary adds once the context was compacted: ` · context compacted ×2`. */
export function compactionNote(context: ContextAccounting): string {
  return context.compactions > 0 ? ` · context compacted ×${context.compactions}` : '';
}

/**
 * The next call's input, estimated before it is made: the last call's input and output, and what was added since
 * (about four characters a token). What the orchestrator's own compaction is triggered on.
 */
export function estimatedNextInput(context: ContextAccounting, addedChars: number): number {
  return context.inputTokens + context.outputTokens + Math.ceil(addedChars / 4);
}
