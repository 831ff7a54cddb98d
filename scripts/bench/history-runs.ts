// A workflow's history as the server keeps it, across continue-as-new: every run of a workflow id, oldest first,
// with the server's own measures (describe(): historyLength, historySize — the ones its limits apply to).
import type { Client } from '@temporalio/client';
import type { CallModelResult } from '../../common/activity-contracts';
import type { History } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';

export type HistoryEvent = NonNullable<History['events']>[number];

export interface RunHistory {
  runId: string;
  historyLength: number;
  historySize: number;
  events: HistoryEvent[];
}

/** Every run of `workflowId`, oldest first (follows WorkflowExecutionStarted.continuedExecutionRunId back). */
export async function runsOf(client: Client, workflowId: string, maxRuns = 100): Promise<RunHistory[]> {
  const runs: RunHistory[] = [];
  let runId: string | undefined;
  for (let i = 0; i < maxRuns; i++) {
    const handle = client.workflow.getHandle(workflowId, runId);
    const [description, history] = await Promise.all([handle.describe(), handle.fetchHistory()]);
    const events = history.events ?? [];
    runs.unshift({
      runId: description.runId,
      historyLength: description.historyLength,
      historySize: description.historySize ?? Number.NaN,
      events,
    });
    const previous = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId;
    if (!previous) break;
    runId = previous;
  }
  return runs;
}

/** The history's size as the server sends it: its events encoded as a History message (fetchHistory's bytes). */
export function encodedBytes(events: readonly HistoryEvent[]): number {
  return temporal.api.history.v1.History.encode({ events: [...events] }).finish().length;
}

/** An event's server timestamp in ms since the epoch (seconds may be a Long or a plain number). */
export function eventMs(event: HistoryEvent): number {
  const time = event.eventTime;
  if (!time) return Number.NaN;
  const seconds = time.seconds as unknown as number | { toNumber(): number } | null | undefined;
  const whole = typeof seconds === 'number' ? seconds : seconds ? seconds.toNumber() : 0;
  return whole * 1000 + (time.nanos ?? 0) / 1e6;
}

/** How many events of each type (WorkflowTaskCompleted, ActivityTaskScheduled, …). */
export function eventCounts(events: readonly HistoryEvent[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const event of events) {
    const name = typeOf(event);
    counts[name] = (counts[name] ?? 0) + 1;
  }
  return counts;
}

/** The attribute name that says what an event is (activityTaskScheduled, workflowTaskCompleted, …). */
function typeOf(event: HistoryEvent): string {
  const key = Object.keys(event).find(
    (name) => name.endsWith('EventAttributes') && (event as Record<string, unknown>)[name],
  );
  return key ? key.replace(/EventAttributes$/, '') : 'unknown';
}

/**
 * Bytes of payload data (activity inputs and results, workflow input, update arguments, summaries: every
 * Uint8Array in the event) per event type, and for activity events per activity type too ("activityTaskScheduled
 * callModel"): what makes a history large, as opposed to the fixed per-event overhead.
 */
export function payloadBytesByType(
  events: readonly HistoryEvent[],
  modelActivity = 'callModel',
): Record<string, number> {
  const activityTypes = new Map<string, string>();
  const bytes: Record<string, number> = {};
  const walk = (value: unknown): number => {
    if (value instanceof Uint8Array) return value.byteLength;
    if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + walk(item), 0);
    if (value && typeof value === 'object')
      return Object.values(value).reduce((sum: number, item) => sum + walk(item), 0);
    return 0;
  };
  for (const event of events) {
    let type = typeOf(event);
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) activityTypes.set(String(event.eventId), scheduled.activityType?.name ?? '?');
    const closed =
      event.activityTaskStartedEventAttributes ??
      event.activityTaskCompletedEventAttributes ??
      event.activityTaskFailedEventAttributes;
    const activity = scheduled
      ? scheduled.activityType?.name
      : closed
        ? activityTypes.get(String(closed.scheduledEventId))
        : undefined;
    if (activity) type = `${type} ${activity === modelActivity ? 'model' : 'tool'}`;
    bytes[type] = (bytes[type] ?? 0) + walk(event);
  }
  return bytes;
}

/** What each model call returned (callModel's results, in order, over every run): usage, context, the reply. */
export function modelCallResults(client: Client, runs: readonly RunHistory[]): CallModelResult[] {
  const converter = client.options.loadedDataConverter.payloadConverter;
  const calls = new Set<string>();
  const results: CallModelResult[] = [];
  for (const event of runs.flatMap((run) => run.events)) {
    if (event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel')
      calls.add(String(event.eventId));
    const completed = event.activityTaskCompletedEventAttributes;
    const payload = completed?.result?.payloads?.[0];
    if (payload && calls.has(String(completed.scheduledEventId))) results.push(converter.fromPayload(payload));
  }
  return results;
}
