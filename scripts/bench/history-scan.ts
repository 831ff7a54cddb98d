// After a throughput run, the workflows' own histories (server timestamps) say what happened, the same way for both
// systems: chain steps completed by a moment (a step is done when its tool activity completed — how a run cut by its
// deadline is scored), activity attempts that timed out (a task the server handed out that never came back), and
// where each step's time went (step-breakdown.ts).
import type { Client } from '@temporalio/client';
import { eventMs } from './history-runs';
import { PHASES, type Phase, stepBreakdown } from './step-breakdown';

export interface HistoryScan {
  scanned: number;
  stepsCompleted: number;
  activityTimeouts: number;
  /** Mean per phase over every complete step of the scanned histories, ms. */
  phases: Record<Phase | 'total', number>;
}

export async function scanHistories(
  client: Client,
  workflowIds: readonly string[],
  options: {
    modelActivity: string;
    untilEpochMs: number;
    arrivalsOf?: (id: string) => number[] | undefined;
    parallel?: number;
  },
): Promise<HistoryScan> {
  let next = 0;
  let stepsCompleted = 0;
  let activityTimeouts = 0;
  const samples: Record<string, number[]> = {};
  const lane = async (): Promise<void> => {
    while (next < workflowIds.length) {
      const id = workflowIds[next++]!;
      let events;
      try {
        events = (await client.workflow.getHandle(id).fetchHistory()).events ?? [];
      } catch {
        continue; // never started: nothing to count
      }
      const tools = new Set<string>();
      for (const event of events) {
        const scheduled = event.activityTaskScheduledEventAttributes;
        if (scheduled && scheduled.activityType?.name !== options.modelActivity) tools.add(String(event.eventId));
        const completed = event.activityTaskCompletedEventAttributes;
        if (completed && tools.has(String(completed.scheduledEventId)) && eventMs(event) <= options.untilEpochMs)
          stepsCompleted++;
        if (event.activityTaskTimedOutEventAttributes) activityTimeouts++;
        // A timed-out attempt that is retried leaves no event until the activity closes; its later attempt number does.
        const started = event.activityTaskStartedEventAttributes;
        if (started && (started.attempt ?? 1) > 1) activityTimeouts += (started.attempt ?? 1) - 1;
      }
      for (const step of stepBreakdown(events, options.modelActivity, options.arrivalsOf?.(id))) {
        for (const [phase, value] of Object.entries(step))
          if (Number.isFinite(value)) (samples[phase] ??= []).push(value);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.parallel ?? 20, workflowIds.length) }, lane));
  const mean = (values: number[] = []): number =>
    values.length ? values.reduce((a, b) => a + b, 0) / values.length : Number.NaN;
  return {
    scanned: workflowIds.length,
    stepsCompleted,
    activityTimeouts,
    phases: Object.fromEntries([...PHASES, 'total'].map((phase) => [phase, mean(samples[phase])])) as Record<
      Phase | 'total',
      number
    >,
  };
}

/** Up to `max` items spread evenly over the list. */
export function spread<T>(items: readonly T[], max: number): T[] {
  if (items.length <= max) return [...items];
  const step = items.length / max;
  return Array.from({ length: max }, (_, i) => items[Math.floor(i * step)]!);
}
