// Item 1: the cost of durability per chain step, for one conversation at a time. The same scripted chain runs on
// ours, the in-process loop and (with the ceiling on) the floor, in turn, at each model latency: one-conversation
// loads (load.ts). A step is the time between two model requests at the local server (model latency, the tool, and
// whatever sits in between), so every system is timed by the same clock in the same place; a chain is timed from
// the caller's side. The floor splits ours' overhead into Temporal's share and the orchestrator's own.
import type { BenchContext } from './context';
import { type Phases } from './history';
import { alternate, type LoadRun } from './load';
import { mean, ratio, summarize, type Summary } from './measure';
import { type SystemName, withSystems } from './systems';
import { fmtMs, fmtRatio, PHASE_HEADERS, phaseCells, type Table } from './table';

interface Timing {
  step: Summary;
  chain: Summary;
  phases?: Phases;
}

interface OverheadAtLatency {
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

function timing(runs: LoadRun[]): Timing & { phases: Phases } {
  const phases = Object.fromEntries(
    Object.keys(runs[0]?.history?.phases ?? {}).map((p) => [
      p,
      mean(runs.map((r) => r.history!.phases[p as keyof Phases])),
    ]),
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
  const latencies: OverheadAtLatency[] = [];
  await withSystems(ctx, names, 'overhead', async (systems) => {
    for (const latencyMs of args.overheadLatencies) {
      const reps = args.overheadReps ?? (latencyMs < 100 ? 10 : 3);
      ctx.log(
        `overhead: ${reps} × ${args.steps}-step chain at ${latencyMs} ms model latency, ${names.join(', ')} in turn`,
      );
      const runs = new Map<string, LoadRun[]>(names.map((name) => [name, []]));
      const loads = Array.from({ length: reps }, (_, rep) => ({
        conversations: 1,
        steps: args.steps,
        latencyMs,
        label: `overhead-${rep}`,
      }));
      await alternate(ctx, systems, loads, (run) => {
        if (run.completed !== 1) throw new Error(`overhead: ${run.system} did not finish its chain: ${run.firstError}`);
        runs.get(run.system)!.push(run);
      });
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
  });
  return { steps: args.steps, latencies };
}

export function overheadTables(overhead: OverheadResult): Table[] {
  const rows: Table['rows'] = [];
  for (const l of overhead.latencies) {
    const { orchestrator: o, inProcess: ip, bare } = l;
    const row = (latency: string, label: string, t: Timing): string[] => [
      latency,
      label,
      ...[t.step.p50, t.step.p95, t.chain.p50, t.chain.p95].map(fmtMs),
      String(l.reps),
    ];
    const less = (label: string, a: Timing, b: Timing): string[] => [
      '',
      label,
      ...[a.step.p50 - b.step.p50, a.step.p95 - b.step.p95, a.chain.p50 - b.chain.p50].map(fmtMs),
      '',
      '',
    ];
    rows.push(row(`${l.latencyMs} ms`, 'orchestrator', o));
    if (bare) rows.push(row('', 'bare Temporal chain', bare));
    rows.push(row('', 'in-process loop', ip), less('overhead (orch − loop)', o, ip));
    if (bare) rows.push(less('  of which Temporal floor', bare, ip));
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
  return [
    {
      title: `1. Overhead per chain step — one conversation, ${overhead.steps}-step chain (step = model call + tool call)`,
      headers: ['latency', 'system', 'step p50', 'step p95', 'chain p50', 'chain p95', 'chains'],
      rows,
    },
    {
      title:
        'Where a step goes (mean ms per step, from the workflow histories; m.preRequest = activity start → request at the model)',
      headers: ['latency', 'system', ...PHASE_HEADERS],
      rows: overhead.latencies.flatMap((l) => [
        [`${l.latencyMs} ms`, 'orchestrator', ...phaseCells(l.orchestrator.phases)],
        ...(l.bare ? [['', 'bare', ...phaseCells(l.bare.phases)]] : []),
      ]),
      notes: overhead.latencies.map(
        (l) =>
          `at ${l.latencyMs} ms: workflow start → first model activity scheduled ${fmtMs(l.firstCall.startToSchedule)}; ` +
          `first model call activity start → request ${fmtMs(l.firstCall.preRequest)} (transcript cache miss: query) vs ${fmtMs(l.laterPreRequestMs)} for later calls`,
      ),
    },
  ];
}
