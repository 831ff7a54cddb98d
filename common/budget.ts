// Budgets: how much one turn, and one conversation, may spend, in tokens and/or USD (the `budget` option), and the
// decision taken before every model call: what is spent plus an estimate of the next call must stay within each limit.
// Pure: the workflow decides with it, tests check the arithmetic without Temporal.
//
// Tokens are every token a call bills: input, cache writes, cache reads and output. The next call is estimated from
// the API's count_tokens endpoint (`estimate: 'count-tokens'`, one extra request per call) or, by default, from the
// last call: its prompt plus about a token per 4 characters of what was added since, and its output again. A budget
// is a guard, not a meter: a call that turns out larger than estimated can end a little over it.
import { z } from 'zod';
import type { TokenUsage } from './conversation-types';
import { type ModelPrices, formatUsd } from './pricing';

const limitSchema = z
  .strictObject({
    tokens: z.number().int().positive().max(1e12).optional(),
    usd: z.number().positive().max(1e6).optional(),
  })
  .refine((limit) => limit.tokens !== undefined || limit.usd !== undefined, 'set tokens, usd or both');
export type BudgetLimit = z.infer<typeof limitSchema>;

export const budgetSchema = z
  .strictObject({
    /** What one user message may spend; the turn ends with `budget_exhausted` and the conversation goes on. */
    perTurn: limitSchema.optional(),
    /** What the whole conversation may spend; once it is reached the conversation ends with `budget_exhausted`. */
    perConversation: limitSchema.optional(),
    /** How the next call is estimated: from the last call (free), or with the API's count_tokens endpoint. */
    estimate: z.enum(['last-call', 'count-tokens']).default('last-call'),
  })
  .optional();
export type BudgetOptions = z.output<typeof budgetSchema>;

/** What has been spent: tokens, and USD (null when the model has no price). */
export interface Spent {
  tokens: number;
  usd: number | null;
}

/** What the next model call is expected to take. */
export interface CallEstimate {
  /** The prompt: input, cache writes and cache reads together. */
  promptTokens: number;
  outputTokens: number;
  /** null when the model has no price. */
  usd: number | null;
}

export type BudgetScope = 'turn' | 'conversation';
export type BudgetVerdict = { ok: true } | { ok: false; scope: BudgetScope; message: string };

/** Every token a call bills. */
export function billedTokens(usage: TokenUsage): number {
  return usage.inputTokens + usage.cacheCreationInputTokens + usage.cacheReadInputTokens + usage.outputTokens;
}

/** A prompt's tokens, cached or not. */
export function promptTokens(usage: TokenUsage): number {
  return usage.inputTokens + usage.cacheCreationInputTokens + usage.cacheReadInputTokens;
}

/** About a token per 4 characters: the usual rule of thumb, for what was added since the last call. */
export function roughTokens(value: unknown): number {
  return Math.ceil((typeof value === 'string' ? value : JSON.stringify(value ?? '')).length / 4);
}

/**
 * The next call's cost. With prompt caching, what the last call's prompt held is read from the cache and the rest
 * written to it; without, all of it is input.
 */
export function estimateCallUsd(
  prices: ModelPrices | null,
  next: { promptTokens: number; outputTokens: number },
  cachedBefore: number,
  promptCaching: boolean,
): number | null {
  if (!prices) return null;
  const read = promptCaching ? Math.min(cachedBefore, next.promptTokens) : 0;
  const fresh = next.promptTokens - read;
  const inputUsd = read * prices.cacheRead + fresh * (promptCaching ? prices.cacheWrite : prices.input);
  return (inputUsd + next.outputTokens * prices.output) / 1_000_000;
}

/**
 * May the next call be made? Each limit is checked against what its scope spent plus the estimate; the conversation's
 * limit first (it ends more). A USD limit with an unknown cost is exhausted: unmeasured money cannot be kept in bounds.
 */
export function checkBudget(
  budget: BudgetOptions,
  spent: { turn: Spent; conversation: Spent },
  next: CallEstimate,
  model: string,
): BudgetVerdict {
  if (!budget) return { ok: true };
  const scopes: [BudgetScope, BudgetLimit | undefined, Spent][] = [
    ['conversation', budget.perConversation, spent.conversation],
    ['turn', budget.perTurn, spent.turn],
  ];
  const nextTokens = next.promptTokens + next.outputTokens;
  for (const [scope, limit, used] of scopes) {
    if (!limit) continue;
    const what = scope === 'turn' ? 'this turn' : 'the conversation';
    if (limit.tokens !== undefined && used.tokens + nextTokens > limit.tokens) {
      return {
        ok: false,
        scope,
        message: `Budget exhausted: ${what} has used ${used.tokens} tokens and the next model call would take about ${nextTokens} more, over its limit of ${limit.tokens} tokens.`,
      };
    }
    if (limit.usd !== undefined) {
      if (used.usd === null || next.usd === null) {
        return {
          ok: false,
          scope,
          message: `Budget exhausted: ${what} has a limit of ${formatUsd(limit.usd)} but the cost of ${model} is unknown (no price for it: set the \`prices\` option or the worker's MODEL_PRICES).`,
        };
      }
      if (used.usd + next.usd > limit.usd) {
        return {
          ok: false,
          scope,
          message: `Budget exhausted: ${what} has spent ${formatUsd(used.usd)} and the next model call would cost about ${formatUsd(next.usd)} more, over its limit of ${formatUsd(limit.usd)}.`,
        };
      }
    }
  }
  return { ok: true };
}
