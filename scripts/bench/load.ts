// The bench's one way to run a load and time it: C conversations of S chain steps, all at once, on one running system
// (ours, the peer, the floor, the in-process loop: systems.ts), each chain scripted on the local Messages API server,
// measured the same way for every system (LoadRun says what), partly from the workflows' own histories (all of them,
// or an even sample; step-breakdown: history.ts).
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { MessagesApi } from '../../testing/messages-api/types';
import type { WorkerProcess } from '../worker-process';
import { requestsOf, scriptChain } from './chain-script';
import { type BenchContext, inLanes, terminateAll } from './context';
import {
  encodedBytes,
  eventCounts,
  eventMs,
  firstCallLead,
  type Phases,
  PHASES,
  payloadBytesByType,
  runsOf,
  stepBreakdown,
} from './history';
import {
  cpuTimeMs,
  gaps,
  machineBusyMs,
  mean,
  patiently,
  type ProcessSample,
  ProcessSampler,
  quiesce,
} from './measure';

export interface Conversation {
  id: string;
  prompt: string;
  steps: number;
}

/** One conversation: `run` starts it and resolves with its reply; `again` waits for it without starting it twice. */
interface Launch {
  run(): Promise<unknown>;
  again(): Promise<unknown>;
}

export interface RunningSystem {
  name: string;
  /** The activity type of a model call, to tell model calls from tool calls in a history (none: no histories). */
  modelActivity?: string;
  worker?: WorkerProcess;
  launch(conversation: Conversation): Launch;
  /** Its workflows stay open after the reply (a conversation awaits the next message): the run ends them. */
  leavesOpen: boolean;
  stop(): Promise<void>;
}

export interface LoadSpec {
  conversations: number;
  steps: number;
  /** In workflow ids and script tags. */
  label: string;
  /** Give up waiting after this long; steps completed by then count (default --run-timeout). */
  deadlineMs?: number;
  /** Scripts one conversation's chain and returns its first message (default: the bench chain of `steps`). */
  script?: (mock: MessagesApi, tag: string) => string;
  /** Histories read after the run (default 100; 250 when cut; 0: none). */
  historySample?: number;
  /** The model's latency, and the delay between its streamed tokens, during the run (ms; default 0). */
  latencyMs?: number;
  tokenDelayMs?: number;
  /** End the workflows a system leaves open (default true; only unfinished ones otherwise). */
  endOpen?: boolean;
  /** Called with each conversation's outcome (e.g. a reader's token arrival times). */
  onReply?: (conversation: Conversation, reply: unknown) => void;
}

/** A run during which the rest of the machine kept at most this many cores busy was a quiet one. */
export const QUIET_CORES = 0.25;

export interface LoadRun {
  system: string;
  conversations: number;
  steps: number;
  latencyMs: number;
  completed: number;
  failed: number;
  firstError?: string;
  /** Update RPCs that gave up (DEADLINE_EXCEEDED) while the workflow went on; the caller then waited another way. */
  rpcTimeouts: number;
  deadlineMs: number;
  timedOut: boolean;
  /** First start → last reply (or the deadline). */
  wallMs: number;
  completedSteps: number;
  stepsPerSecond: number;
  /** Each finished conversation's start → reply, ms. */
  durationsMs: number[];
  /** Model request i+1 arrived − model request i arrived, at the server, for every step of every conversation. */
  stepMs: number[];
  /** CPU time per completed step: the worker, the Temporal server (when the bench started it), this process. */
  cpuMsPerStep: { worker: number; server: number; bench: number };
  /**
   * Cores the rest of the machine kept busy during the run (its busy time minus the worker's, the server's and this
   * process's, ÷ wall time): someone else's work that slowed this run. NaN when the server is not the bench's own.
   */
  otherCores: number;
  memory?: { idleRssBytes: number; peakRssBytes: number; highWaterMarkBytes: number; samples: ProcessSample[] };
  /** From the histories read: means per conversation (all runs of it, across continue-as-new). */
  history?: {
    read: number;
    runs: number;
    /** Encoded History bytes (fetchHistory), and the server's own historySize (describe). */
    bytes: number;
    serverBytes: number;
    events: number;
    eventTypes: Record<string, number>;
    payloadBytes: Record<string, number>;
    activityTimeouts: number;
    /** Mean per phase over every complete step read. */
    phases: Phases;
    /** Workflow start → first model activity scheduled; that activity's start → its request at the server. */
    firstCall: { startToSchedule: number; preRequest: number };
    /** Activity start → request at the server for model calls after the first. */
    laterPreRequestMs: number;
  };
}

