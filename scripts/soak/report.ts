// The soak's figures, printed as a table, and the details behind every failure.
import type { RerunCause, ToolCallVerdict } from './tool-executions';

export interface SoakFigures {
  started: number;
  completed: number;
  failed: number;
  lost: number;
  duplicates: number;
  stuck: number;
  elapsedMs: number;
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
    ['completed', figures.completed],
    ['failed', figures.failed],
    ['lost', figures.lost],
    [
      'duplicates',
      `${figures.duplicates} (tool calls run again after the server recorded their result, or made twice)`,
    ],
    ['stuck', `${figures.stuck} (open at the end, and no progress)`],
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
