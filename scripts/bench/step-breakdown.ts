// Where the time of one chain step goes, read from the workflow's own history (server timestamps): a step runs from
// one model activity being scheduled to the next one being scheduled, through
//   model.queue   ActivityTaskScheduled → Started: until a worker slot polled the model activity
//   model.run     Started → Completed: the activity (transcript cache or query, SDK call, model latency, reply upload)
//   wft.model     model Completed → WorkflowTaskStarted: the workflow task that reacts to the reply waits for the worker
//   wft.model.run WorkflowTaskStarted → Completed: the worker runs it (apply the reply, schedule the tool)
//   tool.queue, tool.run, wft.tool, wft.tool.run: the same for the tool activity, ending at the next model schedule.
// With the local server's request arrival times it also splits model.run into pre-request (in the activity, before
// the HTTP request arrives: transcript assembly — a query on a cache miss — and the SDK) and the rest.
import { eventMs, type HistoryEvent } from './history-runs';

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
export type Phase = (typeof PHASES)[number];
export type StepPhases = Record<Phase, number> & { total: number };

export interface ActivityRecord {
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

const at = eventMs;
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
        scheduledAt: at(event),
        startedAt: Number.NaN,
        closedAt: Number.NaN,
      });
    }
    const started = event.activityTaskStartedEventAttributes;
    if (started) {
      const record = activities.get(Number(started.scheduledEventId));
      if (record) record.startedAt = at(event);
    }
    const closed =
      event.activityTaskCompletedEventAttributes ??
      event.activityTaskFailedEventAttributes ??
      event.activityTaskTimedOutEventAttributes;
    if (closed) {
      const record = activities.get(Number(closed.scheduledEventId));
      if (record) record.closedAt = at(event);
    }
    if (event.workflowTaskStartedEventAttributes) taskStartedAt = at(event);
    if (event.workflowTaskCompletedEventAttributes)
      tasks.push({ startedAt: taskStartedAt, completedAt: at(event), completedId: idOf(event) });
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
): StepPhases[] {
  const { activities, tasks } = collect(events);
  const models = activities.filter((a) => a.type === modelActivity);
  const steps: StepPhases[] = [];
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
  const startedAt = events[0] ? at(events[0]) : Number.NaN;
  return {
    startToSchedule: first ? first.scheduledAt - startedAt : Number.NaN,
    preRequest: first && firstArrival !== undefined ? firstArrival - first.startedAt : Number.NaN,
  };
}
