// Items 2 and 4: C conversations of S steps at L ms model latency, all at once, on ONE worker process — and the
// ceiling Temporal itself sets on this machine: the same number of bare chains (an activity that sleeps L ms, an
// echo activity for the tool) on a worker process of the same shape. Completed steps per second for both, the
// worker's RSS every 200 ms, and CPU time per step of the worker, the Temporal server and this process.
import { randomUUID } from 'node:crypto';
import { WithStartWorkflowOperation } from '@temporalio/client';
import { ConversationError } from '../../client/errors';
import { BARE_WORKFLOW, type BareChainInput, bareRunUpdate, type bareChain } from './bare-workflow';
import { requestsOf, scriptChain, CHAIN_TOOLS } from './chain-script';
import {
  type BenchContext,
  type RunningWorker,
  startBareWorker,
  startConversationWorker,
  terminateAll,
} from './context';
import { scanHistories, spread } from './history-scan';
import { patiently } from './patient-call';
import { quiesce } from './quiesce';
import { cpuTimeMs, type ProcessSample, ProcessSampler } from './process-sampler';
import { ratio, summarize, type Summary } from './stats';

/** Histories read after a complete run (for the step breakdown and timed-out attempts), and after a cut one (to count steps). */
const HISTORY_SAMPLE = 100;
const HISTORY_SAMPLE_CUT = 250;
import type { Phase } from './step-breakdown';

export type System = 'orchestrator' | 'bare';

export interface ThroughputRun {
  system: System;
  conversations: number;
  steps: number;
  latencyMs: number;
  completed: number;
  failed: number;
  firstError?: string;
  /** Update RPCs that gave up (DEADLINE_EXCEEDED) while the workflow went on; the caller then waited another way. */
  rpcTimeouts: number;
  /** The run's deadline (from --run-timeout and what is left of --budget). */
  deadlineMs: number;
  /** Not every chain finished by the deadline: steps were counted from the histories up to it (all, or ≤250 scaled up). */
  timedOut: boolean;
  /** First start → last completion (or the deadline). */
  wallMs: number;
  /** Completed chain steps (model call + tool call) by the end of the run. */
  completedSteps: number;
  /** Completed chain steps per second of wall time. */
  stepsPerSecond: number;
  /** If nothing but the model latency took time: C × S / ((S + 1) × L). */
  latencyBoundStepsPerSecond: number;
  /** Caller's view: start → reply, per conversation. */
  conversationMs: Summary;
  /** ms after the start at which each conversation finished, sorted (for the plot). */
  completionsMs: number[];
  worker: {
    idleRssBytes: number;
    peakRssBytes: number;
    highWaterMarkBytes: number;
    cpuMs: number;
    cpuMsPerStep: number;
    samples: ProcessSample[];
  };
  /** The Temporal server's CPU (only when this bench started it). */
  serverCpuMsPerStep: number;
  /** This process: the client and the local Messages API server. */
  benchCpuMsPerStep: number;
  /** Activity attempts that timed out (handed to the worker, never completed: retried after the heartbeat/start-to-close timeout), in the histories read. */
  activityTimeouts: number;
  historiesRead: number;
  /** Mean per phase over the steps of the histories read (ms). */
  phases: Record<Phase | 'total', number>;
}

export interface ThroughputPoint {
  conversations: number;
  orchestrator: ThroughputRun;
  bare?: ThroughputRun;
  /** orchestrator steps/s ÷ bare steps/s. */
  ratio: number;
}

