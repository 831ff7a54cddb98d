// The guard: the bench fails (exit code 1, a FAIL line) when a conversation's cost per step grows past a margin
// against the last committed baseline (scripts/bench/baseline.json; `npm run bench -- --update-baseline` rewrites it),
// measured on the side by side's load (ours and the floor, alternated), at each chain length:
//   time     ours' wall time ÷ the floor's, paired within a round: the floor runs the same load on the same machine a
//            moment apart, so it absorbs the machine's speed and most of its load. The baseline keeps the median.
//   history  ours' history bytes per conversation (encoded, as fetchHistory sends it).
// Time +15%, judged only on quiet rounds (the rest of the machine kept at most QUIET_CORES busy: load.ts) and failed
// only when every quiet round is past it: on 2 shared cores a burst elsewhere slows one run of a pair by half or more,
// while quiet rounds agree within about ±7%. No quiet round: time is not judged, and the report says so.
// History +2%: it depends only on what the code writes (runs agree within 0.02%): one more event per step is caught.
import fs from 'node:fs';
import path from 'node:path';
import * as prettier from 'prettier';
import type { MachineInfo } from './machine-info';
import { pairedRatios, runsOf, type SideBySideResult } from './side-by-side';
import { QUIET_CORES } from './load';
import { percentile } from './measure';
import type { Table } from './table';

export const BASELINE_PATH = path.join(__dirname, 'baseline.json');
export const MARGINS = { time: 0.15, history: 0.02 };

interface GuardFigures {
  /** By chain length. */
  [steps: string]: {
    /** Median over the quiet rounds (all rounds when none was), and each round's (ours ÷ floor wall time). */
    timeRatio: number;
    timeRatios?: number[];
    /** Per round: the most cores the rest of the machine kept busy during its two runs (load.ts, otherCores). */
    otherCores?: number[];
    /** Rounds on a quiet machine: a baseline without any says nothing about time (it is then not judged). */
    quietRounds?: number;
    historyBytes: number;
    historyEvents: number;
  };
}

interface Baseline {
  updatedAt: string;
  commit: string | undefined;
  machine: Pick<MachineInfo, 'cpus' | 'cpuModel' | 'loadAverageStart'>;
  conversations: number;
  rounds: number;
  lengths: GuardFigures;
}

interface GuardCheck {
  steps: number;
  measure: 'time' | 'history';
  baseline: number;
  /** The median over the rounds (time), the mean over the conversations (history). */
  measured: number;
  /** measured ÷ baseline − 1. */
  change: number;
  margin: number;
  /** false: time was not judged, every round having been slowed by the rest of the machine. */
  judged: boolean;
  /** false: past the margin (time: in every quiet round). */
  pass: boolean;
}

export interface GuardResult {
  /** The guard's own runs: ours and the floor, alternated. */
  runs: SideBySideResult;
  figures: GuardFigures;
  baseline?: Baseline;
  checks: GuardCheck[];
  /** false when a check failed. */
  pass: boolean;
  /** The baseline was rewritten from this run (--update-baseline). */
  updated: boolean;
}

export function guardFigures(result: SideBySideResult): GuardFigures {
  return Object.fromEntries(
    result.lengths.map((steps) => {
      const history = runsOf(result, 'ours', steps)[0]?.history;
      const ratios = pairedRatios(result, 'ours', 'floor', steps);
      const floors = runsOf(result, 'floor', steps);
      const others = runsOf(result, 'ours', steps).map((run, i) =>
        Math.max(run.otherCores, floors[i]?.otherCores ?? 0),
      );
      const quiet = ratios.filter((_, i) => isQuiet(others[i]));
      return [
        String(steps),
        {
          timeRatio: percentile(quiet.length ? quiet : ratios, 50),
          timeRatios: ratios,
          otherCores: others,
          quietRounds: quiet.length,
          historyBytes: history?.bytes ?? Number.NaN,
          historyEvents: history?.events ?? Number.NaN,
        },
      ];
    }),
  );
}

/** Unknown (NaN: a server the bench did not start) counts as quiet: there is nothing to tell otherwise. */
const isQuiet = (otherCores: number | undefined): boolean => !(otherCores !== undefined && otherCores > QUIET_CORES);

export function checkGuard(figures: GuardFigures, baseline: Baseline | undefined): GuardCheck[] {
  if (!baseline) return [];
  return Object.entries(figures).flatMap(([steps, now]) => {
    const before = baseline.lengths[steps];
    if (!before) return [];
    const check = (measure: GuardCheck['measure'], measured: number, base: number, best = measured): GuardCheck => {
      const [margin, judged, change] = [MARGINS[measure], Number.isFinite(best), measured / base - 1];
      const pass = !judged || best / base - 1 <= margin;
      return { steps: Number(steps), measure, baseline: base, measured, change, margin, judged, pass };
    };
    const ratios = now.timeRatios ?? [now.timeRatio];
    const quiet = ratios.filter((_, i) => isQuiet(now.otherCores?.[i]));
    const comparable = quiet.length > 0 && before.quietRounds !== 0;
    return [
      check('time', now.timeRatio, before.timeRatio, comparable ? Math.min(...quiet) : Number.NaN),
      check('history', now.historyBytes, before.historyBytes),
    ];
  });
}

