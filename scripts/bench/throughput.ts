// Items 2 and 4: C conversations of S steps at L ms model latency, all at once, on ONE worker process — and the
// ceiling Temporal itself sets on this machine: the same load on the floor (bare-workflow.ts). Completed steps per
// second for both, the worker's RSS every 200 ms, and CPU time per step of the worker, the Temporal server and this
// process (load.ts). Each run gets a fresh worker, so one run's leftovers never weigh on the next.
import type { BenchContext } from './context';
import { type LoadRun, runLoad, settle } from './load';
import { ratio } from './measure';
import { startSystem, type SystemName } from './systems';
import { fmtBytes, fmtNum, fmtRatio, PHASE_HEADERS, phaseCells, runCell, type Table } from './table';

interface ThroughputPoint {
  conversations: number;
  orchestrator: LoadRun;
  bare?: LoadRun;
  /** orchestrator steps/s ÷ bare steps/s. */
  ratio: number;
}

export interface ThroughputResult {
  steps: number;
  latencyMs: number;
  points: ThroughputPoint[];
}

/** Time a run may take: --run-timeout, and an equal share of what is left of --budget for the runs still to come. */
function deadlineFor(ctx: BenchContext, runsLeft: number[]): number {
  // Besides its deadline, a run costs a worker start, reading histories and ending what still runs.
  const setupMs = (conversations: number): number => 15_000 + conversations * 35;
  const left = ctx.budgetEnd - performance.now() - runsLeft.reduce((sum, c) => sum + setupMs(c), 0);
  return Math.max(20_000, Math.min(ctx.args.runTimeoutMs, left / runsLeft.length));
}

async function freshRun(
  ctx: BenchContext,
  name: SystemName,
  conversations: number,
  runsLeft: number[],
): Promise<LoadRun> {
  const { steps, latencyMs } = ctx.args;
  const system = await startSystem(ctx, name, `throughput-${conversations}`);
  try {
    const deadlineMs = deadlineFor(ctx, runsLeft);
    ctx.log(
      `throughput: ${conversations} × ${steps} steps at ${latencyMs} ms, ${name} (worker pid ${system.worker?.pid}, deadline ${(deadlineMs / 1000).toFixed(0)} s)`,
    );
    // Answered conversations stay open, idle (one timer each): ended only on a server we do not own.
    return await runLoad(ctx, system, {
      conversations,
      steps,
      latencyMs,
      deadlineMs,
      label: `throughput-${conversations}`,
      endOpen: !ctx.server.process,
    });
  } finally {
    runsLeft.shift();
    await system.stop();
    await settle(ctx);
  }
}

export async function runThroughput(ctx: BenchContext): Promise<ThroughputResult> {
  const points: ThroughputPoint[] = [];
  const runsLeft = ctx.args.conversations.flatMap((c) => (ctx.args.ceiling ? [c, c] : [c]));
  for (const conversations of ctx.args.conversations) {
    const orchestrator = await freshRun(ctx, 'ours', conversations, runsLeft);
    const bare = ctx.args.ceiling ? await freshRun(ctx, 'floor', conversations, runsLeft) : undefined;
    const point = {
      conversations,
      orchestrator,
      ...(bare && { bare }),
      ratio: bare ? ratio(orchestrator.stepsPerSecond, bare.stepsPerSecond) : Number.NaN,
    };
    points.push(point);
    ctx.log(
      `  ${conversations}: orchestrator ${orchestrator.stepsPerSecond.toFixed(1)} steps/s` +
        (bare ? `, bare ${bare.stepsPerSecond.toFixed(1)} steps/s, ratio ${point.ratio.toFixed(2)}` : ''),
    );
  }
  return { steps: ctx.args.steps, latencyMs: ctx.args.latencyMs, points };
}

const runsOfPoint = (p: ThroughputPoint): LoadRun[] => [p.orchestrator, ...(p.bare ? [p.bare] : [])];
const label = (run: LoadRun): string => (run.system === 'floor' ? 'bare ceiling' : 'orchestrator');

export function throughputTables(t: ThroughputResult, memory: boolean): Table[] {
  const runs = t.points.flatMap((p) =>
    runsOfPoint(p).map((run) => ({ p, run, key: [String(p.conversations), label(run)] })),
  );
  const tables: Table[] = [
    {
      title: `2. Throughput — one worker process, ${t.steps} steps per conversation, ${t.latencyMs} ms model latency`,
      headers: [
        'conv',
        'system',
        'done',
        'wall',
        'steps/s',
        'latency-bound',
        'ratio',
        'conv p50',
        'conv p95',
        'worker CPU ms/step',
        'server CPU ms/step',
        'bench CPU ms/step',
        'act. timeouts/histories',
        'update RPC timeouts',
      ],
      rows: runs.map(({ p, run, key }) => [
        ...key,
        `${run.completed}/${run.conversations}${run.timedOut ? ' (timeout)' : ''}${run.failed ? ` ${run.failed} failed` : ''}`,
        runCell.wall(run),
        runCell.stepsPerSecond(run),
        fmtNum(
          t.latencyMs > 0 ? (run.conversations * run.steps) / (((run.steps + 1) * t.latencyMs) / 1000) : Number.NaN,
        ),
        run.system === 'ours' ? fmtRatio(p.ratio) : '',
        runCell.p50(run),
        runCell.p95(run),
        runCell.worker(run),
        runCell.server(run),
        runCell.bench(run),
        `${run.history?.activityTimeouts ?? 0}/${run.history?.read ?? 0}`,
        String(run.rpcTimeouts),
      ]),
      notes: [
        'CPU ms/step: CPU time of the process during the run ÷ completed steps (bench = this process: client and the local Messages API server).',
        'act. timeouts: activity attempts the server handed out that never completed (lost under overload), retried after the heartbeat timeout.',
        ...runs
          .filter(({ run }) => run.firstError)
          .map(({ run }) => `${label(run)} at ${run.conversations}: first error: ${run.firstError}`),
      ],
    },
    {
      title: 'Where a step goes under load (mean ms per step over the histories read)',
      headers: ['conv', 'system', ...PHASE_HEADERS],
      rows: runs.map(({ run, key }) => [...key, ...phaseCells(run.history?.phases)]),
    },
  ];
  if (memory)
    tables.push({
      title: '4. Worker memory — RSS of the worker process, sampled every 200 ms during the throughput runs',
      headers: ['conv', 'system', 'RSS at start', 'peak RSS (sampled)', 'VmHWM', 'peak − start per conversation'],
      rows: runs.map(({ run, key }) => {
        const m = run.memory;
        const perConversation = m ? (m.peakRssBytes - m.idleRssBytes) / run.conversations : Number.NaN;
        return [
          ...key,
          ...[m?.idleRssBytes, m?.peakRssBytes, m?.highWaterMarkBytes, perConversation].map((b) =>
            fmtBytes(b ?? Number.NaN),
          ),
        ];
      }),
    });
  return tables;
}