/** The error and its causes, with gRPC codes: "ServiceError: Update-With-Start failed ← Error: 8 RESOURCE_EXHAUSTED: …". */
function errorText(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err; e !== undefined && parts.length < 4; e = e instanceof Error ? e.cause : undefined) {
    const code = (e as { code?: unknown }).code;
    parts.push(
      e instanceof Error ? `${e.name}${code !== undefined ? ` (code ${String(code)})` : ''}: ${e.message}` : String(e),
    );
  }
  const message = parts.join(' ← ');
  return message.length > 400 ? `${message.slice(0, 400)}…` : message;
}

/** Up to `max` items spread evenly over the list. */
function spread<T>(items: readonly T[], max: number): T[] {
  if (items.length <= max) return [...items];
  const step = items.length / max;
  return Array.from({ length: max }, (_, i) => items[Math.floor(i * step)]!);
}

export async function runLoad(ctx: BenchContext, system: RunningSystem, spec: LoadSpec): Promise<LoadRun> {
  const { mock } = ctx;
  const deadlineMs = spec.deadlineMs ?? ctx.args.runTimeoutMs;
  const suffix = randomUUID().slice(0, 8);
  const list: Conversation[] = Array.from({ length: spec.conversations }, (_, i) => {
    const tag = `${system.name}-${spec.label}-${i}`;
    return {
      id: `bench-${tag}-${suffix}`,
      prompt: spec.script ? spec.script(mock, tag) : scriptChain(mock, spec.steps, tag),
      steps: spec.steps,
    };
  });
  mock.setLatency(spec.latencyMs ?? 0);
  mock.setTokenDelay(spec.tokenDelayMs ?? 0);
  const serverPid = ctx.server.process?.pid;
  const sampler = system.worker ? new ProcessSampler(system.worker.pid, 200) : undefined;
  const serverCpu0 = serverPid ? cpuTimeMs(serverPid) : undefined;
  const benchCpu0 = process.cpuUsage();
  const busy0 = machineBusyMs();
  const t0 = performance.now();
  const t0Epoch = Date.now();
  const deadline = t0 + deadlineMs;
  const unfinished = new Set(list.map((c) => c.id));
  const finished: number[] = [];
  const durations: number[] = [];
  let failed = 0;
  let rpcTimeouts = 0;
  let firstError: string | undefined;
  // At the deadline every call still waiting is cancelled, so nothing outlives the run (or the connection).
  const cancel = new AbortController();
  setMaxListeners(0, cancel.signal); // one listener per conversation waiting
  const all = Promise.all(
    list.map(async (conversation) => {
      const launch = system.launch(conversation);
      const started = performance.now();
      try {
        const reply = await ctx.client.withAbortSignal(cancel.signal, () =>
          patiently(
            () => launch.run(),
            () => launch.again(),
            deadline,
            () => {
              if (!cancel.signal.aborted) rpcTimeouts++; // not our own cancellation at the deadline
            },
          ),
        );
        unfinished.delete(conversation.id);
        const now = performance.now();
        if (now > deadline) return; // finished after the deadline: not counted
        finished.push(now - t0);
        durations.push(now - started);
        spec.onReply?.(conversation, reply);
      } catch (err) {
        if (performance.now() > deadline) return; // ended by the deadline (or by the clean-up after it)
        failed++;
        firstError ??= errorText(err);
      }
    }),
  );
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    all.then(() => false),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), deadlineMs))),
  ]);
  clearTimeout(timer);
  const wallMs = timedOut ? deadlineMs : finished.length ? Math.max(...finished) : performance.now() - t0;
  const usage = sampler?.stop();
  const serverCpu1 = serverPid ? cpuTimeMs(serverPid) : undefined;
  const benchCpu = process.cpuUsage(benchCpu0);
  const busy1 = machineBusyMs();
  mock.setLatency(0);
  mock.setTokenDelay(0);
  if (timedOut) {
    cancel.abort();
    await Promise.race([all, new Promise((resolve) => setTimeout(resolve, 15_000))]);
    ctx.log(
      `  deadline (${(deadlineMs / 1000).toFixed(0)} s) passed with ${finished.length}/${list.length} finished; counting steps from the histories`,
    );
  }

  const arrivals = (c: Conversation): number[] => requestsOf(mock, c.prompt).map((r) => r.at);
  const sample = spec.historySample ?? (timedOut ? 250 : 100);
  const history = system.modelActivity
    ? await readHistories(ctx, system.modelActivity, spread(list, sample), arrivals, t0Epoch + deadlineMs)
    : undefined;
  const completedSteps =
    timedOut && history
      ? Math.round((history.stepsCompleted * list.length) / Math.max(1, history.read))
      : finished.length * spec.steps;
  const serverCpu = serverCpu0 !== undefined && serverCpu1 !== undefined ? serverCpu1 - serverCpu0 : undefined;
  const benchCpuMs = (benchCpu.user + benchCpu.system) / 1000;
  const ownCpu = (usage?.cpuMs ?? 0) + (serverCpu ?? Number.NaN) + benchCpuMs;
  const perStep = (ms: number | undefined): number =>
    ms !== undefined && completedSteps > 0 ? ms / completedSteps : Number.NaN;
  const ended = system.leavesOpen && (spec.endOpen ?? true) ? list.map((c) => c.id) : [...unfinished];
  await terminateAll(ctx.client, ended);
  return {
    system: system.name,
    conversations: list.length,
    steps: spec.steps,
    latencyMs: spec.latencyMs ?? 0,
    completed: finished.length,
    failed,
    ...(firstError && { firstError }),
    rpcTimeouts,
    deadlineMs,
    timedOut,
    wallMs,
    completedSteps,
    stepsPerSecond: completedSteps / (wallMs / 1000),
    durationsMs: durations,
    stepMs: list.flatMap((c) => gaps(arrivals(c)).slice(0, c.steps)),
    cpuMsPerStep: { worker: perStep(usage?.cpuMs), server: perStep(serverCpu), bench: perStep(benchCpuMs) },
    otherCores: busy0 !== undefined && busy1 !== undefined ? Math.max(0, busy1 - busy0 - ownCpu) / wallMs : Number.NaN,
    ...(usage && {
      memory: {
        idleRssBytes: usage.samples[0]?.rssBytes ?? Number.NaN,
        peakRssBytes: usage.peakRssBytes,
        highWaterMarkBytes: usage.highWaterMarkBytes,
        samples: usage.samples,
      },
    }),
    ...(history && { history: history.figures }),
  };
}

