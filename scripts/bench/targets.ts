// The four targets, checked and printed as PASS/FAIL next to the figure (never failing the process: today's figures
// come from a shared, loaded machine; the lead reruns on a quiet one).
import type { CostResult } from './cost';
import type { HistoryResult } from './history-growth';
import type { OverheadResult } from './overhead';
import type { ThroughputResult } from './throughput';
import { fmtMs, pct } from './format';

export interface TargetCheck {
  name: string;
  target: string;
  measured: string;
  /** undefined: not measured in this run (section skipped or size not run). */
  pass: boolean | undefined;
}

export function checkTargets(results: { overhead?: OverheadResult; throughput?: ThroughputResult; history?: HistoryResult; cost?: CostResult }): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const at1000 = results.overhead?.latencies.find((l) => l.latencyMs === 1000);
  checks.push({
    name: 'overhead',
    target: `${results.overhead?.steps ?? 5}-step chain at 1,000 ms ≤ 1.02× the in-process loop`,
    measured: at1000 ? `${at1000.chainRatio.toFixed(3)}× (${fmtMs(at1000.orchestrator.chain.p50)} vs ${fmtMs(at1000.inProcess.chain.p50)})` : 'not run at 1,000 ms',
    pass: at1000 ? at1000.chainRatio <= 1.02 : undefined,
  });
  const points = results.throughput?.points ?? [];
  const at1000c = points.find((p) => p.conversations === 1000);
  checks.push({
    name: 'throughput',
    target: 'at 1,000 conversations ≥ 0.8× the bare-activity ceiling',
    measured: at1000c && at1000c.bare
      ? `${at1000c.ratio.toFixed(2)}× (${at1000c.orchestrator.stepsPerSecond.toFixed(1)} vs ${at1000c.bare.stepsPerSecond.toFixed(1)} steps/s)`
      : 'not run at 1,000 conversations with the ceiling',
    pass: at1000c?.bare ? at1000c.ratio >= 0.8 : undefined,
  });
  const history = results.history;
  checks.push({
    name: 'history',
    target: 'bytes per step do not grow with length (marginal ≤ 1.25× the shortest chain\'s)',
    measured: history && history.points.length > 1
      ? `${history.points.map((p) => `${Math.round(p.marginalBytesPerStep)}`).join(' → ')} B/step (${history.growth.toFixed(2)}×)`
      : 'needs two chain lengths',
    pass: history && history.points.length > 1 ? history.growth <= 1.25 : undefined,
  });
  const cached = results.cost?.runs.find((r) => r.promptCaching);
  checks.push({
    name: 'cost',
    target: 'cached input ≥ 70% from the third call on (caching on)',
    measured: cached ? `${pct(cached.cachedFractionFromCall3)} (lowest single call ${pct(cached.minCachedFractionFromCall3)})` : 'not run',
    pass: cached ? cached.cachedFractionFromCall3 >= 0.7 : undefined,
  });
  return checks;
}

export function verdict(pass: boolean | undefined): string {
  return pass === undefined ? 'n/a' : pass ? 'PASS' : 'FAIL';
}
