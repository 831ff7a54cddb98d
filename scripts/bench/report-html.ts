// results/bench-*.html: one self-contained page (inline SVG, no script, no network) with a chart per item, the
// targets, and the text tables.
import { formatUsd } from '../../common/pricing';
import type { BenchResults } from './results';
import { escapeXml, groupedBars, lineChart, PALETTE, stackedBars } from './svg';
import { PHASES } from './step-breakdown';
import { verdict } from './targets';

const MiB = 1024 * 1024;

function overheadCharts(results: BenchResults): string[] {
  const o = results.overhead;
  if (!o) return [];
  const categories = o.latencies.map((l) => `${l.latencyMs} ms`);
  // At 1,000 ms the latency dwarfs everything: plot the overhead itself (step − model latency), not the step.
  const beyond = (v: number, l: number): number => v - l;
  return [
    groupedBars({
      title: `Per-step time beyond the model latency (${o.steps}-step chain, one conversation)`,
      yLabel: 'ms per step',
      categories,
      series: [
        {
          name: 'orchestrator p50',
          color: PALETTE[0]!,
          values: o.latencies.map((l) => beyond(l.orchestrator.step.p50, l.latencyMs)),
        },
        {
          name: 'orchestrator p95',
          color: '#9db3e6',
          values: o.latencies.map((l) => beyond(l.orchestrator.step.p95, l.latencyMs)),
        },
        ...(o.latencies.some((l) => l.bare)
          ? [
              {
                name: 'bare Temporal p50',
                color: PALETTE[2]!,
                values: o.latencies.map((l) => (l.bare ? beyond(l.bare.step.p50, l.latencyMs) : Number.NaN)),
              },
              {
                name: 'bare Temporal p95',
                color: '#9fd6b5',
                values: o.latencies.map((l) => (l.bare ? beyond(l.bare.step.p95, l.latencyMs) : Number.NaN)),
              },
            ]
          : []),
        {
          name: 'in-process p50',
          color: PALETTE[1]!,
          values: o.latencies.map((l) => beyond(l.inProcess.step.p50, l.latencyMs)),
        },
        {
          name: 'in-process p95',
          color: '#f0b994',
          values: o.latencies.map((l) => beyond(l.inProcess.step.p95, l.latencyMs)),
        },
      ],
    }),
    stackedBars({
      title: 'Where a step goes, model latency removed (mean ms, from workflow histories)',
      yLabel: 'ms per step',
      categories: o.latencies.flatMap((l) => [
        `${l.latencyMs} ms orch.`,
        ...(l.bare ? [`${l.latencyMs} ms bare`] : []),
      ]),
      series: PHASES.map((phase, i) => ({
        name: phase,
        color: PALETTE[i % PALETTE.length]!,
        values: o.latencies.flatMap((l) => {
          const of = (phases: Record<string, number>): number => {
            const pre = Number.isFinite(phases['model.preRequest']!) ? phases['model.preRequest']! : 0;
            return phase === 'model.run' ? phases['model.run']! - l.latencyMs - pre : phases[phase]!;
          };
          return [of(l.phases), ...(l.bare ? [of(l.bare.phases)] : [])];
        }),
      })),
      width: 760,
    }),
  ];
}

function throughputCharts(results: BenchResults): string[] {
  const t = results.throughput;
  if (!t) return [];
  const categories = t.points.map((p) => `${p.conversations} conv`);
  const charts = [
    groupedBars({
      // The latency bound (C × S / ((S + 1) × L)) is far above both on a small machine: named, not drawn.
      title: `Steps/s on one worker (${t.steps} steps, ${t.latencyMs} ms; latency bound ${t.points.map((p) => Math.round(p.orchestrator.latencyBoundStepsPerSecond)).join('/')})`,
      yLabel: 'steps per second',
      categories,
      series: [
        { name: 'orchestrator', color: PALETTE[0]!, values: t.points.map((p) => p.orchestrator.stepsPerSecond) },
        {
          name: 'bare-activity ceiling',
          color: PALETTE[2]!,
          values: t.points.map((p) => p.bare?.stepsPerSecond ?? Number.NaN),
        },
      ],
      width: 700,
    }),
    groupedBars({
      title: 'CPU time per completed step',
      yLabel: 'CPU ms per step',
      categories,
      series: [
        {
          name: 'worker (orchestrator)',
          color: PALETTE[0]!,
          values: t.points.map((p) => p.orchestrator.worker.cpuMsPerStep),
        },
        {
          name: 'worker (bare)',
          color: PALETTE[2]!,
          values: t.points.map((p) => p.bare?.worker.cpuMsPerStep ?? Number.NaN),
        },
        {
          name: 'server (orchestrator)',
          color: '#6c8ed6',
          values: t.points.map((p) => p.orchestrator.serverCpuMsPerStep),
        },
        {
          name: 'server (bare)',
          color: '#7fc79f',
          values: t.points.map((p) => p.bare?.serverCpuMsPerStep ?? Number.NaN),
        },
      ],
    }),
  ];
  const largest = t.points.at(-1);
  if (largest) {
    const cumulative = (ms: number[]): [number, number][] => [
      [0, 0],
      ...ms.map((m, i): [number, number] => [m / 1000, i + 1]),
    ];
    charts.push(
      lineChart({
        title: `${largest.conversations} conversations: finished over time`,
        xLabel: 'seconds since start',
        yLabel: 'conversations finished',
        series: [
          { name: 'orchestrator', color: PALETTE[0]!, points: cumulative(largest.orchestrator.completionsMs) },
          ...(largest.bare
            ? [{ name: 'bare ceiling', color: PALETTE[2]!, points: cumulative(largest.bare.completionsMs) }]
            : []),
        ],
      }),
    );
    charts.push(
      lineChart({
        title: `Worker RSS during the ${largest.conversations}-conversation runs (every 200 ms)`,
        xLabel: 'seconds since start',
        yLabel: 'RSS, MiB',
        series: [
          {
            name: 'orchestrator worker',
            color: PALETTE[0]!,
            points: largest.orchestrator.worker.samples.map((s): [number, number] => [s.t / 1000, s.rssBytes / MiB]),
          },
          ...(largest.bare
            ? [
                {
                  name: 'bare worker',
                  color: PALETTE[2]!,
                  points: largest.bare.worker.samples.map((s): [number, number] => [s.t / 1000, s.rssBytes / MiB]),
                },
              ]
            : []),
        ],
      }),
    );
  }
  return charts;
}

