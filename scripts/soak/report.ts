// The soak's figures, printed as a table, and the details behind every failure.
import type { RerunCause, ToolCallVerdict } from './tool-executions';

export interface SoakFigures {
  started: number;
  /** Ended as the user expected: an answer, a typed answer, `budget_exhausted` under a budget too small, … */
  completed: number;
  /** `completed`, by the outcome each expected. */
  expected: Record<string, number>;
  failed: number;
  /** Open at the deadline and still making progress. */
  lost: number;
  duplicates: number;
  /** Open at the deadline and not moving. */
  stuck: number;
  /** Worker processes that exited without being asked (a code, or a signal the soak did not send). */
  workerCrashes: number;
  /** Tool calls that ran again with no cause (no kill, no error, no timeout). */
  unexplainedReruns: number;
  /** Offsets the stream readers missed, and offsets they read twice. */
  streamGaps: number;
  streamRepeats: number;
  elapsedMs: number;
}

/** The run passes when nothing was lost, duplicated, stuck or crashed; a failed conversation is reported, not fatal. */
export function soakVerdict(figures: SoakFigures): { ok: boolean; problems: string[] } {
  const problems = [
    figures.lost > 0 && `${figures.lost} lost`,
    figures.duplicates > 0 && `${figures.duplicates} duplicates`,
    figures.stuck > 0 && `${figures.stuck} stuck`,
    figures.workerCrashes > 0 && `${figures.workerCrashes} worker crashes`,
    figures.unexplainedReruns > 0 && `${figures.unexplainedReruns} re-runs without a cause`,
    figures.streamGaps > 0 && `${figures.streamGaps} offsets missed by stream readers`,
    figures.streamRepeats > 0 && `${figures.streamRepeats} offsets read twice by stream readers`,
  ].filter((problem): problem is string => typeof problem === 'string');
  return { ok: problems.length === 0, problems };
}

/** How a worker process ended, as the soak saw it. */
export interface WorkerExit {
  pid: number;
  code: number | null;
  signal: string | null;
  /** The soak asked for it (its own SIGKILL, or the stop at the end). */
  asked: boolean;
}

/** A worker that exited without being asked is a crash, whatever its code or signal (an OOM kill included). */
export function isWorkerCrash(exit: WorkerExit): boolean {
  return !exit.asked;
}

export function describeExit({ code, signal }: Pick<WorkerExit, 'code' | 'signal'>): string {
  return signal ? `signal ${signal}` : `exit code ${code ?? 'unknown'}`;
}

export const CAUSES: Record<RerunCause, string> = {
  'in-flight-at-kill': 'in flight at a kill',
  'result-lost-with-worker': 'finished, result died with its worker',
  'timed-out-while-alive': 'timed out on a live worker',
  'retried-after-error': 'retried after an error',
  unexplained: 'NO CAUSE',
};

export function printTable(title: string, rows: [string, string | number][]): void {
  const width = Math.max(...rows.map(([name]) => name.length));
  console.log(`\n${title}`);
  for (const [name, value] of rows) console.log(name ? `  ${name.padEnd(width)}  ${value}` : '');
}

export function figureRows(figures: SoakFigures): [string, string | number][] {
  return [
    ['started', figures.started],
    ['completed', `${figures.completed} (ended as expected)`],
    [
      '  expected outcomes',
      Object.entries(figures.expected)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([outcome, n]) => `${outcome} ${n}`)
        .join(', ') || 'none',
    ],
    ['failed', `${figures.failed} (ended otherwise)`],
    ['lost', `${figures.lost} (open at the deadline, still moving)`],
    [
      'duplicates',
      `${figures.duplicates} (tool calls run again after the server recorded their result, or made twice)`,
    ],
    ['stuck', `${figures.stuck} (open at the deadline, and no progress)`],
    ['unfinished', `${figures.lost + figures.stuck} (lost + stuck: not finished by the deadline)`],
    ['worker crashes', `${figures.workerCrashes} (worker processes that exited without being asked)`],
    ['stream readers', `${figures.streamGaps} offsets missed, ${figures.streamRepeats} read twice`],
    ['elapsed', `${(figures.elapsedMs / 1000).toFixed(1)} s`],
  ];
}

export function describeVerdict(v: ToolCallVerdict, killedAt: ReadonlyMap<number, number>): string {
  const runs = v.executions.map((e) => {
    const kill = killedAt.get(e.pid);
    const end = e.endedAt === undefined ? 'never ended' : `${e.ended} at +${e.endedAt - e.startedAt} ms`;
    return `attempt ${e.attempt} in ${e.pid} (${end}${kill !== undefined && kill >= e.startedAt ? `, SIGKILL at +${kill - e.startedAt} ms` : ''})`;
  });
  return `  ${v.key}: ${runs.join(', ')}; re-run: ${v.reruns.map((cause) => CAUSES[cause]).join('; ')}`;
}

/** Failures grouped by reason (request ids folded), with a few ids each. */
export function printFailures(failures: { id: string; scenario: string; why: string }[]): void {
  if (failures.length === 0) return;
  const reasons = new Map<string, string[]>();
  for (const { why, id, scenario } of failures) {
    const reason = `${scenario}: ${why.replace(/req_\w+/g, 'req_…')}`;
    reasons.set(reason, [...(reasons.get(reason) ?? []), id]);
  }
  console.log('\nFailures:');
  for (const [why, ids] of reasons)
    console.log(`  ${String(ids.length).padStart(5)}  ${why} (e.g. ${ids.slice(0, 3).join(', ')})`);
}
