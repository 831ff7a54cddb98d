// The guard: the bench fails (exit code 1, a FAIL line) when a conversation's cost per step grows past a margin
// against the last committed baseline (scripts/bench/baseline.json; `npm run bench -- --update-baseline` rewrites it).
// Measured on the side-by-side's load (ours and the floor, alternated; the peer is not needed), at each chain length:
//   time     ours' wall time ÷ the floor's, paired within a round, median over the rounds. A ratio to the floor, not
//            a time: the floor runs the same load on the same machine a moment apart, so it absorbs the machine's
//            speed and most of its load; what is left is the orchestrator's own cost per step.
//   history  ours' history bytes per conversation (encoded, as fetchHistory sends it), ÷ steps for a per-step figure.
// Margins: time +15%. On 2 shared cores the paired ratio still moves by ±6–7% from round to round (the issue's own
// ranges: 0.91–1.03×, 0.75–0.85×, 0.63–0.73×), so a median of 2–3 rounds stays well inside 15% while a regression
// of a sixth of the overhead shows. History +2%: it does not depend on the machine at all, only on what the code
// writes (ids and timestamps vary by a few bytes): one more event or payload field per step is caught.
import fs from 'node:fs';
import path from 'node:path';
import type { MachineInfo } from './results';
import { pairedRatios, runsOf, type SideBySideResult } from './side-by-side';
import { percentile } from './stats';
import type { Table } from './table';

export const BASELINE_PATH = path.join(__dirname, 'baseline.json');
export const MARGINS = { time: 0.15, history: 0.02 };

export interface GuardFigures {
  /** By chain length. */
  [steps: string]: { timeRatio: number; historyBytes: number; historyEvents: number };
}

export interface Baseline {
  updatedAt: string;
  commit: string | undefined;
  machine: Pick<MachineInfo, 'cpus' | 'cpuModel' | 'loadAverageStart'>;
  conversations: number;
  rounds: number;
  lengths: GuardFigures;
}

export interface GuardCheck {
  steps: number;
  measure: 'time' | 'history';
  baseline: number;
  measured: number;
  /** measured ÷ baseline − 1. */
  change: number;
  margin: number;
  pass: boolean;
}

export interface GuardResult {
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
      return [
        String(steps),
        {
          timeRatio: percentile(pairedRatios(result, 'ours', 'floor', steps), 50),
          historyBytes: history?.bytes ?? Number.NaN,
          historyEvents: history?.events ?? Number.NaN,
        },
      ];
    }),
  );
}

export function checkGuard(figures: GuardFigures, baseline: Baseline | undefined): GuardCheck[] {
  if (!baseline) return [];
  return Object.entries(figures).flatMap(([steps, now]) => {
    const before = baseline.lengths[steps];
    if (!before) return [];
    const check = (measure: GuardCheck['measure'], measured: number, base: number): GuardCheck => {
      const margin = MARGINS[measure];
      const change = measured / base - 1;
      return { steps: Number(steps), measure, baseline: base, measured, change, margin, pass: change <= margin };
    };
    return [check('time', now.timeRatio, before.timeRatio), check('history', now.historyBytes, before.historyBytes)];
  });
}

export function readBaseline(file = BASELINE_PATH): Baseline | undefined {
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Baseline) : undefined;
}

export function writeBaseline(baseline: Baseline, file = BASELINE_PATH): void {
  fs.writeFileSync(file, `${JSON.stringify(baseline, null, 2)}\n`);
}

export function runGuard(
  result: SideBySideResult,
  options: { update: boolean; machine: Baseline['machine']; commit: string | undefined; baselineFile?: string },
): GuardResult {
  const figures = guardFigures(result);
  const baseline = readBaseline(options.baselineFile);
  const checks = checkGuard(figures, baseline);
  if (options.update) {
    writeBaseline(
      {
        updatedAt: new Date().toISOString(),
        commit: options.commit,
        machine: options.machine,
        conversations: result.conversations,
        rounds: result.rounds,
        lengths: figures,
      },
      options.baselineFile,
    );
  }
  return {
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
    'time: ours ÷ floor wall time, median over rounds; history: ours per conversation (encoded bytes).',
  ];
  for (const c of guard.checks.filter((check) => !check.pass))
    notes.push(
      `FAIL: ${c.measure} at ${c.steps} step(s) grew ${(c.change * 100).toFixed(1)}% (margin ${c.margin * 100}%): ${fmt(c.measure, c.baseline, c.steps)} → ${fmt(c.measure, c.measured, c.steps)}`,
    );
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
      c.pass ? 'PASS' : 'FAIL',
    ]),
    notes,
  };
}
