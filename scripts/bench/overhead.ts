// Item 1: the cost of durability per chain step, for one conversation. The same scripted chain runs through the
// orchestrator (a real worker process, update-with-start from the typed client) and through the in-process loop,
// in turn, at each model latency. Step durations come from the local server's request arrival times (model
// call i+1 arrives − model call i arrived: model latency, streaming, the tool, and whatever sits in between), so
// both systems are timed by the same clock in the same place; whole chains are timed from the caller's side.
// With the ceiling on, the bare Temporal chain (scripts/bench/bare-workflow.ts) runs too: the floor Temporal itself
// sets per step, so the orchestrator's overhead splits into Temporal's share and the orchestrator's own.
import { randomUUID } from 'node:crypto';
import { WithStartWorkflowOperation } from '@temporalio/client';
import { BARE_WORKFLOW, bareRunUpdate, type bareChain } from './bare-workflow';
import { requestsOf, scriptChain, CHAIN_TOOLS } from './chain-script';
import {
  type BenchContext,
  type RunningWorker,
  startBareWorker,
  startConversationWorker,
  terminateAll,
} from './context';
import { InProcessLoop } from './in-process-loop';
import { runsOf } from './history-runs';
import { gaps, ratio, summarize, type Summary } from './stats';
import { firstCallLead, PHASES, type Phase, stepBreakdown } from './step-breakdown';

export interface OverheadAtLatency {
  latencyMs: number;
  reps: number;
  orchestrator: { step: Summary; chain: Summary };
  inProcess: { step: Summary; chain: Summary };
  /** The bare Temporal chain (steps timed from its history: model activity scheduled to the next one). */
  bare?: { step: Summary; chain: Summary; phases: Record<Phase | 'total', number> };
  /** orchestrator − in-process, per step. */
  overheadPerStepMs: { p50: number; p95: number };
  stepRatioP50: number;
  /** Whole chain, caller's view: p50 orchestrator / p50 in-process. The 1.02× target applies at 1,000 ms. */
  chainRatio: number;
  /** Mean per phase over all measured orchestrator steps (ms), from the workflow histories. */
  phases: Record<Phase | 'total', number>;
  /** Workflow start → first model activity scheduled; first model activity start → its request at the server. */
  firstCall: { startToSchedule: number; preRequest: number };
  /** The same, for model calls after the first (transcript from the worker's cache). */
  laterPreRequestMs: number;
}

export interface OverheadResult {
  steps: number;
  latencies: OverheadAtLatency[];
}

function mean(values: number[]): number {
  const finite = values.filter(Number.isFinite);
  return finite.length ? finite.reduce((a, b) => a + b, 0) / finite.length : Number.NaN;
}