/** One conversation (a load of one) that must finish: its run, and the conversation with its reply. */
export async function runOne(
  ctx: BenchContext,
  system: RunningSystem,
  spec: Omit<LoadSpec, 'conversations' | 'onReply'>,
): Promise<{ run: LoadRun; conversation: Conversation; reply: unknown }> {
  let done: { conversation: Conversation; reply: unknown } | undefined;
  const run = await runLoad(ctx, system, {
    ...spec,
    conversations: 1,
    onReply: (c, reply) => (done = { conversation: c, reply }),
  });
  if (!done) throw new Error(`${spec.label}: the chain did not finish: ${run.firstError}`);
  return { run, ...done };
}

/** Reads the conversations' histories, a few at a time, and sums up what they show. */
async function readHistories(
  ctx: BenchContext,
  modelActivity: string,
  conversations: readonly Conversation[],
  arrivalsOf: (c: Conversation) => number[],
  untilEpochMs: number,
): Promise<{ read: number; stepsCompleted: number; figures: NonNullable<LoadRun['history']> }> {
  let read = 0;
  let stepsCompleted = 0;
  let activityTimeouts = 0;
  const sums = { runs: 0, bytes: 0, serverBytes: 0, events: 0 };
  const eventTypes: Record<string, number> = {};
  const payloadBytes: Record<string, number> = {};
  const phases: Record<string, number[]> = {};
  const leads: { startToSchedule: number; preRequest: number }[] = [];
  const laterPre: number[] = [];
  const add = (into: Record<string, number>, from: Record<string, number>): void => {
    for (const [key, value] of Object.entries(from)) into[key] = (into[key] ?? 0) + value;
  };
  await inLanes(conversations, 20, async (conversation) => {
    const runs = await runsOf(ctx.client, conversation.id).catch(() => undefined);
    if (!runs) return; // never started: nothing to count
    read++;
    const events = runs.flatMap((run) => run.events);
    sums.runs += runs.length;
    sums.bytes += runs.reduce((sum, run) => sum + encodedBytes(run.events), 0);
    sums.serverBytes += runs.reduce((sum, run) => sum + run.historySize, 0);
    sums.events += events.length;
    add(eventTypes, eventCounts(events));
    add(payloadBytes, payloadBytesByType(events, modelActivity));
    const tools = new Set<string>();
    for (const event of events) {
      const scheduled = event.activityTaskScheduledEventAttributes;
      if (scheduled && scheduled.activityType?.name !== modelActivity) tools.add(String(event.eventId));
      const completed = event.activityTaskCompletedEventAttributes;
      if (completed && tools.has(String(completed.scheduledEventId)) && eventMs(event) <= untilEpochMs)
        stepsCompleted++;
      if (event.activityTaskTimedOutEventAttributes) activityTimeouts++;
      // A timed-out attempt that is retried leaves no event until the activity closes; its later attempt number does.
      const started = event.activityTaskStartedEventAttributes;
      if (started && (started.attempt ?? 1) > 1) activityTimeouts += (started.attempt ?? 1) - 1;
    }
    const arrivals = arrivalsOf(conversation);
    const breakdown = stepBreakdown(events, modelActivity, arrivals);
    for (const step of breakdown)
      for (const [phase, value] of Object.entries(step)) if (Number.isFinite(value)) (phases[phase] ??= []).push(value);
    leads.push(firstCallLead(events, modelActivity, arrivals[0]));
    laterPre.push(...breakdown.slice(1).map((step) => step['model.preRequest']));
  });
  const per = (value: number): number => value / Math.max(1, read);
  const perConversation = (record: Record<string, number>): Record<string, number> =>
    Object.fromEntries(Object.entries(record).map(([key, value]) => [key, per(value)]));
  return {
    read,
    stepsCompleted,
    figures: {
      read,
      runs: per(sums.runs),
      bytes: per(sums.bytes),
      serverBytes: per(sums.serverBytes),
      events: per(sums.events),
      eventTypes: perConversation(eventTypes),
      payloadBytes: perConversation(payloadBytes),
      activityTimeouts,
      phases: Object.fromEntries([...PHASES, 'total'].map((phase) => [phase, mean(phases[phase] ?? [])])) as Phases,
      firstCall: {
        startToSchedule: mean(leads.map((l) => l.startToSchedule)),
        preRequest: mean(leads.map((l) => l.preRequest)),
      },
      laterPreRequestMs: mean(laterPre),
    },
  };
}