function historyCharts(results: BenchResults): string[] {
  const h = results.history;
  if (!h) return [];
  return [
    lineChart({
      title: 'History size after N chain steps (all runs)',
      xLabel: 'chain steps',
      yLabel: 'KiB',
      series: [
        {
          name: 'historySize',
          color: PALETTE[0]!,
          points: h.points.map((p): [number, number] => [p.steps, p.total.historySize / 1024]),
        },
      ],
    }),
    groupedBars({
      title: 'History bytes per step: average, and marginal (what one more step adds)',
      yLabel: 'bytes per step',
      categories: h.points.map((p) => `${p.steps} steps`),
      series: [
        { name: 'average', color: PALETTE[0]!, values: h.points.map((p) => p.bytesPerStep) },
        { name: 'marginal', color: PALETTE[1]!, values: h.points.map((p) => p.marginalBytesPerStep) },
      ],
    }),
  ];
}

function costCharts(results: BenchResults): string[] {
  const c = results.cost;
  if (!c) return [];
  return c.runs.map((run) =>
    stackedBars({
      // Older results have no USD figure.
      title: `Input tokens per model call, prompt caching ${run.promptCaching ? 'on' : 'off'} (${c.steps}-step chain${run.usd === undefined ? '' : `, ${formatUsd(run.usd)} on ${c.model}`})`,
      yLabel: 'tokens',
      categories: run.calls.map((call) => String(call.call)),
      series: [
        { name: 'cache_read', color: PALETTE[2]!, values: run.calls.map((call) => call.cacheReadInputTokens) },
        { name: 'cache_creation', color: PALETTE[1]!, values: run.calls.map((call) => call.cacheCreationInputTokens) },
        { name: 'input (uncached)', color: PALETTE[4]!, values: run.calls.map((call) => call.inputTokens) },
      ],
      width: 760,
    }),
  );
}

export function htmlReport(results: BenchResults, text: string): string {
  const targets = results.targets
    .map(
      (t) =>
        `<tr><td>${escapeXml(t.name)}</td><td>${escapeXml(t.target)}</td><td>${escapeXml(t.measured)}</td>` +
        `<td class="${t.pass === undefined ? 'na' : t.pass ? 'pass' : 'fail'}">${verdict(t.pass)}</td></tr>`,
    )
    .join('');
  const section = (title: string, charts: string[]): string =>
    charts.length ? `<h2>${escapeXml(title)}</h2><div class="charts">${charts.join('')}</div>` : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Orchestrator benchmark ${escapeXml(results.startedAt)}</title>
<style>
body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1600px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ddd;padding:4px 8px;text-align:left}
.pass{background:#d8f3dc;font-weight:600}.fail{background:#ffd6d6;font-weight:600}.na{color:#888}
.charts{display:flex;flex-wrap:wrap;gap:16px}.charts svg{border:1px solid #eee;background:#fff}
pre{font-size:12px;background:#f7f7f7;padding:12px;overflow:auto}
</style></head><body>
<h1>Claude orchestrator on Temporal — benchmark</h1>
<p>${escapeXml(results.startedAt)} · ${(results.durationMs / 1000).toFixed(0)} s · ${results.machine.cpus} × ${escapeXml(results.machine.cpuModel)} ·
load average ${results.machine.loadAverageStart.map((l) => l.toFixed(1)).join(' ')} → ${results.machine.loadAverageEnd.map((l) => l.toFixed(1)).join(' ')} ·
Temporal ${escapeXml(results.temporal.address)}${results.temporal.startedByBench ? ' (dev server started by the bench)' : ' (reused)'} ·
${results.git ? `commit ${results.git.commit.slice(0, 10)}${results.git.dirty ? ' + local changes' : ''}` : ''}</p>
<h2>Targets</h2><table><tr><th></th><th>target</th><th>measured</th><th></th></tr>${targets}</table>
${section('1. Overhead per chain step', overheadCharts(results))}
${section('2. Throughput and 4. worker memory', throughputCharts(results))}
${section('3. History growth', historyCharts(results))}
${section('5. Cost with and without prompt caching', costCharts(results))}
<h2>Tables</h2><pre>${escapeXml(text)}</pre>
</body></html>
`;
}
