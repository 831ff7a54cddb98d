// Item 5: input tokens billed per model call on a long chain with a realistic (~2,000-token) system prompt, prompt
// caching on (the default: breakpoints after the tools, the system prompt and the newest message) and off. Usage is
// read back from the conversation's history (each callModel result carries the API's usage), i.e. what the
// orchestrator was billed, as the local server accounts it the way the API documents. In dollars: each call priced
// with the published table (common/pricing.ts) for the conversation's model, and the chain's cost as the
// conversation itself reports it (TurnResult.costUsd): the two must agree.
import type { CallModelResult } from '../../common/activity-contracts';
import type { TurnResult } from '../../common/conversation-types';
import { type BenchContext, terminateAll } from './context';
import { runOne } from './load';
import { startOurs } from './systems';
import { modelCallResults, runsOf } from './history';
import { estimateTokens } from '../../testing/messages-api/tokens';
import { REALISTIC_SYSTEM_PROMPT } from './system-prompt';
import { DEFAULT_MODEL } from '../../common/options';
import { costUsd, formatUsd, type ModelPrices, PUBLISHED_PRICES, pricesFor } from '../../common/pricing';
import { pct, type Table } from './table';

interface CallUsage {
  call: number;
  inputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
  /** cache_read / (input + cache_read + cache_creation). */
  cachedFraction: number;
  /** Input priced in base-input-token equivalents: input + 1.25 × cache writes (5 min) + 0.1 × cache reads. */
  billedEquivalent: number;
  outputTokens: number;
  /** USD of the call at the published prices (input, output, cache writes and reads each at its own). */
  usd: number;
}

interface CostRun {
  promptCaching: boolean;
  calls: CallUsage[];
  /** Σ cache_read / Σ all input over calls 3.. (the ≥ 70% target). */
  cachedFractionFromCall3: number;
  minCachedFractionFromCall3: number;
  totalInput: number;
  totalBilledEquivalent: number;
  /** The conversation's history (all runs): with a system prompt, what each step adds. */
  historySize: number;
  historyBytesPerStep: number;
  payloadBytes: Record<string, number>;
  /** USD of the whole chain at the published prices… */
  usd: number;
  /** …and as the conversation reported it (null: unknown). */
  reportedUsd: number | null;
}

export interface CostResult {
  steps: number;
  systemPromptTokens: number;
  runs: CostRun[];
  /** Billed-equivalent input with caching on ÷ off. */
  savings: number;
  model: string;
  prices: ModelPrices;
  /** USD of the chain with caching on ÷ off (output included). */
  usdRatio: number;
}

const PRICES = pricesFor(DEFAULT_MODEL, PUBLISHED_PRICES)!;

/** Each model call's usage, as the conversation's history records it, priced. */
function usageOf(results: readonly CallModelResult[]): CallUsage[] {
  return results.map(({ usage }, i) => {
    const { inputTokens, cacheReadInputTokens, cacheCreationInputTokens, outputTokens } = usage;
    const all = inputTokens + cacheReadInputTokens + cacheCreationInputTokens;
    return {
      call: i + 1,
      inputTokens,
      cacheReadInputTokens,
      cacheCreationInputTokens,
      cachedFraction: all > 0 ? cacheReadInputTokens / all : 0,
      billedEquivalent: inputTokens + 1.25 * cacheCreationInputTokens + 0.1 * cacheReadInputTokens,
      outputTokens,
      usd: costUsd(usage, PRICES),
    };
  });
}

