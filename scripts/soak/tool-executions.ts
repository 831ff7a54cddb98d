// The soak's verdict on one tool call, from the side-effect log the tools write (outside Temporal) and what the server
// recorded. Temporal runs an activity at least once: a call in flight when its worker dies runs again, with the same
// idempotency key. What must never happen is a call running again after the server recorded its result (a duplicate),
// or running again for no reason at all. Pure, so the judgement itself is tested.

import type { ExecutionLogLine } from '../tool-execution-log';

/** One line of the execution log (scripts/tool-execution-log.ts writes them). */
export type ExecutionLine = ExecutionLogLine;

/** One run of the tool: its start line and how it ended, if it did. */
export interface Execution {
  pid: number;
  attempt: number;
  startedAt: number;
  ended?: 'finish' | 'error';
  endedAt?: number;
}

export type RerunCause =
  /** The previous run threw; Temporal retried it, as configured. */
  | 'retried-after-error'
  /** The previous run's worker was SIGKILLed before the tool finished. */
  | 'in-flight-at-kill'
  /** The tool had finished, but its worker was SIGKILLed before the server recorded the result: it finished twice. */
  | 'result-lost-with-worker'
  /** The server timed the previous attempt out while its worker lived (a starved worker's late result is refused). */
  | 'timed-out-while-alive'
  /** None of the above: a bug. */
  | 'unexplained';

export interface ToolCallVerdict {
  key: string;
  executions: Execution[];
  /** Why each run after the first happened. */
  reruns: RerunCause[];
  /** Runs that started after the server had recorded the call's result. */
  duplicates: Execution[];
}

export function executionsOf(lines: readonly ExecutionLine[]): Execution[] {
  const runs = new Map<string, Execution>();
  for (const line of [...lines].sort((a, b) => a.at - b.at)) {
    const id = `${line.pid}:${line.attempt}`;
    if (line.event === 'start') runs.set(id, { pid: line.pid, attempt: line.attempt, startedAt: line.at });
    else if (runs.has(id)) Object.assign(runs.get(id)!, { ended: line.event, endedAt: line.at });
  }
  return [...runs.values()].sort((a, b) => a.startedAt - b.startedAt);
}

/**
 * @param killedAt when each SIGKILLed worker process was killed, by pid
 * @param completionRecordedAt the server's ActivityTaskCompleted event time for this call, if it has one
 */
export function judgeToolCall(
  key: string,
  lines: readonly ExecutionLine[],
  killedAt: ReadonlyMap<number, number>,
  completionRecordedAt: number | undefined,
): ToolCallVerdict {
  const executions = executionsOf(lines);
  const reruns = executions.slice(1).map((run, i): RerunCause => {
    const previous = executions[i]!;
    const kill = killedAt.get(previous.pid);
    const killedDuringPrevious = kill !== undefined && kill >= previous.startedAt && kill <= run.startedAt;
    if (previous.ended === 'error') return 'retried-after-error';
    if (killedDuringPrevious) return previous.ended === 'finish' ? 'result-lost-with-worker' : 'in-flight-at-kill';
    if (run.attempt > previous.attempt) return 'timed-out-while-alive';
    return 'unexplained';
  });
  const duplicates =
    completionRecordedAt === undefined ? [] : executions.filter((run) => run.startedAt > completionRecordedAt);
  return { key, executions, reruns, duplicates };
}
