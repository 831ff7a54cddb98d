// Budgets: how much one turn, and one conversation, may spend, in tokens and/or USD (the `budget` option), and the
// decision taken before every model call: what is spent plus an estimate of the next call must stay within each limit.
// Pure: the workflow decides with it, tests check the arithmetic without Temporal.
//
// Tokens are every token a call bills: input, cache writes, cache reads and output, those of attempts that failed
// mid-stream included. Every request the orchestrator sends is checked (workflows/model-requests.ts). A model call is
// estimated from the API's count_tokens endpoint (`estimate: 'count-tokens'`, one extra request per call) or, by
// default, from the last call: its prompt plus about a token per 4 characters of what was added since, and its output
// again. A retry up the max_tokens ladder and the orchestrator's summary call are estimated at their worst case: the
// prompt and all of their max_tokens. A budget is a guard, not a meter: a call that turns out larger than estimated
// can end over it, by at most its own worst case, and nothing is sent after that.
import { z } from 'zod';
import type { TokenUsage } from './usage';
import { addCost, costUsd, type ModelPrices, formatUsd } from './pricing';
import { sharedOnce } from './shared-once';

const limitSchema = sharedOnce('budget.limitSchema', () =>
  z
    .strictObject({
      tokens: z.number().int().positive().max(1e12).optional(),
      usd: z.number().positive().max(1e6).optional(),
    })
    .refine((limit) => limit.tokens !== undefined || limit.usd !== undefined, 'set tokens, usd or both'),
);
export type BudgetLimit = z.infer<typeof limitSchema>;

export const budgetSchema = sharedOnce('budget.budgetSchema', () =>
  z
    .strictObject({
      /** What one user message may spend; the turn ends with `budget_exhausted` and the conversation goes on. */
      perTurn: limitSchema.optional(),
      /** What the whole conversation may spend; once it is reached the conversation ends with `budget_exhausted`. */
      perConversation: limitSchema.optional(),
      /** How the next call is estimated: from the last call (free), or with the API's count_tokens endpoint. */
      estimate: z.enum(['last-call', 'count-tokens']).default('last-call'),
    })
    .optional(),
);
export type BudgetOptions = z.output<typeof budgetSchema>;

/** What has been spent: tokens, and USD (null when the model has no price). */
export interface Spent {
  tokens: number;
  usd: number | null;
}

/** What the next request is expected to take. */
export interface CallEstimate {
  /** The prompt: input, cache writes and cache reads together. */
  promptTokens: number;
  outputTokens: number;
  /** null when the model has no price. */
  usd: number | null;
  /** The request, as a refusal names it (default: `the next model call`). */
  what?: string;
  /** The output is the request's max_tokens: the most it can take, not a guess. */
  worstCase?: boolean;
}

/**
 * What a request was admitted with, handed to its activity. Temporal retries a failed attempt without asking the
 * workflow, so the activity checks each retry the same way, with what the failed attempts billed added to `spent`
 * (activities/billed-attempts.ts): the same function decides, with the same estimate.
 */
export interface CallGuard {
  budget: NonNullable<BudgetOptions>;
  spent: { turn: Spent; conversation: Spent };
  estimate: CallEstimate;
  prices: ModelPrices | null;
  model: string;
}

export type BudgetScope = 'turn' | 'conversation';
export type BudgetVerdict = { ok: true } | BudgetRefusal;
export interface BudgetRefusal {
  ok: false;
  scope: BudgetScope;
  message: string;
}

/** Whether `budget` sets any limit (an `estimate` alone does not). */
export function hasLimits(budget: BudgetOptions): budget is NonNullable<BudgetOptions> {
  return budget?.perTurn !== undefined || budget?.perConversation !== undefined;
}

/** Every token a call bills. */
export function billedTokens(usage: TokenUsage): number {
  return usage.inputTokens + usage.cacheCreationInputTokens + usage.cacheReadInputTokens + usage.outputTokens;
}

/** A prompt's tokens, cached or not. */
export function promptTokens(usage: TokenUsage): number {
  return usage.inputTokens + usage.cacheCreationInputTokens + usage.cacheReadInputTokens;
}

/** `spent` in both scopes, plus `usage` (priced with `prices`; without them the cost becomes unknown). */
export function spentWith(
  spent: { turn: Spent; conversation: Spent },
  usage: TokenUsage,
  prices: ModelPrices | null,
): { turn: Spent; conversation: Spent } {
  const tokens = billedTokens(usage);
  const usd = prices ? costUsd(usage, prices) : null;
  const add = (scope: Spent): Spent => ({ tokens: scope.tokens + tokens, usd: addCost(scope.usd, usd) });
  return { turn: add(spent.turn), conversation: add(spent.conversation) };
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
  const request = next.what ?? 'the next model call';
  const about = next.worstCase ? 'up to' : 'about';
  for (const [scope, limit, used] of scopes) {
    if (!limit) continue;
    const what = scope === 'turn' ? 'this turn' : 'the conversation';
    if (limit.tokens !== undefined && used.tokens + nextTokens > limit.tokens) {
      const more = nextTokens > 0 ? ` and ${request} would take ${about} ${nextTokens} more,` : ',';
      return {
        ok: false,
        scope,
        message: `Budget exhausted: ${what} has used ${used.tokens} tokens${more} over its limit of ${limit.tokens} tokens.`,
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
        const more = next.usd > 0 ? ` and ${request} would cost ${about} ${formatUsd(next.usd)} more,` : ',';
        return {
          ok: false,
          scope,
          message: `Budget exhausted: ${what} has spent ${formatUsd(used.usd)}${more} over its limit of ${formatUsd(limit.usd)}.`,
        };
      }
    }
  }
  return { ok: true };
}