/**
 * Every load on every system, the order rotating from one load to the next so that a burst of work from elsewhere
 * hits each system alike; `onRun` sees each run and the index of its load.
 */
export async function alternate(
  ctx: BenchContext,
  systems: readonly RunningSystem[],
  loads: readonly LoadSpec[],
  onRun: (run: LoadRun, load: number) => Promise<void> | void,
): Promise<void> {
  for (const [i, load] of loads.entries())
    for (const system of systems.map((_, k) => systems[(k + i) % systems.length]!))
      await onRun(await runLoad(ctx, system, load), i);
}

/**
 * Between runs: the Temporal server works off the last one (terminations, timers), and then — for up to 10 s — the
 * machine's other work is given a chance to pass (less than a quarter of a core busy), before the next run starts.
 */
export async function settle(ctx: BenchContext): Promise<void> {
  const ms = await quiesce(ctx.server.process?.pid);
  if (ms > 5_000) ctx.log(`  server quiet again after ${(ms / 1000).toFixed(0)} s`);
  for (let waited = 0; waited < 10_000; waited += 500) {
    const busy0 = machineBusyMs();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const busy1 = machineBusyMs();
    if (busy0 === undefined || busy1 === undefined || (busy1 - busy0) / 500 < QUIET_CORES) return;
  }
}
