// Token usage: its shape (TokenUsage), and its sums per turn and per conversation. Pure, and a leaf of common/: the
// files that count or price usage import it, so it imports none of them.
import { z } from 'zod';
import { sharedOnce } from './shared-once';

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
  /**
   * Of `outputTokens`, those the model spent thinking (the API's `output_tokens_details.thinking_tokens`): already
   * counted in `outputTokens`, priced and budgeted as output. Absent when no reply reported any.
   */
  thinkingTokens?: number;
  /** Web searches the API's `web_search` server tool ran (`usage.server_tool_use`): priced per search. Absent: none. */
  webSearchRequests?: number;
  /** Pages the API's `web_fetch` server tool fetched (`usage.server_tool_use`): tokens only. Absent: none. */
  webFetchRequests?: number;
}

export const ZERO_USAGE: TokenUsage = {
  inputTokens: 0,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
};

export function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  // Usage without thinking keeps its four fields (history and carried state stay as they were).
  const thinking = a.thinkingTokens !== undefined || b.thinkingTokens !== undefined;
  const searches = a.webSearchRequests !== undefined || b.webSearchRequests !== undefined;
  const fetches = a.webFetchRequests !== undefined || b.webFetchRequests !== undefined;
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadInputTokens: a.cacheReadInputTokens + b.cacheReadInputTokens,
    cacheCreationInputTokens: a.cacheCreationInputTokens + b.cacheCreationInputTokens,
    ...(thinking && { thinkingTokens: (a.thinkingTokens ?? 0) + (b.thinkingTokens ?? 0) }),
    ...(searches && { webSearchRequests: (a.webSearchRequests ?? 0) + (b.webSearchRequests ?? 0) }),
    ...(fetches && { webFetchRequests: (a.webFetchRequests ?? 0) + (b.webFetchRequests ?? 0) }),
  };
}

const tokens = sharedOnce('usage.tokens', () => z.number().int().min(0).max(1e12));

/**
 * A usage that crossed a boundary the code does not control (heartbeat details, failure details): checked before it
 * is added to anything.
 */
export const tokenUsageSchema = sharedOnce(
  'usage.tokenUsageSchema',
  () =>
    z.object({
      inputTokens: tokens,
      outputTokens: tokens,
      cacheReadInputTokens: tokens,
      cacheCreationInputTokens: tokens,
      thinkingTokens: tokens.optional(),
      webSearchRequests: tokens.optional(),
      webFetchRequests: tokens.optional(),
    }) satisfies z.ZodType<TokenUsage>,
);

/**
 * A usage as the orchestrator itself wrote it (a carried state, a log event): exactly these fields. Looser on numbers
 * than tokenUsageSchema, as the carried states and events already recorded were checked.
 */
export const recordedUsageSchema = sharedOnce('usage.recordedUsageSchema', () =>
  z.strictObject({
    inputTokens: z.number().min(0),
    outputTokens: z.number().min(0),
    cacheReadInputTokens: z.number().min(0),
    cacheCreationInputTokens: z.number().min(0),
    thinkingTokens: z.number().min(0).optional(),
    webSearchRequests: z.number().min(0).optional(),
    webFetchRequests: z.number().min(0).optional(),
  }),
);

/** What a heartbeat or a failure of a model activity says its failed attempts billed (other fields are ignored). */
export const billedSchema = sharedOnce('usage.billedSchema', () => z.object({ billed: tokenUsageSchema }));

/** The usage `value` says was billed, or undefined when it says nothing readable. */
export function billedIn(value: unknown): TokenUsage | undefined {
  const parsed = billedSchema.safeParse(value);
  return parsed.success ? parsed.data.billed : undefined;
}
