// The console and HTML reports: the machine, every section's tables (table.ts), the guard and the targets, rendered
// from one list of tables; the HTML page is self-contained (inline SVG, no script, no network).
import { costTables } from './cost';
import { guardTable } from './guard';
import { historyTables } from './history-growth';
import { overheadTables } from './overhead';
import type { BenchResults } from './results';
import { sideBySideTables } from './side-by-side';
import { streamingTables } from './streaming';
import { escapeXml } from './svg';
import { renderHtml, renderText, type Table } from './table';
import { verdict } from './targets';
import { throughputTables } from './throughput';

export function reportTables(results: BenchResults): Table[] {
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
.chart svg{border:1px solid #eee;background:#fff;margin-top:8px}
</style></head><body>
<h1>Claude orchestrator on Temporal — benchmark</h1>
<p>${escapeXml(results.startedAt)} · ${(results.durationMs / 1000).toFixed(0)} s ·
Temporal ${escapeXml(results.temporal.address)}${results.temporal.startedByBench ? ' (dev server started by the bench)' : ' (reused)'} ·
${results.git ? `commit ${results.git.commit.slice(0, 10)}${results.git.dirty ? ' + local changes' : ''}` : ''}</p>
${body}
</body></html>
`;
}