export async function runCost(ctx: BenchContext): Promise<CostResult> {
  const { mock, args } = ctx;
  const ours = await startOurs(ctx, 'cost');
  mock.reset(); // an empty prompt cache: the first call writes, as a fresh conversation would
  const runs: CostRun[] = [];
  try {
    for (const promptCaching of [true, false]) {
      ctx.log(
        `cost: ${args.costSteps}-step chain, ~${estimateTokens(REALISTIC_SYSTEM_PROMPT)}-token system prompt, prompt caching ${promptCaching ? 'on' : 'off'}`,
      );
      ours.send = { system: REALISTIC_SYSTEM_PROMPT, promptCaching };
      const label = `cost-${promptCaching ? 'on' : 'off'}`;
      const { run, conversation, reply } = await runOne(ctx, ours, { steps: args.costSteps, label, endOpen: false });
      const calls = usageOf(modelCallResults(ctx.client, await runsOf(ctx.client, conversation.id)));
      await terminateAll(ctx.client, [conversation.id]);
      const { serverBytes: historySize, payloadBytes } = run.history!;
      const later = calls.slice(2);
      const sum = (pick: (c: CallUsage) => number, list = calls): number =>
        list.reduce((total, c) => total + pick(c), 0);
      const laterAll = sum((c) => c.inputTokens + c.cacheReadInputTokens + c.cacheCreationInputTokens, later);
      runs.push({
        promptCaching,
        calls,
        cachedFractionFromCall3: laterAll > 0 ? sum((c) => c.cacheReadInputTokens, later) / laterAll : 0,
        minCachedFractionFromCall3: later.length ? Math.min(...later.map((c) => c.cachedFraction)) : 0,
        totalInput: sum((c) => c.inputTokens + c.cacheReadInputTokens + c.cacheCreationInputTokens),
        totalBilledEquivalent: sum((c) => c.billedEquivalent),
        historySize,
        historyBytesPerStep: historySize / args.costSteps,
        payloadBytes,
        usd: sum((c) => c.usd),
        reportedUsd: (reply as TurnResult).costUsd,
      });
    }
  } finally {
    await ours.stop();
  }
  const on = runs.find((r) => r.promptCaching);
  const off = runs.find((r) => !r.promptCaching);
  return {
    steps: args.costSteps,
    systemPromptTokens: estimateTokens(REALISTIC_SYSTEM_PROMPT),
    runs,
    savings: on && off ? on.totalBilledEquivalent / off.totalBilledEquivalent : Number.NaN,
    model: DEFAULT_MODEL,
    prices: PRICES,
    usdRatio: on && off ? on.usd / off.usd : Number.NaN,
  };
}

export function costTables(cost: CostResult): Table[] {
  const on = cost.runs.find((r) => r.promptCaching);
  const off = cost.runs.find((r) => !r.promptCaching);
  const tokens = (c: CallUsage | undefined) =>
    c ? [c.inputTokens, c.cacheReadInputTokens, c.cacheCreationInputTokens].map(String) : ['', '', ''];
  const rows = Array.from({ length: Math.max(on?.calls.length ?? 0, off?.calls.length ?? 0) }, (_, i) => {
    const [a, b] = [on?.calls[i], off?.calls[i]];
    return [String(i + 1), ...tokens(a), a ? pct(a.cachedFraction) : '', ...tokens(b)];
  });
  const { input, output, cacheWrite, cacheRead } = cost.prices;
  return [
    {
      title: `5. Cost — input tokens per model call, ${cost.steps}-step chain, ~${cost.systemPromptTokens}-token system prompt`,
      headers: [
        'call',
        'on: input',
        'on: cache_read',
        'on: cache_creation',
        'on: cached',
        'off: input',
        'off: cache_read',
        'off: cache_creation',
      ],
      rows,
      notes: [
        ...cost.runs.map(
          (run) =>
            `caching ${run.promptCaching ? 'on ' : 'off'}: cached from call 3 on ${pct(run.cachedFractionFromCall3)}; all input ${run.totalInput} tokens; ` +
            `billed as ${Math.round(run.totalBilledEquivalent)} base-input-token equivalents (writes ×1.25, reads ×0.1)`,
        ),
        `caching on costs ${pct(cost.savings)} of caching off, for input.`,
        `cost per ${cost.steps}-step chain on ${cost.model} ($${input} in, $${output} out, $${cacheWrite} cache write, $${cacheRead} cache read per MTok):`,
        ...cost.runs.map(
          (run) =>
            `  caching ${run.promptCaching ? 'on ' : 'off'}: ${formatUsd(run.usd)} (${formatUsd(run.usd / cost.steps)} per step; the conversation reported ${formatUsd(run.reportedUsd)})`,
        ),
        `  with caching the chain costs ${pct(cost.usdRatio)} of what it costs without.`,
      ],
    },
  ];
}
