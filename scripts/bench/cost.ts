// Item 5: input tokens billed per model call on a long chain with a realistic (~2,000-token) system prompt, prompt
// caching on (the default: breakpoints after the tools, the system prompt and the newest message) and off. Usage is
// read back from the conversation's history (each callModel result carries the API's usage), i.e. what the
// orchestrator was billed, as the local server accounts it the way the API documents. In dollars: each call priced
// with the published table (common/pricing.ts) for the conversation's model, and the chain's cost as the
// conversation itself reports it (TurnResult.costUsd): the two must agree.
import { randomUUID } from 'node:crypto';
import type { CallModelResult } from '../../common/activity-contracts';
import { scriptChain, CHAIN_TOOLS } from './chain-script';
import { type BenchContext, startConversationWorker, terminateAll } from './context';
import { payloadBytesByType, runsOf } from './history-runs';
import { estimateTokens } from '../../testing/messages-api/tokens';
import { REALISTIC_SYSTEM_PROMPT } from './system-prompt';
import { DEFAULT_MODEL } from '../../common/options';
import { costUsd, type ModelPrices, PUBLISHED_PRICES, pricesFor } from '../../common/pricing';

export interface CallUsage {
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

export interface CostRun {
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

async function usageOf(
  ctx: BenchContext,
  workflowId: string,
): Promise<{ calls: CallUsage[]; historySize: number; payloadBytes: Record<string, number> }> {
  const converter = ctx.client.options.loadedDataConverter.payloadConverter;
  const runs = await runsOf(ctx.client, workflowId);
  const events = runs.flatMap((run) => run.events);
  const modelCalls = new Set<string>();
  const usage: CallUsage[] = [];
  for (const event of events) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name === 'callModel') modelCalls.add(String(event.eventId));
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed && modelCalls.has(String(completed.scheduledEventId))) {
      const payload = completed.result?.payloads?.[0];
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a history payload, decoded as the client would
      const result = converter.fromPayload(payload as any) as CallModelResult;
      const { inputTokens, cacheReadInputTokens, cacheCreationInputTokens, outputTokens } = result.usage;
      const all = inputTokens + cacheReadInputTokens + cacheCreationInputTokens;
      usage.push({
        call: usage.length + 1,
        inputTokens,
        cacheReadInputTokens,
        cacheCreationInputTokens,
        cachedFraction: all > 0 ? cacheReadInputTokens / all : 0,
        billedEquivalent: inputTokens + 1.25 * cacheCreationInputTokens + 0.1 * cacheReadInputTokens,
        outputTokens,
        usd: costUsd(result.usage, PRICES),
      });
    }
  }
  return {
    calls: usage,
    historySize: runs.reduce((sum, run) => sum + run.historySize, 0),
    payloadBytes: payloadBytesByType(events),
  };
}

export async function runCost(ctx: BenchContext): Promise<CostResult> {
  const { mock, args } = ctx;
  mock.setLatency(0);
  mock.reset(); // an empty prompt cache: the first call writes, as a fresh conversation would
  const { worker, conversations } = await startConversationWorker(ctx, 'cost');
  const ids: string[] = [];
  const runs: CostRun[] = [];
  try {
    for (const promptCaching of [true, false]) {
      ctx.log(
        `cost: ${args.costSteps}-step chain, ~${estimateTokens(REALISTIC_SYSTEM_PROMPT)}-token system prompt, prompt caching ${promptCaching ? 'on' : 'off'}`,
      );
      const prompt = scriptChain(mock, args.costSteps, `cost-${promptCaching ? 'on' : 'off'}`);
      const id = `bench-cost-${promptCaching ? 'on' : 'off'}-${randomUUID().slice(0, 8)}`;
      ids.push(id);
      const reply = await conversations.sendMessage(id, prompt, {
        tools: CHAIN_TOOLS,
        system: REALISTIC_SYSTEM_PROMPT,
        promptCaching,
        limits: { maxModelCallsPerTurn: args.costSteps + 10, maxToolCallsPerTurn: args.costSteps + 10 },
      });
      const { calls, historySize, payloadBytes } = await usageOf(ctx, id);
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
        reportedUsd: reply.costUsd,
      });
    }
  } finally {
    await terminateAll(ctx.client, ids);
    await worker.stop();
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
