// The side-by-side: the same load — C concurrent conversations of the bench chain at 1, 8 and 32 steps, an instant
// model — on ours, the peer (@temporalio/ai-sdk) and the floor (the plain Temporal chain), on one dev server and one
// local Messages API server. Runs alternate (the order rotates every length and round, so a burst of load from
// elsewhere hits each system alike), R rounds. Per system: wall time, and per conversation the history's bytes (as
// fetchHistory sends it) and events; then ours ÷ peer and ours ÷ floor, paired within a round.
import type { BenchContext } from './context';
import { alternate, type LoadRun, settle } from './load';
import { percentile } from './measure';
import { type SystemName, withSystems } from './systems';
import { fmtMs, fmtNum, fmtRatio, PHASE_HEADERS, phaseCells, runCell, type Table } from './table';

export interface SideBySideResult {
  conversations: number;
  lengths: number[];
  rounds: number;
  systems: SystemName[];
  runs: (LoadRun & { round: number })[];
}

export async function runSideBySide(
  ctx: BenchContext,
  systems: SystemName[],
  options: { conversations: number; lengths: number[]; rounds: number },
): Promise<SideBySideResult> {
  const runs: SideBySideResult['runs'] = [];
  const loads = Array.from({ length: options.rounds }, (_, r) =>
    options.lengths.map((steps) => ({
      conversations: options.conversations,
      steps,
      label: `r${r + 1}-s${steps}`,
      historySample: options.conversations,
    })),
  ).flat();
  await withSystems(ctx, systems, 'side-by-side', (running) =>
    alternate(ctx, running, loads, async (run, i) => {
      const round = Math.floor(i / options.lengths.length) + 1;
      runs.push({ ...run, round });
      ctx.log(
        `side by side, round ${round}, ${run.steps} steps: ${run.system} ${fmtMs(run.wallMs)}` +
          `${run.failed ? `, ${run.failed} failed (${run.firstError})` : ''}`,
      );
      await settle(ctx);
    }),
  );
  return { ...options, systems, runs };
}

/** The runs of one system at one length, in round order. */
export function runsOf(result: SideBySideResult, system: SystemName, steps: number): LoadRun[] {
  return result.runs.filter((run) => run.system === system && run.steps === steps).sort((a, b) => a.round - b.round);
}

/** a ÷ b per round (paired: the two ran back to back). */
export function pairedRatios(result: SideBySideResult, a: SystemName, b: SystemName, steps: number): number[] {
  const bs = runsOf(result, b, steps);
  return runsOf(result, a, steps).flatMap((run, i) => (bs[i] ? [run.wallMs / bs[i].wallMs] : []));
}

const median = (values: number[]): number => percentile(values, 50);
const kb = (bytes: number | undefined): string => (bytes === undefined ? '–' : `${(bytes / 1024).toFixed(1)} KB`);

function range(values: number[]): string {
  if (values.length === 0) return '–';
  const low = Math.min(...values);
  const high = Math.max(...values);
  return low.toFixed(2) === high.toFixed(2) ? fmtRatio(low) : `${low.toFixed(2)}–${fmtRatio(high)}`;
}

export function sideBySideTables(result: SideBySideResult): Table[] {
  const has = (name: SystemName): boolean => result.systems.includes(name);
  const pairs: [SystemName, SystemName][] = (
    [
      ['ours', 'peer'],
      ['ours', 'floor'],
      ['peer', 'floor'],
    ] as [SystemName, SystemName][]
  ).filter(([a, b]) => has(a) && has(b));
  const history = (name: SystemName, steps: number) => runsOf(result, name, steps)[0]?.history;
  const summary: Table = {
    title: `Side by side — ${result.conversations} concurrent conversations, instant model, ${result.rounds} round(s) alternated (wall: median; ratios: range over rounds)`,
    headers: [
      'steps',
      ...result.systems.map((name) => `${name} wall`),
      ...pairs.map(([a, b]) => `${a} ÷ ${b}`),
      ...result.systems.map((name) => `${name} history`),
      ...result.systems.map((name) => `${name} events`),
    ],
    rows: result.lengths.map((steps) => [
      String(steps),
      ...result.systems.map((name) => fmtMs(median(runsOf(result, name, steps).map((run) => run.wallMs)))),
      ...pairs.map(([a, b]) => range(pairedRatios(result, a, b, steps))),
      ...result.systems.map((name) => kb(history(name, steps)?.bytes)),
      ...result.systems.map((name) => fmtNum(history(name, steps)?.events ?? Number.NaN, 0)),
    ]),
    notes: [
      'history: bytes and events per conversation, from fetchHistory (ours stays open awaiting the next message; the peer and the floor complete).',
    ],
  };
  const detail: Table = {
    title: 'Side by side, every run (CPU ms per step: worker, Temporal server, this process with the Messages API)',
    headers: [
      'round',
      'steps',
      'system',
      'wall',
      'steps/s',
      'conv p50',
      'worker',
      'server',
      'bench',
      'others',
      'failed',
    ],
    notes: ['others: cores the rest of the machine kept busy during the run (someone else’s work).'],
    rows: result.runs.map((run) => [
      String(run.round),
      String(run.steps),
      run.system,
      ...(['wall', 'stepsPerSecond', 'p50', 'worker', 'server', 'bench', 'others'] as const).map((c) =>
        runCell[c](run),
      ),
      String(run.failed),
    ]),
  };
  const phases: Table = {
    title: 'Side by side, where a step goes (mean ms per step over every step read, last round)',
    headers: ['steps', 'system', ...PHASE_HEADERS, 'first call'],
    rows: result.lengths.flatMap((steps) =>
      result.systems.map((name) => {
        const h = runsOf(result, name, steps).at(-1)?.history;
        const first = h && `${fmtNum(h.firstCall.startToSchedule)} + ${fmtNum(h.firstCall.preRequest)}`;
        return [String(steps), name, ...phaseCells(h?.phases), first ?? '–'];
      }),
    ),
    notes: [
      'first call: workflow start → first model activity scheduled, + that activity start → its request at the server (ms).',
    ],
  };
  const shortest = result.lengths[0] ?? 1;
  const types = result.systems.map((name) => runsOf(result, name, shortest)[0]?.history?.eventTypes ?? {});
  const names = [...new Set(types.flatMap((t) => Object.keys(t)))].sort();
  const events: Table = {
    title: `Side by side, events per conversation by type at ${shortest} step(s)`,
    headers: ['event', ...result.systems],
    rows: names.map((type) => [type, ...types.map((t) => (t[type] ? (Math.round(t[type] * 10) / 10).toString() : ''))]),
  };
  return [summary, detail, phases, events];
}
