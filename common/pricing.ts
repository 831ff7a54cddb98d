// What a model call costs: a price table per model (USD per million tokens) and the arithmetic from usage to dollars.
// Pure: the workflow prices each call with the prices the run resolved once (a local activity records them in the
// history, so a new table in a new deploy never changes a replay), the client and the bench use the same math.
//
// Prices are looked up in this order: the conversation's `prices` option, the worker's `MODEL_PRICES` (JSON), this
// table. A model found in none of them has no price: its cost is reported as unknown (`null`), never as 0, so an
// unpriced model cannot look free on a dashboard, and a USD budget cannot be kept for it (budget.ts).
import { z } from 'zod';
import type { TokenUsage } from './usage';
import { sharedOnce } from './shared-once';

/** USD per million tokens. `cacheWrite` is the 5-minute cache write (the orchestrator's breakpoints use that TTL). */
export interface ModelPrices {
  input: number;
  output: number;
  cacheWrite: number;
  cacheRead: number;
  /** USD per 1,000 web searches (the `web_search` server tool); absent: WEB_SEARCH_USD_PER_1000. */
  webSearchPer1000?: number;
}

/**
 * The published price of the `web_search` server tool, the same for every model: $10 per 1,000 searches, on top of
 * the tokens its results add to the prompt. `web_fetch` has no price of its own (its pages are input tokens).
 */
export const WEB_SEARCH_USD_PER_1000 = 10;

const perMillion = sharedOnce('pricing.perMillion', () => z.number().min(0).max(10_000));
export const modelPricesSchema = sharedOnce(
  'pricing.modelPricesSchema',
  () =>
    z.strictObject({
      input: perMillion,
      output: perMillion,
      cacheWrite: perMillion,
      cacheRead: perMillion,
      webSearchPer1000: z.number().min(0).max(10_000).optional(),
    }) satisfies z.ZodType<ModelPrices>,
);

/** Prices by model id, e.g. the worker's `MODEL_PRICES='{"my-model":{"input":1,"output":5,...}}'`. */
export const modelPriceTableSchema = sharedOnce('pricing.modelPriceTableSchema', () =>
  z.record(z.string().trim().min(1).max(256), modelPricesSchema),
);
export type ModelPriceTable = z.infer<typeof modelPriceTableSchema>;

/**
 * Published prices of the Claude models this project uses, from Anthropic's pricing documentation
 * (https://platform.claude.com/docs/en/about-claude/pricing and the models' overview pages), read on 2026-11-23.
 * Claude Sonnet 5.5's cache reads are $0.10 since Anthropic's cut of 2026-10-07 (cache hits 0.05 × input; pricing
 * trackers re-checked against the live page on 2026-10-24 report it; an older copy of the model page says $0.20).
 * Override any of them with the conversation's `prices` option or the worker's `MODEL_PRICES`.
 */
export const PUBLISHED_PRICES: ModelPriceTable = {
  'claude-sonnet-5-5': { input: 2, output: 10, cacheWrite: 2.5, cacheRead: 0.1 },
  'claude-opus-5-5': { input: 4, output: 20, cacheWrite: 5, cacheRead: 0.2 },
  'claude-opus-4-6': { input: 5, output: 25, cacheWrite: 6.25, cacheRead: 0.5 },
  'claude-opus-4-5': { input: 5, output: 25, cacheWrite: 6.25, cacheRead: 0.5 },
  'claude-sonnet-4-6': { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3 },
  'claude-sonnet-4-5': { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3 },
  'claude-haiku-4-5': { input: 1, output: 5, cacheWrite: 1.25, cacheRead: 0.1 },
};

/** A dated id (`claude-sonnet-4-5-20250929`) has the price of its alias. */
const DATE_SUFFIX = /-\d{8}$/;

/** The model's prices from `tables`, first table first; undefined when none has them. */
export function pricesFor(model: string, ...tables: (ModelPriceTable | undefined)[]): ModelPrices | undefined {
  for (const table of tables) {
    const prices = table?.[model] ?? table?.[model.replace(DATE_SUFFIX, '')];
    if (prices) return prices;
  }
  return undefined;
}

/**
 * USD of one call's usage: uncached input, output, cache writes and cache reads each at their own price, and the web
 * searches the API ran for it.
 */
export function costUsd(usage: TokenUsage, prices: ModelPrices): number {
  const tokens =
    (usage.inputTokens * prices.input +
      usage.outputTokens * prices.output +
      usage.cacheCreationInputTokens * prices.cacheWrite +
      usage.cacheReadInputTokens * prices.cacheRead) /
    1_000_000;
  const searches = usage.webSearchRequests ?? 0;
  return searches === 0 ? tokens : tokens + (searches * (prices.webSearchPer1000 ?? WEB_SEARCH_USD_PER_1000)) / 1000;
}

/**
 * The Message Batches API bills every token at half the listed price (input, output, cache writes and reads alike:
 * the discounts stack); web searches keep their price.
 */
export const BATCH_PRICE_FACTOR = 0.5;

/** What a call answered through a Message Batch pays per million tokens. */
export function batchPrices(prices: ModelPrices): ModelPrices {
  return {
    ...prices,
    input: prices.input * BATCH_PRICE_FACTOR,
    output: prices.output * BATCH_PRICE_FACTOR,
    cacheWrite: prices.cacheWrite * BATCH_PRICE_FACTOR,
    cacheRead: prices.cacheRead * BATCH_PRICE_FACTOR,
  };
}

/** A running total that turns unknown (null) for good once one part of it is unknown. */
export function addCost(total: number | null, part: number | null): number | null {
  return total === null || part === null ? null : total + part;
}

/** `$0.0123`, or `unknown`: four decimals show what a short conversation costs. */
export function formatUsd(usd: number | null | undefined): string {
  return usd === null || usd === undefined ? 'unknown' : `$${usd.toFixed(4)}`;
}
