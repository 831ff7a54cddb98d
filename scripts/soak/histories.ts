// What the server recorded of a conversation, over all its runs (continue-as-new): when each tool call's result was
// recorded, which tool calls were scheduled more than once, whether it is stuck, and a readable dump of its history.
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

export type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const EventType = temporal.api.enums.v1.EventType;

/** Every event of every run of the conversation, first run first. */
export async function conversationEvents(client: Client, workflowId: string): Promise<HistoryEvent[]> {
  try {
    const description = await client.workflow.getHandle(workflowId).describe();
    let runId: string | undefined = description.raw.workflowExecutionInfo?.firstRunId || description.runId || undefined;
    const events: HistoryEvent[] = [];
    for (let runs = 0; runId && runs < 1_000; runs++) {
      const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
      events.push(...(history.events ?? []));
      runId = history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
    }
    return events;
  } catch {
    return [];
  }
}

export const eventTime = (event: HistoryEvent): number | undefined =>
  event.eventTime ? Number(event.eventTime.seconds) * 1000 + Math.floor((event.eventTime.nanos ?? 0) / 1e6) : undefined;

/** When the server recorded the tool call's result (ActivityTaskCompleted), in ms; undefined if it never did. */
export function completionTime(events: readonly HistoryEvent[], activityId: string): number | undefined {
  // Event ids restart with every run: match the completion to its schedule within the same run.
  let scheduledId: string | undefined;
  for (const event of events) {
    if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED) scheduledId = undefined;
    if (event.activityTaskScheduledEventAttributes?.activityId === activityId) scheduledId = String(event.eventId);
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed && scheduledId !== undefined && String(completed.scheduledEventId) === scheduledId)
      return eventTime(event);
  }
  return undefined;
}

/** Tool activity ids (`tool-<call id>`) scheduled more than once over the conversation's runs: a call made twice. */
export function toolCallsScheduledTwice(events: readonly HistoryEvent[]): string[] {
  const counts = new Map<string, number>();
  for (const event of events) {
    const id = event.activityTaskScheduledEventAttributes?.activityId;
    if (id?.startsWith('tool-')) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return [...counts].filter(([, n]) => n > 1).map(([id]) => id);
}

export const hasFailedWorkflowTask = (events: readonly HistoryEvent[]): boolean =>
  events.some((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED);

/**
 * A conversation still open at the end is stuck unless its history grows within `watchMs`, or an activity of it is
 * running (started, within its timeouts). Returns why it is stuck, or undefined.
 */
export async function stuckBecause(client: Client, workflowId: string, watchMs: number): Promise<string | undefined> {
  const handle = client.workflow.getHandle(workflowId);
  const before = await handle.describe().catch(() => undefined);
  if (!before) return 'not found';
  if (before.status.name !== 'RUNNING') return undefined;
  const length = before.historyLength;
  await new Promise((resolve) => setTimeout(resolve, watchMs));
  const after = await handle.describe().catch(() => undefined);
  if (!after || after.status.name !== 'RUNNING') return undefined;
  if (after.historyLength !== length || after.runId !== before.runId) return undefined;
  const running = (after.raw.pendingActivities ?? []).filter(
    (activity) => activity.state === temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED,
  );
  if (running.length > 0) return undefined;
  const pending = after.raw.pendingWorkflowTask;
  return (
    `no new event in ${watchMs / 1000} s (history length ${length}), no activity running` +
    (pending ? `, a workflow task ${temporal.api.enums.v1.PendingWorkflowTaskState[pending.state ?? 0]}` : '') +
    ((after.raw.pendingActivities ?? []).length
      ? `, activities waiting: ${after.raw.pendingActivities!.map((a) => `${a.activityType?.name} attempt ${a.attempt} (${a.lastFailure?.message ?? 'no failure'})`).join('; ')}`
      : '')
  );
}

/** One line per event: id, time, type, and what matters of it. */
export function describeHistory(events: readonly HistoryEvent[]): string[] {
  return events.map((event) => {
    const type = EventType[event.eventType ?? 0]?.replace(/^EVENT_TYPE_/, '') ?? String(event.eventType);
    const details =
      event.activityTaskScheduledEventAttributes?.activityId ??
      event.activityTaskStartedEventAttributes?.attempt?.toString().replace(/^/, 'attempt ') ??
      event.workflowTaskFailedEventAttributes?.failure?.message ??
      event.activityTaskFailedEventAttributes?.failure?.message ??
      event.activityTaskTimedOutEventAttributes?.failure?.message ??
      event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name ??
      event.workflowExecutionSignaledEventAttributes?.signalName ??
      '';
    return `${String(event.eventId).padStart(4)} ${new Date(eventTime(event) ?? 0).toISOString()} ${type} ${details}`;
  });
}