export interface ThroughputResult {
  steps: number;
  latencyMs: number;
  points: ThroughputPoint[];
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

/** One line on a workflow that has not answered: its status, history length and what it waits for. */
async function describeBriefly(ctx: BenchContext, id: string): Promise<string> {
  try {
    const description = await ctx.client.workflow.getHandle(id).describe();
    const raw = description.raw;
    const pending =
      (raw.pendingActivities ?? [])
        .map((a) => `${a.activityType?.name} (${a.state}, attempt ${a.attempt})`)
        .join(', ') || 'none';
    const task = raw.pendingWorkflowTask ? `workflow task ${raw.pendingWorkflowTask.state}` : 'no workflow task';
    return `${id}: ${description.status.name}, ${description.historyLength} events, pending activities: ${pending}; ${task}`;
  } catch (err) {
    return `${id}: ${errorText(err)}`;
  }
}

interface Launch {
  id: string;
  prompt?: string;
  /** Starts the chain and resolves when its reply is there; `again` waits for it without starting anything twice. */
  run(): Promise<unknown>;
  again(): Promise<unknown>;
}

/** Ids whose chain had not answered when the run ended (they still run: the caller ends them). */
type Unfinished = Set<string>;

async function measure(
  ctx: BenchContext,
  system: System,
  conversations: number,
  running: RunningWorker,
  launches: Launch[],
  deadlineMs: number,
  unfinished: Unfinished,
): Promise<ThroughputRun> {
  const { steps, latencyMs } = ctx.args;
  const modelActivity = system === 'bare' ? 'echoModel' : 'callModel';
  const serverPid = ctx.server.process?.pid;
  const sampler = new ProcessSampler(running.worker.pid, 200);
  const serverCpu0 = serverPid ? cpuTimeMs(serverPid) : undefined;
  const benchCpu0 = process.cpuUsage();
  const t0 = performance.now();
  const t0Epoch = Date.now();
  const deadline = t0 + deadlineMs;
  const finished: number[] = [];
  const durations: number[] = [];
  let failed = 0;
  let rpcTimeouts = 0;
  let firstError: string | undefined;
  for (const launch of launches) unfinished.add(launch.id);
  // At the deadline every call still waiting is cancelled, so nothing outlives the run (or the connection).
  const cancel = new AbortController();
  const all = Promise.all(
    launches.map(async (launch) => {
      const started = performance.now();
      try {
        await ctx.client.withAbortSignal(cancel.signal, () =>
          patiently(
            () => launch.run(),
            () => launch.again(),
            deadline,
            () => {
              if (!cancel.signal.aborted) rpcTimeouts++; // not our own cancellation at the deadline
            },
          ),
        );
        unfinished.delete(launch.id);
        const now = performance.now();
        if (now > deadline) return; // finished after the deadline: not counted
        finished.push(now - t0);
        durations.push(now - started);
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
  const usage = sampler.stop();
  const serverCpu1 = serverPid ? cpuTimeMs(serverPid) : undefined;
  const benchCpu = process.cpuUsage(benchCpu0);
  if (timedOut) {
    cancel.abort();
    await Promise.race([all, new Promise((resolve) => setTimeout(resolve, 15_000))]);
    ctx.log(
      `  deadline (${(deadlineMs / 1000).toFixed(0)} s) passed with ${finished.length}/${conversations} finished; counting steps from the histories`,
    );
    for (const launch of launches.filter((l) => unfinished.has(l.id)).slice(0, 3))
      ctx.log(`  still waiting: ${await describeBriefly(ctx, launch.id)}`);
  }
  // A cut run is scored by the steps its histories show by the deadline: all of them, or an even sample scaled up.
  const read = spread(
    launches.map((l) => l.id),
    timedOut ? HISTORY_SAMPLE_CUT : HISTORY_SAMPLE,
  );
  const scan = await scanHistories(ctx.client, read, {
    modelActivity,
    untilEpochMs: t0Epoch + deadlineMs,
    arrivalsOf: (id) => {
      const prompt = launches.find((l) => l.id === id)?.prompt;
      return prompt ? requestsOf(ctx.mock, prompt).map((r) => r.at) : undefined;
    },
  });
  const completedSteps = timedOut
    ? Math.round((scan.stepsCompleted * launches.length) / Math.max(1, read.length))
    : finished.length * steps;
  const perStep = (ms: number | undefined): number =>
    ms !== undefined && completedSteps > 0 ? ms / completedSteps : Number.NaN;
  return {
    system,
    conversations,
    steps,
    latencyMs,
    completed: finished.length,
    failed,
    ...(firstError && { firstError }),
    rpcTimeouts,
    deadlineMs,
    timedOut,
    wallMs,
    completedSteps,
    stepsPerSecond: completedSteps / (wallMs / 1000),
    latencyBoundStepsPerSecond:
      latencyMs > 0 ? (conversations * steps) / (((steps + 1) * latencyMs) / 1000) : Number.NaN,
    conversationMs: summarize(durations),
    completionsMs: finished.sort((a, b) => a - b),
    worker: {
      idleRssBytes: usage.samples[0]?.rssBytes ?? Number.NaN,
      peakRssBytes: usage.peakRssBytes,
      highWaterMarkBytes: usage.highWaterMarkBytes,
      cpuMs: usage.cpuMs,
      cpuMsPerStep: perStep(usage.cpuMs),
      samples: usage.samples,
    },
    serverCpuMsPerStep: perStep(
      serverCpu0 !== undefined && serverCpu1 !== undefined ? serverCpu1 - serverCpu0 : undefined,
    ),
    benchCpuMsPerStep: perStep((benchCpu.user + benchCpu.system) / 1000),
    activityTimeouts: scan.activityTimeouts,
    historiesRead: scan.scanned,
    phases: scan.phases,
  };
}

async function orchestratorRun(ctx: BenchContext, conversations: number, deadlineMs: number): Promise<ThroughputRun> {
  const { mock, args } = ctx;
  mock.reset();
  mock.setLatency(args.latencyMs);
  const running = await startConversationWorker(ctx, `throughput-${conversations}`);
  const client = running.conversations;
  const launches: Launch[] = Array.from({ length: conversations }, (_, i) => {
    const prompt = scriptChain(mock, args.steps, `c${conversations}-${i}`);
    const id = `bench-throughput-${conversations}-${i}-${randomUUID().slice(0, 8)}`;
    const send = () => client.sendMessage(id, prompt, { tools: CHAIN_TOOLS });
    return {
      id,
      prompt,
      run: send,
      // The update-with-start gave up: wait for turn 1; if the conversation or its message never arrived, send it.
      again: () =>
        client.awaitTurn(id, 1).catch((err: unknown) => {
          if (err instanceof ConversationError && (err.code === 'not_found' || err.code === 'rejected')) return send();
          throw err;
        }),
    };
  });
  const unfinished: Unfinished = new Set();
  try {
    // One chain first, not measured: a fresh worker process is cold (JIT, workflow context, connections).
    mock.setLatency(0);
    const warmUp = `bench-throughput-warm-up-${randomUUID().slice(0, 8)}`;
    await client.sendMessage(warmUp, scriptChain(mock, args.steps, 'warm-up'), { tools: CHAIN_TOOLS });
    await terminateAll(ctx.client, [warmUp]);
    mock.setLatency(args.latencyMs);
    ctx.log(
      `throughput: ${conversations} conversations × ${args.steps} steps at ${args.latencyMs} ms, orchestrator (worker pid ${running.worker.pid}, deadline ${(deadlineMs / 1000).toFixed(0)} s)`,
    );
    return await measure(ctx, 'orchestrator', conversations, running, launches, deadlineMs, unfinished);
  } finally {
    mock.setLatency(0);
    // Answered conversations stay open, idle (one timer each): ended only on a server we do not own. Chains still
    // running are ended always, so their timeouts and retries cannot load the next run.
    await terminateAll(ctx.client, ctx.server.process ? [...unfinished] : launches.map((l) => l.id));
    await running.worker.stop(10_000);
    ctx.log(`  server quiet again after ${((await quiesce(ctx.server.process?.pid)) / 1000).toFixed(0)} s`);
  }
}

async function bareRun(ctx: BenchContext, conversations: number, deadlineMs: number): Promise<ThroughputRun> {
  const { args } = ctx;
  const running = await startBareWorker(ctx, `${conversations}`);
  const input: BareChainInput = { steps: args.steps, latencyMs: args.latencyMs };
  const launches: Launch[] = Array.from({ length: conversations }, (_, i) => {
    const id = `bench-bare-${conversations}-${i}-${randomUUID().slice(0, 8)}`;
    return {
      id,
      run: () =>
        ctx.client.workflow.executeUpdateWithStart(bareRunUpdate, {
          startWorkflowOperation: new WithStartWorkflowOperation<typeof bareChain>(BARE_WORKFLOW, {
            workflowId: id,
            taskQueue: running.taskQueue,
            args: [input],
            workflowIdConflictPolicy: 'USE_EXISTING',
          }),
        }),
      again: () => ctx.client.workflow.getHandle(id).result(),
    };
  });
  const unfinished: Unfinished = new Set();
  try {
    // One chain first, not measured, as for the orchestrator.
    await ctx.client.workflow.executeUpdateWithStart(bareRunUpdate, {
      startWorkflowOperation: new WithStartWorkflowOperation<typeof bareChain>(BARE_WORKFLOW, {
        workflowId: `bench-bare-warm-up-${randomUUID().slice(0, 8)}`,
        taskQueue: running.taskQueue,
        args: [{ steps: args.steps, latencyMs: 0 }],
        workflowIdConflictPolicy: 'FAIL',
      }),
    });
    ctx.log(
      `throughput: ${conversations} bare chains × ${args.steps} steps at ${args.latencyMs} ms, the ceiling (worker pid ${running.worker.pid}, deadline ${(deadlineMs / 1000).toFixed(0)} s)`,
    );
    return await measure(ctx, 'bare', conversations, running, launches, deadlineMs, unfinished);
  } finally {
    // Bare chains complete by themselves; only those still running need ending.
    await terminateAll(ctx.client, [...unfinished]);
    await running.worker.stop(10_000);
    ctx.log(`  server quiet again after ${((await quiesce(ctx.server.process?.pid)) / 1000).toFixed(0)} s`);
  }
}

/** Time a run may take: --run-timeout, and an equal share of what is left of --budget for the runs still to come. */
function deadlineFor(ctx: BenchContext, runsLeft: number[]): number {
  // Besides its deadline, a run costs a worker start, reading histories and ending what still runs.
  const setupMs = (conversations: number): number => 15_000 + conversations * 35;
  const left = ctx.budgetEnd - performance.now() - runsLeft.reduce((sum, c) => sum + setupMs(c), 0);
  return Math.max(20_000, Math.min(ctx.args.runTimeoutMs, left / runsLeft.length));
}

export async function runThroughput(ctx: BenchContext): Promise<ThroughputResult> {
  const points: ThroughputPoint[] = [];
  const runsLeft = ctx.args.conversations.flatMap((c) => (ctx.args.ceiling ? [c, c] : [c]));
  for (const conversations of ctx.args.conversations) {
    const orchestrator = await orchestratorRun(ctx, conversations, deadlineFor(ctx, runsLeft));
    runsLeft.shift();
    const bare = ctx.args.ceiling ? await bareRun(ctx, conversations, deadlineFor(ctx, runsLeft)) : undefined;
    if (ctx.args.ceiling) runsLeft.shift();
    points.push({
      conversations,
      orchestrator,
      ...(bare && { bare }),
      ratio: bare ? ratio(orchestrator.stepsPerSecond, bare.stepsPerSecond) : Number.NaN,
    });
    ctx.log(
      `  ${conversations}: orchestrator ${orchestrator.stepsPerSecond.toFixed(1)} steps/s` +
        (bare ? `, bare ${bare.stepsPerSecond.toFixed(1)} steps/s, ratio ${points.at(-1)!.ratio.toFixed(2)}` : ''),
    );
  }
  return { steps: ctx.args.steps, latencyMs: ctx.args.latencyMs, points };
}