export function readBaseline(file = BASELINE_PATH): Baseline | undefined {
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Baseline) : undefined;
}

/** Written the way the repository's formatter keeps JSON, so `npx prettier --check .` passes on a fresh baseline. */
async function writeBaseline(baseline: Baseline, file = BASELINE_PATH): Promise<void> {
  const options = (await prettier.resolveConfig(file)) ?? {};
  fs.writeFileSync(file, await prettier.format(JSON.stringify(baseline), { ...options, parser: 'json' }));
}

export async function runGuard(
  result: SideBySideResult,
  options: { update: boolean; machine: Baseline['machine']; commit: string | undefined; baselineFile?: string },
): Promise<GuardResult> {
  const figures = guardFigures(result);
  const baseline = readBaseline(options.baselineFile);
  const checks = checkGuard(figures, baseline);
  if (options.update) {
    const { cpus, cpuModel, loadAverageStart } = options.machine;
    // A length whose rounds were all busy keeps the baseline's time (when that was measured on a quiet machine):
    // only its history is rewritten.
    const lengths = Object.fromEntries(
      Object.entries(figures).map(([steps, f]) => {
        const before = baseline?.lengths[steps];
        const keep = f.quietRounds === 0 && before && before.quietRounds !== 0;
        return [steps, keep ? { ...before, historyBytes: f.historyBytes, historyEvents: f.historyEvents } : f];
      }),
    );
    await writeBaseline(
      {
        updatedAt: new Date().toISOString(),
        commit: options.commit,
        machine: { cpus, cpuModel, loadAverageStart },
        conversations: result.conversations,
        rounds: result.rounds,
        lengths,
      },
      options.baselineFile,
    );
  }
  return {
    runs: result,
    figures,
    ...(baseline && { baseline }),
    checks,
    pass: options.update || checks.every((c) => c.pass),
    updated: options.update,
  };
}

export function guardTable(guard: GuardResult): Table {
  const fmt = (measure: GuardCheck['measure'], value: number, steps: number): string =>
    measure === 'time' ? `${value.toFixed(3)}×` : `${Math.round(value)} B (${Math.round(value / steps)} B/step)`;
  const notes = [
    guard.updated
      ? `baseline rewritten: ${path.relative(process.cwd(), BASELINE_PATH)} (commit it)`
      : guard.baseline
        ? `baseline of ${guard.baseline.updatedAt}${guard.baseline.commit ? ` (${guard.baseline.commit.slice(0, 10)})` : ''}, ${guard.baseline.conversations} conversations, ${guard.baseline.rounds} round(s)`
        : `no baseline yet: npm run bench -- --only guard --update-baseline writes ${path.relative(process.cwd(), BASELINE_PATH)}`,
    'time: ours ÷ floor wall time, median over the quiet rounds (a FAIL needs every quiet round past the margin); history: ours per conversation (encoded bytes).',
  ];
  for (const c of guard.checks.filter((check) => !check.pass))
    notes.push(
      `FAIL: ${c.measure} at ${c.steps} step(s) grew ${(c.change * 100).toFixed(1)}% (margin ${c.margin * 100}%${c.measure === 'time' ? ', in every round' : ''}): ${fmt(c.measure, c.baseline, c.steps)} → ${fmt(c.measure, c.measured, c.steps)}`,
    );
  const busyBaseline = Object.entries(guard.baseline?.lengths ?? {}).filter(([, f]) => f.quietRounds === 0);
  if (busyBaseline.length && !guard.updated)
    notes.push(
      `the baseline's time at ${busyBaseline.map(([steps]) => steps).join(', ')} step(s) was measured on a busy machine: not judged; rewrite it on a quiet one (--update-baseline).`,
    );
  for (const [steps, f] of Object.entries(guard.figures)) {
    const busy = (f.otherCores ?? []).filter((cores) => !isQuiet(cores));
    if (busy.length)
      notes.push(
        `at ${steps} step(s), ${busy.length} of ${f.otherCores!.length} round(s) ran while the rest of the machine kept ${busy.map((c) => c.toFixed(2)).join(', ')} cores busy (> ${QUIET_CORES}): not judged (ratios ${(f.timeRatios ?? []).map((r) => r.toFixed(2)).join(', ')}).`,
      );
  }
  if (guard.checks.some((c) => c.change < -c.margin))
    notes.push('better than the baseline by more than the margin somewhere: --update-baseline to keep the gain.');
  return {
    title: `Guard — cost per step against the baseline (margins: time +${MARGINS.time * 100}%, history +${MARGINS.history * 100}%)`,
    headers: ['steps', 'measure', 'baseline', 'now', 'change', 'verdict'],
    rows: guard.checks.map((c) => [
      String(c.steps),
      c.measure,
      fmt(c.measure, c.baseline, c.steps),
      fmt(c.measure, c.measured, c.steps),
      `${c.change >= 0 ? '+' : ''}${(c.change * 100).toFixed(1)}%`,
      c.judged ? (c.pass ? 'PASS' : 'FAIL') : 'n/a (busy)',
    ]),
    notes,
  };
}
