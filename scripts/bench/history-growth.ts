// Item 3: what a conversation leaves in Temporal's history. One conversation per chain length (latency 0,
// limits raised), then the server's own measures: describe().historySize / historyLength of the run the reply came
// from, and the totals over every run if the server suggested continue-as-new on the way.
import { randomUUID } from 'node:crypto';
import { scriptChain, CHAIN_TOOLS } from './chain-script';
import { type BenchContext, startConversationWorker, terminateAll } from './context';
import { eventCounts, payloadBytesByType, runsOf } from './history-runs';

export interface HistoryPoint {
  steps: number;
  runs: number;
  /** Tool calls completed in each run (where continue-as-new cut the chain). */
  stepsPerRun: number[];
  /** describe() of the latest run (the one a caller sees). */
  latestRun: { historyLength: number; historySize: number };
  /** Summed over all runs of the conversation. */
  total: { historyLength: number; historySize: number };
  bytesPerStep: number;
  eventsPerStep: number;
  /** (bytes at this length − bytes at the previous length) / (steps between): what one more step costs here. */
  marginalBytesPerStep: number;
  wallMs: number;
  eventTypes: Record<string, number>;
  /** Payload bytes (inputs, results, summaries) per event type over all runs; the rest of historySize is event overhead. */
  payloadBytes: Record<string, number>;
}

export interface HistoryResult {
  points: HistoryPoint[];
  /** Largest marginal bytes/step ÷ bytes/step of the shortest chain (≤ 1.25: no growth with length). */
  growth: number;
}

export async function runHistoryGrowth(ctx: BenchContext): Promise<HistoryResult> {
  const { mock } = ctx;
  mock.setLatency(0);
  const { worker, conversations } = await startConversationWorker(ctx, 'history');
  const ids: string[] = [];
  const points: HistoryPoint[] = [];
  try {
    for (const steps of ctx.args.historySteps) {
      ctx.log(`history: one conversation of ${steps} chain steps`);
      const prompt = scriptChain(mock, steps, `history-${steps}`);
      const id = `bench-history-${steps}-${randomUUID().slice(0, 8)}`;
      ids.push(id);
      const t0 = performance.now();
      const reply = await conversations.sendMessage(id, prompt, {
        tools: CHAIN_TOOLS,
        limits: { maxModelCallsPerTurn: steps + 10, maxToolCallsPerTurn: steps + 10 },
      });
      const wallMs = performance.now() - t0;
      if (reply.toolCalls !== steps)
        throw new Error(`history chain made ${reply.toolCalls} tool calls, expected ${steps}`);
      const runs = await runsOf(ctx.client, id);
      const latest = runs.at(-1)!;
      const total = {
        historyLength: runs.reduce((sum, run) => sum + run.historyLength, 0),
        historySize: runs.reduce((sum, run) => sum + run.historySize, 0),
      };
      const previous = points.at(-1);
      points.push({
        steps,
        runs: runs.length,
        stepsPerRun: runs.map(
          (run) =>
            run.events.filter(
              (e) =>
                e.activityTaskScheduledEventAttributes &&
                e.activityTaskScheduledEventAttributes.activityType?.name !== 'callModel',
            ).length,
        ),
        latestRun: { historyLength: latest.historyLength, historySize: latest.historySize },
        total,
        bytesPerStep: total.historySize / steps,
        eventsPerStep: total.historyLength / steps,
        marginalBytesPerStep: previous
          ? (total.historySize - previous.total.historySize) / (steps - previous.steps)
          : total.historySize / steps,
        wallMs,
        eventTypes: eventCounts(runs.flatMap((run) => run.events)),
        payloadBytes: payloadBytesByType(runs.flatMap((run) => run.events)),
      });
    }
  } finally {
    await terminateAll(ctx.client, ids);
    await worker.stop();
  }
  const first = points[0];
  const growth =
    first && points.length > 1
      ? Math.max(...points.slice(1).map((p) => p.marginalBytesPerStep)) / first.bytesPerStep
      : Number.NaN;
  return { points, growth };
}
