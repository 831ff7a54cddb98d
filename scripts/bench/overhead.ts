// Item 1: the cost of durability per chain step, for one conversation at a time. The same scripted chain runs on
// ours, the in-process loop and (with the ceiling on) the floor, in turn, at each model latency: one-conversation
// loads (load.ts). A step is the time between two model requests at the local server (model latency, the tool, and
// whatever sits in between), so every system is timed by the same clock in the same place; a chain is timed from
// the caller's side. The floor splits ours' overhead into Temporal's share and the orchestrator's own.
import type { BenchContext } from './context';
import { fmtMs, fmtNum, fmtRatio } from './format';
import { type LoadRun, type Phases, type RunningSystem, runLoad } from './load';
import { ratio, summarize, type Summary } from './stats';
import { PHASES } from './step-breakdown';
import { startSystem, type SystemName } from './systems';
import { cell, type Table } from './table';

interface Timing {
  step: Summary;
  chain: Summary;
  phases?: Phases;
}

export interface OverheadAtLatency {
  latencyMs: number;
  reps: number;
  orchestrator: Timing & { phases: Phases };
  inProcess: Timing;
  bare?: Timing & { phases: Phases };
  /** orchestrator − in-process, per step. */
  overheadPerStepMs: { p50: number; p95: number };
  stepRatioP50: number;
  /** Whole chain, caller's view: p50 orchestrator / p50 in-process. The 1.02× target applies at 1,000 ms. */
  chainRatio: number;
  /** Workflow start → first model activity scheduled; first model activity start → its request at the server. */
  firstCall: { startToSchedule: number; preRequest: number };
  /** The same, for model calls after the first (transcript from the worker's cache). */
  laterPreRequestMs: number;
}

export interface OverheadResult {
  steps: number;
  latencies: OverheadAtLatency[];
}

const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / values.length;

function timing(runs: LoadRun[]): Timing & { phases: Phases } {
  const phases = Object.fromEntries(
    [...PHASES, 'total'].map((p) => [p, mean(runs.map((r) => r.history?.phases[p as keyof Phases] ?? Number.NaN))]),
  ) as Phases;
  return {
    step: summarize(runs.flatMap((r) => r.stepMs)),
    chain: summarize(runs.flatMap((r) => r.durationsMs)),
    phases,
  };
}

export async function runOverhead(ctx: BenchContext): Promise<OverheadResult> {
  const { args } = ctx;
  const names: SystemName[] = args.ceiling ? ['ours', 'in-process', 'floor'] : ['ours', 'in-process'];
  const systems: RunningSystem[] = [];
  const latencies: OverheadAtLatency[] = [];
  try {
    for (const name of names) systems.push(await startSystem(ctx, name, 'overhead'));
    for (const latencyMs of args.overheadLatencies) {
      const reps = args.overheadReps ?? (latencyMs < 100 ? 10 : 3);
      ctx.log(
        `overhead: ${reps} × ${args.steps}-step chain at ${latencyMs} ms model latency, ${names.join(', ')} in turn`,
      );
      const runs = new Map<string, LoadRun[]>(names.map((name) => [name, []]));
      for (let rep = 0; rep < reps; rep++) {
        // Rotate which goes first, so a burst of load from elsewhere hits all alike.
        for (const system of systems.map((_, k) => systems[(k + rep) % systems.length]!)) {
          const run = await runLoad(ctx, system, {
            conversations: 1,
            steps: args.steps,
            latencyMs,
            label: `overhead-${rep}`,
          });
          if (run.completed !== 1)
            throw new Error(`overhead: ${system.name} did not finish its chain: ${run.firstError}`);
          runs.get(system.name)!.push(run);
        }
      }
      const o = timing(runs.get('ours')!);
      const ip = timing(runs.get('in-process')!);
      const ours = runs.get('ours')!.map((r) => r.history!);
      latencies.push({
        latencyMs,
        reps,
        orchestrator: o,
        inProcess: { step: ip.step, chain: ip.chain },
        ...(args.ceiling && { bare: timing(runs.get('floor')!) }),
        overheadPerStepMs: { p50: o.step.p50 - ip.step.p50, p95: o.step.p95 - ip.step.p95 },
        stepRatioP50: ratio(o.step.p50, ip.step.p50),
        chainRatio: ratio(o.chain.p50, ip.chain.p50),
        firstCall: {
          startToSchedule: mean(ours.map((h) => h.firstCall.startToSchedule)),
          preRequest: mean(ours.map((h) => h.firstCall.preRequest)),
        },
        laterPreRequestMs: mean(ours.map((h) => h.laterPreRequestMs)),
      });
    }
  } finally {
    for (const system of systems) await system.stop();
  }
  return { steps: args.steps, latencies };
}