export async function runOverhead(ctx: BenchContext): Promise<OverheadResult> {
  const { mock, args } = ctx;
  const steps = args.steps;
  const { worker, conversations } = await startConversationWorker(ctx, 'overhead');
  const bareWorker: RunningWorker | undefined = args.ceiling ? await startBareWorker(ctx, 'overhead') : undefined;
  const loop = new InProcessLoop({
    baseURL: mock.url,
    request: { model: 'claude-sonnet-5-5', maxTokens: 1024, tools: CHAIN_TOOLS, promptCaching: true },
  });
  const started: string[] = [];
  const orchestratorChain = async (): Promise<{
    chainMs: number;
    stepMs: number[];
    id: string;
    arrivals: number[];
  }> => {
    const prompt = scriptChain(mock, steps, 'overhead');
    const id = `bench-overhead-${randomUUID().slice(0, 8)}`;
    started.push(id);
    const t0 = performance.now();
    const reply = await conversations.sendMessage(id, prompt, { tools: CHAIN_TOOLS });
    const chainMs = performance.now() - t0;
    if (reply.toolCalls !== steps)
      throw new Error(`orchestrator chain made ${reply.toolCalls} tool calls, expected ${steps}`);
    const arrivals = requestsOf(mock, prompt).map((r) => r.at);
    return { chainMs, stepMs: gaps(arrivals).slice(0, steps), id, arrivals };
  };
  const inProcessChain = async (): Promise<{ chainMs: number; stepMs: number[] }> => {
    const prompt = scriptChain(mock, steps, 'in-process');
    const t0 = performance.now();
    const result = await loop.run(prompt);
    const chainMs = performance.now() - t0;
    if (result.toolCalls !== steps)
      throw new Error(`in-process chain made ${result.toolCalls} tool calls, expected ${steps}`);
    return { chainMs, stepMs: gaps(requestsOf(mock, prompt).map((r) => r.at)).slice(0, steps) };
  };

  const bareChainRun = async (
    latencyMs: number,
  ): Promise<{ chainMs: number; stepMs: number[]; phases: Record<string, number>[] }> => {
    const id = `bench-overhead-bare-${randomUUID().slice(0, 8)}`;
    const t0 = performance.now();
    await ctx.client.workflow.executeUpdateWithStart(bareRunUpdate, {
      startWorkflowOperation: new WithStartWorkflowOperation<typeof bareChain>(BARE_WORKFLOW, {
        workflowId: id,
        taskQueue: bareWorker!.taskQueue,
        args: [{ steps, latencyMs }],
        workflowIdConflictPolicy: 'FAIL',
      }),
    });
    const chainMs = performance.now() - t0;
    const breakdown = stepBreakdown(
      (await runsOf(ctx.client, id)).flatMap((run) => run.events),
      'echoModel',
    );
    return { chainMs, stepMs: breakdown.map((step) => step.total), phases: breakdown };
  };

  const latencies: OverheadAtLatency[] = [];
  try {
    // Warm-up, not measured: worker caches, connections, JIT, on both sides.
    mock.setLatency(0);
    for (let i = 0; i < 2; i++) {
      await orchestratorChain();
      await inProcessChain();
      if (bareWorker) await bareChainRun(0);
    }
    for (const latencyMs of args.overheadLatencies) {
      mock.setLatency(latencyMs);
      const reps = args.overheadReps ?? (latencyMs < 100 ? 10 : 3);
      ctx.log(
        `overhead: ${reps} × ${steps}-step chain at ${latencyMs} ms model latency, orchestrator, in-process${bareWorker ? ' and bare Temporal chain' : ''} in turn`,
      );
      const orchestrator = { step: [] as number[], chain: [] as number[] };
      const inProcess = { step: [] as number[], chain: [] as number[] };
      const bare = { step: [] as number[], chain: [] as number[], phases: [] as Record<string, number>[] };
      const measured: { id: string; arrivals: number[] }[] = [];
      const systems = bareWorker ? ['o', 'i', 'b'] : ['o', 'i'];
      for (let rep = 0; rep < reps; rep++) {
        // Rotate which goes first, so a burst of load from elsewhere hits all alike.
        const order = systems.map((_, k) => systems[(k + rep) % systems.length]!);
        for (const which of order) {
          if (which === 'b') {
            const run = await bareChainRun(latencyMs);
            bare.step.push(...run.stepMs);
            bare.chain.push(run.chainMs);
            bare.phases.push(...run.phases);
          } else if (which === 'o') {
            const run = await orchestratorChain();
            orchestrator.step.push(...run.stepMs);
            orchestrator.chain.push(run.chainMs);
            measured.push(run);
          } else {
            const run = await inProcessChain();
            inProcess.step.push(...run.stepMs);
            inProcess.chain.push(run.chainMs);
          }
        }
      }
      // Where the orchestrator's time goes, from the histories of the measured chains.
      const phaseSamples: Record<string, number[]> = {};
      const leads: { startToSchedule: number; preRequest: number }[] = [];
      const laterPre: number[] = [];
      for (const { id, arrivals } of measured) {
        const runs = await runsOf(ctx.client, id);
        const events = runs.flatMap((run) => run.events);
        const breakdown = stepBreakdown(events, 'callModel', arrivals);
        for (const step of breakdown) {
          for (const [phase, value] of Object.entries(step)) (phaseSamples[phase] ??= []).push(value);
        }
        leads.push(firstCallLead(events, 'callModel', arrivals[0]));
        laterPre.push(...breakdown.slice(1).map((step) => step['model.preRequest']));
      }
      const phases = Object.fromEntries(
        [...PHASES, 'total'].map((phase) => [phase, mean(phaseSamples[phase] ?? [])]),
      ) as Record<Phase | 'total', number>;
      const o = { step: summarize(orchestrator.step), chain: summarize(orchestrator.chain) };
      const ip = { step: summarize(inProcess.step), chain: summarize(inProcess.chain) };
      latencies.push({
        latencyMs,
        reps,
        orchestrator: o,
        inProcess: ip,
        ...(bareWorker && {
          bare: {
            step: summarize(bare.step),
            chain: summarize(bare.chain),
            phases: Object.fromEntries(
              [...PHASES, 'total'].map((phase) => [phase, mean(bare.phases.map((p) => p[phase]!))]),
            ) as Record<Phase | 'total', number>,
          },
        }),
        overheadPerStepMs: { p50: o.step.p50 - ip.step.p50, p95: o.step.p95 - ip.step.p95 },
        stepRatioP50: ratio(o.step.p50, ip.step.p50),
        chainRatio: ratio(o.chain.p50, ip.chain.p50),
        phases,
        firstCall: {
          startToSchedule: mean(leads.map((l) => l.startToSchedule)),
          preRequest: mean(leads.map((l) => l.preRequest)),
        },
        laterPreRequestMs: mean(laterPre),
      });
    }
  } finally {
    mock.setLatency(0);
    await terminateAll(ctx.client, started);
    await worker.stop();
    await bareWorker?.worker.stop();
  }
  return { steps, latencies };
}
