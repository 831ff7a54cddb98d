// `npm run bench`: how much durability costs. Against a real Temporal dev server (TEMPORAL_ADDRESS is reused when it
// answers) and the local Messages API server with a configurable model latency, it measures
//   1. overhead per chain step, orchestrator vs a plain in-process loop on the same SDK, server and tools;
//   2. throughput of C concurrent conversations on one worker process vs the bare-activity ceiling;
//   3. history growth per chain step;
//   4. the worker's peak RSS (sampled during 2);
//   5. input tokens per call with prompt caching on and off;
//   6. streaming replies: token → client latency, history bytes per model call and throughput, on vs off;
//   7. side by side (peer): the same load on ours, @temporalio/ai-sdk and the plain Temporal chain (the floor);
//   8. the guard: exit code 1 when the cost per step grew past scripts/bench/baseline.json (--update-baseline);
//   9. sub-agents: the parent's history per sub-agent call, 2 parallel sub-agents vs 2 sequential tool calls, and a
//      sub-agent call's start overhead over a plain tool call (`npm run bench:agents`).
// Every load runs through load.ts and every report is built from tables (table.ts). Prints the tables and PASS/FAIL
// per target, and writes results/bench-<time>.json and .html (inline SVG), plus results/latest.json and latest.html.
// `npm run bench -- --help` for the flags.
import os from 'node:os';
import { runAgents } from './agents';
import { parseArgs } from './args';
import { progressLog, withBench, writeResults } from './context';
import { runCost } from './cost';
import { runGuard } from './guard';
import { runHistoryGrowth } from './history-growth';
import { runOverhead } from './overhead';
import { machineInfo } from './machine-info';
import { type BenchResults, checkTargets, gitState, htmlReport, textReport } from './report';
import { runSideBySide } from './side-by-side';
import { runStreaming } from './streaming';
import { runThroughput } from './throughput';
import { runMain } from '../script-main';

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  if (!args) return 0;
  const started = new Date();
  const loadAverageStart = os.loadavg();
  const log = progressLog('bench', started.getTime());
  log(
    `sections: ${[...args.only].join(', ')}; load average ${loadAverageStart.map((l) => l.toFixed(2)).join(' ')} on ${os.cpus().length} cores`,
  );
  // The floor runs in the overhead and throughput sections (with the ceiling on), the side by side and the guard.
  const needBare =
    (args.ceiling && (args.only.has('throughput') || args.only.has('overhead'))) ||
    args.only.has('peer') ||
    args.only.has('guard');
  return withBench({ args, log, bundles: needBare ? 'with-bare' : 'conversation' }, async (ctx) => {
    const results: Omit<BenchResults, 'targets' | 'finishedAt' | 'durationMs' | 'machine'> = {
      startedAt: started.toISOString(),
      git: gitState(),
      args: { ...args, only: [...args.only] },
      temporal: {
        address: ctx.server.address,
        namespace: ctx.server.namespace,
        startedByBench: ctx.server.process !== undefined,
      },
    };
    // Cheap sections first, so a slow throughput run never hides them.
    if (args.only.has('overhead')) results.overhead = await runOverhead(ctx);
    if (args.only.has('history')) results.history = await runHistoryGrowth(ctx);
    if (args.only.has('cost')) results.cost = await runCost(ctx);
    if (args.only.has('agents')) results.agents = await runAgents(ctx);
    const side = { conversations: args.peerConversations, lengths: args.peerSteps, rounds: args.rounds };
    if (args.only.has('peer')) results.sideBySide = await runSideBySide(ctx, ['ours', 'peer', 'floor'], side);
    if (args.only.has('guard')) {
      // Its own runs, ours and the floor only, whether or not the side by side ran: the baseline was measured so.
      const runs = await runSideBySide(ctx, ['ours', 'floor'], side);
      const machine = machineInfo(loadAverageStart);
      results.guard = await runGuard(runs, { update: args.updateBaseline, machine, commit: results.git?.commit });
    }
    if (args.only.has('streaming')) results.streaming = await runStreaming(ctx);
    if (args.only.has('throughput')) results.throughput = await runThroughput(ctx);

    const finished = new Date();
    const complete: BenchResults = {
      ...results,
      finishedAt: finished.toISOString(),
      durationMs: finished.getTime() - started.getTime(),
      machine: machineInfo(loadAverageStart),
      targets: checkTargets(results),
    };
    process.stdout.write(`${textReport(complete)}\n`);
    const files = { json: JSON.stringify(complete, null, 1), html: htmlReport(complete) };
    const written = await writeResults(args.outDir, 'bench', started, files, true);
    process.stdout.write(
      `\nWrote ${written} (also latest.json / latest.html) in ${(complete.durationMs / 1000).toFixed(0)} s.\n`,
    );
    // Conversations cut at a throughput deadline leave client calls retrying; once their channel is closed,
    // @temporalio/client's retry timer throws "Channel has been shut down" from a timer. The results are written:
    // that error means nothing here and must not turn a finished run into a crash.
    process.on('uncaughtException', (err) => {
      if (err instanceof Error && err.message === 'Channel has been shut down') return;
      throw err;
    });
    if (!complete.guard || complete.guard.pass) return 0;
    process.stdout.write('FAIL: the guard found a cost per step past its margin (see the Guard table above).\n');
    return 1;
  });
}

if (require.main === module) runMain(main);
