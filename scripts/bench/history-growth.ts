// Item 3: what a conversation leaves in Temporal's history. One conversation per chain length (latency 0, limits
// raised): the server's historySize and events over every run of it (continue-as-new), and the payload bytes per
// event type — what one step writes.
import type { BenchContext } from './context';
import { fmtMs, fmtNum, type Table } from './table';
import { runOne } from './load';
import { startOurs } from './systems';
import type { CostResult } from './cost';

interface HistoryPoint {
  steps: number;
  runs: number;
  /** Summed over all runs of the conversation: the server's describe() measures. */
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
  const ours = await startOurs(ctx, 'history');
  const points: HistoryPoint[] = [];
  try {
    for (const steps of ctx.args.historySteps) {
      ctx.log(`history: one conversation of ${steps} chain steps`);
      const { run } = await runOne(ctx, ours, { steps, label: `history-${steps}` });
      const h = run.history!;
      const previous = points.at(-1);
      points.push({
        steps,
        runs: h.runs,
        total: { historyLength: h.events, historySize: h.serverBytes },
        bytesPerStep: h.serverBytes / steps,
        eventsPerStep: h.events / steps,
        marginalBytesPerStep: previous
          ? (h.serverBytes - previous.total.historySize) / (steps - previous.steps)
          : h.serverBytes / steps,
        wallMs: run.wallMs,
        eventTypes: h.eventTypes,
        payloadBytes: h.payloadBytes,
      });
    }
  } finally {
    await ours.stop();
  }
  const first = points[0];
  const growth =
    first && points.length > 1
      ? Math.max(...points.slice(1).map((p) => p.marginalBytesPerStep)) / first.bytesPerStep
      : Number.NaN;
  return { points, growth };
}

export function historyTables(history: HistoryResult, cost: CostResult | undefined): Table[] {
  const notes: string[] = [];
  for (const p of history.points.filter((point) => point.runs > 1))
    notes.push(
      `${p.steps} steps: the server suggested continue-as-new (${p.runs} runs). Totals add every run, including the transcript carried into the new run.`,
    );
  const longest = history.points.at(-1);
  if (longest) {
    const perStep = Object.entries(longest.payloadBytes)
      .filter(([, b]) => b / longest.steps >= 5)
      .sort((a, b) => b[1] - a[1]);
    const payload = Object.values(longest.payloadBytes).reduce((a, b) => a + b, 0);
    notes.push(
      `what a step writes (${longest.steps}-step chain, payload bytes per step): ` +
        perStep.map(([type, b]) => `${type} ${Math.round(b / longest.steps)}`).join(', ') +
        `; event overhead (the rest) ${Math.round((longest.total.historySize - payload) / longest.steps)}`,
    );
  }
  for (const run of cost?.runs ?? []) {
    const model = Math.round((run.payloadBytes['activityTaskScheduled model'] ?? 0) / (cost!.steps + 1));
    notes.push(
      `with the ~${cost!.systemPromptTokens}-token system prompt (cost run, caching ${run.promptCaching ? 'on' : 'off'}): ${Math.round(run.historyBytesPerStep)} B/step; ` +
        `each callModel input carries ${model} B (options, system prompt included, + new messages)`,
    );
  }
  return [
    {
      title:
        "3. History growth — one conversation per length, latency 0 (server's describe(): historySize, historyLength)",
      headers: ['steps', 'runs', 'events', 'bytes', 'bytes/step', 'marginal bytes/step', 'events/step', 'wall'],
      rows: history.points.map((p) => [
        String(p.steps),
        String(p.runs),
        String(p.total.historyLength),
        String(p.total.historySize),
        fmtNum(p.bytesPerStep, 0),
        fmtNum(p.marginalBytesPerStep, 0),
        fmtNum(p.eventsPerStep, 1),
        fmtMs(p.wallMs),
      ]),
      notes,
    },
  ];
}
