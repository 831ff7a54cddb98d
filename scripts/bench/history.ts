// A workflow's history as the server keeps it, across continue-as-new: every run of a workflow id, oldest first,
// with the server's own measures (describe(): historyLength, historySize — the ones its limits apply to).
// Also where the time of one chain step goes, read from the workflow's own history (server timestamps): a step runs from
// one model activity being scheduled to the next one being scheduled, through
//   model.queue   ActivityTaskScheduled → Started: until a worker slot polled the model activity
//   model.run     Started → Completed: the activity (transcript cache or query, SDK call, model latency, reply upload)
//   wft.model     model Completed → WorkflowTaskStarted: the workflow task that reacts to the reply waits for the worker
//   wft.model.run WorkflowTaskStarted → Completed: the worker runs it (apply the reply, schedule the tool)
//   tool.queue, tool.run, wft.tool, wft.tool.run: the same for the tool activity, ending at the next model schedule.
// With the local server's request arrival times it also splits model.run into pre-request (in the activity, before
// the HTTP request arrives: transcript assembly — a query on a cache miss — and the SDK) and the rest.
import type { Client } from '@temporalio/client';
import type { CallModelResult } from '../../common/activity-contracts';
import type { History } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';

export type HistoryEvent = NonNullable<History['events']>[number];

interface RunHistory {
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

export const PHASES = [
  'model.queue',
  'model.preRequest',
  'model.run',
  'wft.model.wait',
  'wft.model.run',
  'tool.queue',
  'tool.run',
  'wft.tool.wait',
  'wft.tool.run',
] as const;
type Phase = (typeof PHASES)[number];
export type Phases = Record<Phase | 'total', number>;

interface ActivityRecord {
  type: string;
  scheduledId: number;
  scheduledAt: number;
  startedAt: number;
  closedAt: number;
}

interface WorkflowTaskRecord {
  startedAt: number;
  completedAt: number;
  completedId: number;
}

const idOf = (event: HistoryEvent): number => Number(event.eventId);

/** Every activity (scheduled, started, closed: server times) and workflow task of a history, in order. */
export function collect(events: readonly HistoryEvent[]): {
  activities: ActivityRecord[];
  tasks: WorkflowTaskRecord[];
} {
  const activities = new Map<number, ActivityRecord>();
  const tasks: WorkflowTaskRecord[] = [];
  let taskStartedAt = Number.NaN;
  for (const event of events) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) {
      activities.set(idOf(event), {
        type: scheduled.activityType?.name ?? '',
        scheduledId: idOf(event),
        scheduledAt: eventMs(event),
        startedAt: Number.NaN,
        closedAt: Number.NaN,
      });
    }
    const started = event.activityTaskStartedEventAttributes;
    if (started) {
      const record = activities.get(Number(started.scheduledEventId));
      if (record) record.startedAt = eventMs(event);
    }
    const closed =
      event.activityTaskCompletedEventAttributes ??
      event.activityTaskFailedEventAttributes ??
      event.activityTaskTimedOutEventAttributes;
    if (closed) {
      const record = activities.get(Number(closed.scheduledEventId));
      if (record) record.closedAt = eventMs(event);
    }
    if (event.workflowTaskStartedEventAttributes) taskStartedAt = eventMs(event);
    if (event.workflowTaskCompletedEventAttributes)
      tasks.push({ startedAt: taskStartedAt, completedAt: eventMs(event), completedId: idOf(event) });
  }
  return { activities: [...activities.values()].sort((a, b) => a.scheduledId - b.scheduledId), tasks };
}

/** The workflow task that scheduled the activity whose ActivityTaskScheduled event is `scheduledId`. */
function taskBefore(tasks: readonly WorkflowTaskRecord[], scheduledId: number): WorkflowTaskRecord | undefined {
  let found: WorkflowTaskRecord | undefined;
  for (const task of tasks) {
    if (task.completedId < scheduledId) found = task;
    else break;
  }
  return found;
}

/**
 * One entry per complete step (a model call followed by a tool call and another model call). `modelActivity` names
 * the model's activity type (callModel; echoModel for the bare chain); every other activity counts as a tool.
 * `requestArrivals` (ms since the epoch, one per model call in order) adds model.preRequest; NaN otherwise.
 */
export function stepBreakdown(
  events: readonly HistoryEvent[],
  modelActivity: string,
  requestArrivals?: readonly number[],
): Phases[] {
  const { activities, tasks } = collect(events);
  const models = activities.filter((a) => a.type === modelActivity);
  const steps: Phases[] = [];
  for (let i = 0; i + 1 < models.length; i++) {
    const model = models[i]!;
    const next = models[i + 1]!;
    const tool = activities.find(
      (a) => a.type !== modelActivity && a.scheduledId > model.scheduledId && a.scheduledId < next.scheduledId,
    );
    if (!tool) continue;
    const afterModel = taskBefore(tasks, tool.scheduledId);
    const afterTool = taskBefore(tasks, next.scheduledId);
    const arrival = requestArrivals?.[i];
    steps.push({
      'model.queue': model.startedAt - model.scheduledAt,
      'model.preRequest': arrival !== undefined ? arrival - model.startedAt : Number.NaN,
      'model.run': model.closedAt - model.startedAt,
      'wft.model.wait': afterModel ? afterModel.startedAt - model.closedAt : Number.NaN,
      'wft.model.run': afterModel ? afterModel.completedAt - afterModel.startedAt : Number.NaN,
      'tool.queue': tool.startedAt - tool.scheduledAt,
      'tool.run': tool.closedAt - tool.startedAt,
      'wft.tool.wait': afterTool ? afterTool.startedAt - tool.closedAt : Number.NaN,
      'wft.tool.run': afterTool ? afterTool.completedAt - afterTool.startedAt : Number.NaN,
      total: next.scheduledAt - model.scheduledAt,
    });
  }
  return steps;
}

/** The first model call: from the workflow's start to its request reaching the model (start-up + first query). */
export function firstCallLead(
  events: readonly HistoryEvent[],
  modelActivity: string,
  firstArrival?: number,
): { startToSchedule: number; preRequest: number } {
  const { activities } = collect(events);
  const first = activities.find((a) => a.type === modelActivity);
  const startedAt = events[0] ? eventMs(events[0]) : Number.NaN;
  return {
    startToSchedule: first ? first.scheduledAt - startedAt : Number.NaN,
    preRequest: first && firstArrival !== undefined ? firstArrival - first.startedAt : Number.NaN,
  };
}
