// The results (results/bench-*.json: everything measured, plus enough about the run to compare two of them), the
// targets checked against them (PASS/FAIL next to the figure, never failing the process: today's figures come from a
// shared, loaded machine), and the console and HTML reports: the machine, every section's tables (table.ts), the guard
// and the targets, rendered from one list of tables; the HTML page is self-contained (no script, no network).
import { execFileSync } from 'node:child_process';
import { type AgentsResult, agentsTables } from './agents';
import type { BenchArgs, Section } from './args';
import { type CostResult, costTables } from './cost';
import { type GuardResult, guardTable } from './guard';
import { type HistoryResult, historyTables } from './history-growth';
import type { MachineInfo } from './machine-info';
import { type OverheadResult, overheadTables } from './overhead';
import { pairedRatios, type SideBySideResult, sideBySideTables } from './side-by-side';
import { type StreamingResult, streamingTables } from './streaming';
import { escapeXml, fmtMs, pct, renderHtml, renderText, type Table } from './table';
import { type ThroughputResult, throughputTables } from './throughput';

export interface BenchResults {
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  git: { commit: string; dirty: boolean } | undefined;
  args: Omit<BenchArgs, 'only'> & { only: Section[] };
  machine: MachineInfo;
  temporal: { address: string; namespace: string; startedByBench: boolean };
  overhead?: OverheadResult;
  throughput?: ThroughputResult;
  history?: HistoryResult;
  cost?: CostResult;
  streaming?: StreamingResult;
  sideBySide?: SideBySideResult;
  guard?: GuardResult;
  agents?: AgentsResult;
  targets: TargetCheck[];
}

export function gitState(): BenchResults['git'] {
  try {
    const git = (...args: string[]) =>
      execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return { commit: git('rev-parse', 'HEAD'), dirty: git('status', '--porcelain') !== '' };
  } catch {
    return undefined;
  }
}

interface TargetCheck {
  name: string;
  target: string;
  measured: string;
  /** undefined: not measured in this run (section skipped or size not run). */
  pass: boolean | undefined;
}

export function checkTargets(results: Partial<BenchResults>): TargetCheck[] {
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
    target: 'at 100 conversations, streaming ≥ 0.9× not streaming',
    measured: streaming
      ? `${streaming.throughput.ratio.toFixed(2)}× (${streaming.throughput.streaming.stepsPerSecond.toFixed(1)} vs ${streaming.throughput.plain.stepsPerSecond.toFixed(1)} steps/s)`
      : 'not run',
    pass: streaming ? streaming.throughput.ratio >= 0.9 : undefined,
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

function reportTables(results: BenchResults): Table[] {
  const m = results.machine;
  return [
    {
      title:
        `Machine: ${m.cpus} × ${m.cpuModel}; load average ${m.loadAverageStart.map((l) => l.toFixed(1)).join(' ')} at start, ` +
        `${m.loadAverageEnd.map((l) => l.toFixed(1)).join(' ')} at end (provisional unless the machine was quiet)`,
      headers: [],
      rows: [],
    },
    ...(results.overhead ? overheadTables(results.overhead) : []),
    ...(results.throughput ? throughputTables(results.throughput, results.args.only.includes('memory')) : []),
    ...(results.history ? historyTables(results.history, results.cost) : []),
    ...(results.cost ? costTables(results.cost) : []),
    ...(results.streaming ? streamingTables(results.streaming) : []),
    ...(results.sideBySide ? sideBySideTables(results.sideBySide) : []),
    ...(results.agents ? agentsTables(results.agents) : []),
    ...(results.guard
      ? [
          guardTable(results.guard),
          { ...sideBySideTables(results.guard.runs)[1]!, title: "The guard's runs (CPU ms per step)" },
        ]
      : []),
    {
      title: 'Targets',
      headers: ['', 'target', 'measured', 'verdict'],
      rows: results.targets.map((t) => [t.name, t.target, t.measured, verdict(t.pass)]),
    },
  ];
}

export function textReport(results: BenchResults): string {
  return reportTables(results).map(renderText).join('\n');
}

export function htmlReport(results: BenchResults): string {
  const body = reportTables(results).map(renderHtml).join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Orchestrator benchmark ${escapeXml(results.startedAt)}</title>
<style>
body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1600px}
h1{font-size:20px}h2{font-size:15px;margin-top:28px}p{font-size:13px;margin:4px 0}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}
</style></head><body>
<h1>Claude orchestrator on Temporal — benchmark</h1>
<p>${escapeXml(results.startedAt)} · ${(results.durationMs / 1000).toFixed(0)} s ·
Temporal ${escapeXml(results.temporal.address)}${results.temporal.startedByBench ? ' (dev server started by the bench)' : ' (reused)'} ·
${results.git ? `commit ${results.git.commit.slice(0, 10)}${results.git.dirty ? ' + local changes' : ''}` : ''}</p>
${body}
</body></html>
`;
}
