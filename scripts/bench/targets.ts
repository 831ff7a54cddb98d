// The targets, checked and printed as PASS/FAIL next to the figure (never failing the process: today's figures
// come from a shared, loaded machine; rerun on a quiet one for figures worth quoting).
import type { CostResult } from './cost';
import type { HistoryResult } from './history-growth';
import type { OverheadResult } from './overhead';
import type { StreamingResult } from './streaming';
import type { ThroughputResult } from './throughput';
import { pairedRatios, type SideBySideResult } from './side-by-side';
import { fmtMs, pct } from './format';

export interface TargetCheck {
  name: string;
  target: string;
  measured: string;
  /** undefined: not measured in this run (section skipped or size not run). */
  pass: boolean | undefined;
}

export function checkTargets(results: {
  overhead?: OverheadResult;
  throughput?: ThroughputResult;
  history?: HistoryResult;
  cost?: CostResult;
  streaming?: StreamingResult;
  sideBySide?: SideBySideResult;
}): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const at1000 = results.overhead?.latencies.find((l) => l.latencyMs === 1000);
  checks.push({
    name: 'overhead',
    target: `${results.overhead?.steps ?? 5}-step chain at 1,000 ms ≤ 1.02× the in-process loop`,
    measured: at1000
      ? `${at1000.chainRatio.toFixed(3)}× (${fmtMs(at1000.orchestrator.chain.p50)} vs ${fmtMs(at1000.inProcess.chain.p50)})`
      : 'not run at 1,000 ms',
    pass: at1000 ? at1000.chainRatio <= 1.02 : undefined,
  });
  const points = results.throughput?.points ?? [];
  const at1000c = points.find((p) => p.conversations === 1000);
  checks.push({
    name: 'throughput',
    target: 'at 1,000 conversations ≥ 0.8× the bare-activity ceiling',
    measured:
      at1000c && at1000c.bare
        ? `${at1000c.ratio.toFixed(2)}× (${at1000c.orchestrator.stepsPerSecond.toFixed(1)} vs ${at1000c.bare.stepsPerSecond.toFixed(1)} steps/s)`
        : 'not run at 1,000 conversations with the ceiling',
    pass: at1000c?.bare ? at1000c.ratio >= 0.8 : undefined,
  });
  const history = results.history;
  checks.push({
    name: 'history',
    target: "bytes per step do not grow with length (marginal ≤ 1.25× the shortest chain's)",
    measured:
      history && history.points.length > 1
        ? `${history.points.map((p) => `${Math.round(p.marginalBytesPerStep)}`).join(' → ')} B/step (${history.growth.toFixed(2)}×)`
        : 'needs two chain lengths',
    pass: history && history.points.length > 1 ? history.growth <= 1.25 : undefined,
  });
  const cached = results.cost?.runs.find((r) => r.promptCaching);
  checks.push({
    name: 'cost',
    target: 'cached input ≥ 70% from the third call on (caching on)',
    measured: cached
      ? `${pct(cached.cachedFractionFromCall3)} (lowest single call ${pct(cached.minCachedFractionFromCall3)})`
      : 'not run',
    pass: cached ? cached.cachedFractionFromCall3 >= 0.7 : undefined,
  });
  const streaming = results.streaming;
  const at50 = streaming?.latency.find((l) => l.conversations === 50);
  checks.push({
    name: 'streaming latency',
    target: 'token → client at 50 streaming conversations: p50 ≤ 250 ms, p95 ≤ 600 ms',
    measured: at50 ? `p50 ${fmtMs(at50.latencyMs.p50)}, p95 ${fmtMs(at50.latencyMs.p95)}` : 'not run',
    pass: at50 ? at50.latencyMs.p50 <= 250 && at50.latencyMs.p95 <= 600 : undefined,
  });
  checks.push({
    name: 'streaming history',
    target: 'history bytes per model call, streaming ≤ 2× without',
    measured: streaming
      ? `${streaming.history.ratio.toFixed(2)}× (${Math.round(streaming.history.streaming.bytesPerModelCall)} vs ${Math.round(streaming.history.plain.bytesPerModelCall)} B)`
      : 'not run',
    pass: streaming ? streaming.history.ratio <= 2 : undefined,
  });
  checks.push({
    name: 'streaming throughput',
    target: 'at 100 conversations, streaming ≥ 0.8× not streaming',
    measured: streaming
      ? `${streaming.throughput.ratio.toFixed(2)}× (${streaming.throughput.streaming.stepsPerSecond.toFixed(1)} vs ${streaming.throughput.plain.stepsPerSecond.toFixed(1)} steps/s)`
      : 'not run',
    pass: streaming ? streaming.throughput.ratio >= 0.8 : undefined,
  });
  const side = results.sideBySide?.systems.includes('peer') ? results.sideBySide : undefined;
  const worst = side?.lengths.map((steps) => ({
    steps,
    ratio: Math.max(...pairedRatios(side, 'ours', 'peer', steps)),
  }));
  checks.push({
    name: 'side by side',
    target: "wall time ≤ 0.5× the peer's (@temporalio/ai-sdk) at every chain length",
    measured: worst ? worst.map((w) => `${w.steps}: ${w.ratio.toFixed(2)}×`).join(', ') + ' (worst round)' : 'not run',
    pass: worst ? worst.every((w) => w.ratio <= 0.5) : undefined,
  });
  return checks;
}

export function verdict(pass: boolean | undefined): string {
  return pass === undefined ? 'n/a' : pass ? 'PASS' : 'FAIL';
}