export function overheadTables(overhead: OverheadResult): Table[] {
  const rows: Table['rows'] = [];
  for (const l of overhead.latencies) {
    const row = (latency: string, label: string, t: Timing): Table['rows'][number] => [
      latency,
      label,
      cell(t.step.p50 - l.latencyMs, fmtMs(t.step.p50)),
      fmtMs(t.step.p95),
      fmtMs(t.chain.p50),
      fmtMs(t.chain.p95),
      String(l.reps),
    ];
    rows.push(row(`${l.latencyMs} ms`, 'orchestrator', l.orchestrator));
    if (l.bare) rows.push(row('', 'bare Temporal chain', l.bare));
    rows.push(row('', 'in-process loop', l.inProcess));
    const o = l.orchestrator;
    const ip = l.inProcess;
    rows.push([
      '',
      'overhead (orch − loop)',
      fmtMs(l.overheadPerStepMs.p50),
      fmtMs(l.overheadPerStepMs.p95),
      fmtMs(o.chain.p50 - ip.chain.p50),
      '',
      '',
    ]);
    if (l.bare)
      rows.push([
        '',
        '  of which Temporal floor',
        fmtMs(l.bare.step.p50 - ip.step.p50),
        fmtMs(l.bare.step.p95 - ip.step.p95),
        fmtMs(l.bare.chain.p50 - ip.chain.p50),
        '',
        '',
      ]);
    rows.push([
      '',
      'ratio orch / loop',
      fmtRatio(l.stepRatioP50),
      fmtRatio(o.step.p95 / ip.step.p95),
      fmtRatio(l.chainRatio, 3),
      '',
      '',
    ]);
  }
  const phaseRows = overhead.latencies.flatMap((l) =>
    [['orchestrator', l.orchestrator.phases] as const, ...(l.bare ? [['bare', l.bare.phases] as const] : [])].map(
      ([system, phases], i) => {
        const pre = Number.isFinite(phases['model.preRequest']) ? phases['model.preRequest'] : 0;
        return [
          i === 0 ? `${l.latencyMs} ms` : '',
          system,
          ...PHASES.map((p) =>
            // Charted without the model latency, which dwarfs the rest at 1,000 ms.
            cell(p === 'model.run' ? phases[p] - l.latencyMs - pre : phases[p], fmtNum(phases[p])),
          ),
          fmtNum(phases.total),
        ];
      },
    ),
  );
  return [
    {
      title: `1. Overhead per chain step — one conversation, ${overhead.steps}-step chain (step = model call + tool call)`,
      headers: ['latency', 'system', 'step p50', 'step p95', 'chain p50', 'chain p95', 'chains'],
      rows,
      chart: {
        title: 'Per-step time beyond the model latency (p50)',
        yLabel: 'ms per step',
        columns: ['step p50'],
        labelCells: 2,
      },
    },
    {
      title:
        'Where a step goes (mean ms per step, from the workflow histories; m.preRequest = activity start → request at the model)',
      headers: ['latency', 'system', ...PHASES.map((p) => p.replace('model.', 'm.').replace('tool.', 't.')), 'total'],
      rows: phaseRows,
      notes: overhead.latencies.map(
        (l) =>
          `at ${l.latencyMs} ms: workflow start → first model activity scheduled ${fmtMs(l.firstCall.startToSchedule)}; ` +
          `first model call activity start → request ${fmtMs(l.firstCall.preRequest)} (transcript cache miss: query) vs ${fmtMs(l.laterPreRequestMs)} for later calls`,
      ),
      chart: {
        title: 'Where a step goes, model latency removed (mean ms)',
        yLabel: 'ms per step',
        columns: PHASES.map((p) => p.replace('model.', 'm.').replace('tool.', 't.')),
        labelCells: 2,
        stacked: true,
      },
    },
  ];
}
