// `npm run soak`: many conversations at once, while things break. A mixed load of conversations (scenarios.ts: a fifth
// ask for a typed answer (zod schema, native and tool mode), a fifth have a turn budget (one the chain fits in, one it
// does not: `budget_exhausted` expected), a fifth are read by a stream reader that disconnects at random and
// re-attaches from its last offset; the rest are the ticker → price chain natively and in legacy XML, continue-as-new
// in the middle of a chain, multi-turn, approvals approved and rejected, tool failures) runs against a Temporal dev
// server and the local Messages API server (in this process), with transient API faults scripted into a share of the
// model calls, while worker PROCESSES (scripts/rig-worker.ts) are SIGKILLed at random and started again, and, with
// --server-kill-every, the Temporal server itself is SIGKILLed and restarted on the same database. At the end it prints
//
//   started         conversations started
//   completed       ended as the user expects (the right answer or typed answer, `budget_exhausted` under a budget
//                   too small, the approval honoured, `completed` after end()), with the count of each outcome
//   failed          ended otherwise (a typed failure, a wrong answer, a stream reading with a gap or a repeat)
//   lost            open at the deadline, but still making progress
//   duplicates      tool calls that ran again after the server had recorded their result, or were scheduled twice
//   stuck           open at the deadline and not moving (no new event in 15 s, nothing running): printed with its history
//   worker crashes  worker processes that exited without the soak asking (any code or signal but its own SIGKILLs):
//                   each is started again, and the first few are printed with their last lines
//   stream readers  offsets the readers missed or read twice
//   elapsed         from the first start to the last result
//
// then what happened: kills, faults, model requests, and every tool call that ran more than once, each re-run with its
// cause (a call in flight when its worker died runs again with the same idempotency key: at-least-once, allowed). A
// re-run with no cause fails the run like a duplicate. Exits 1 if anything was lost, duplicated, stuck, crashed, re-run
// without cause or missed by a reader (report.ts soakVerdict), 2 on a usage error. run-soak.ts is the run itself;
// prod-check runs it on the production topology.
//
//   npm run soak                                      200 conversations, mixed, 10% faults, a worker kill every ~20 s
//   npm run soak -- --conversations 1000 --server-kill-every 45s      the server killed too
//   npm run soak -- --worker-env WORKER_MAX_CACHED_WORKFLOWS=1        replay from cold: nearly every task replays
//   npm run soak -- --mix chain --kill-every off                      the chain only, faults only
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { startWorkerProcess } from '../../test/support/worker-process';
import { connectOrStartDevServer, type DevServer, startDevServer } from '../../testing/dev-server';
import { freePort } from '../../testing/free-port';
import { startMessagesApi } from '../../testing/messages-api/server';
import type { MessagesApi } from '../../testing/messages-api/types';
import { conversationBundleOptions } from '../../workers/workflow-bundles';
import { cleanUpOnSignal, runMain, UsageError } from '../script-main';
import { parseArgs } from './args';
import { runSoak } from './run-soak';

export { parseArgs, parseDuration } from './args';

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  if (!args) return 0;
  const t0 = Date.now();
  const log = (line: string): void =>
    void process.stderr.write(`[soak ${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);
  log(
    `${args.conversations} conversations (${args.mix}), fault rate ${args.faultRate}, seed ${args.seed}; ` +
      `${os.cpus().length} cores, load ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
  );

  const workDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'soak-'));
  const executionLog = path.join(workDir, 'executions.jsonl');
  const workerLog = path.join(workDir, 'workers.log');
  const workerOutput = fs.createWriteStream(workerLog);
  let outputClosed = false;
  let server: DevServer | undefined;
  let mock: MessagesApi | undefined;
  let cleanedUp: Promise<void> | undefined;
  const cleanup = (): Promise<void> =>
    (cleanedUp ??= (async () => {
      await mock?.close().catch(() => undefined);
      await server?.stop().catch((err: unknown) => log(`could not stop the dev server: ${String(err)}`));
      if (!outputClosed) await new Promise<void>((resolve) => workerOutput.end(() => resolve()));
      outputClosed = true;
      if (!args.keepLogs) await fsp.rm(workDir, { recursive: true, force: true });
    })());
  cleanUpOnSignal(cleanup, log);

  try {
    const bundleFile = process.env.WORKFLOW_BUNDLE_PATH || path.join(workDir, 'workflow-bundle.js');
    const killsServer = args.serverKillEveryMs > 0;
    if (killsServer && process.env.TEMPORAL_ADDRESS)
      throw new UsageError('--server-kill-every needs a server of its own: unset TEMPORAL_ADDRESS');
    const [devServer] = await Promise.all([
      // A server this run may kill must be its own, on a database file that survives the kill.
      killsServer
        ? startDevServer({ dbFile: path.join(workDir, 'temporal.sqlite'), log })
        : connectOrStartDevServer({ log }),
      process.env.WORKFLOW_BUNDLE_PATH
        ? Promise.resolve()
        : bundleWorkflowCode({ ...conversationBundleOptions(), logger: new DefaultLogger('WARN') }).then(({ code }) =>
            fsp.writeFile(bundleFile, code),
          ),
    ]);
    server = devServer;
    mock = await startMessagesApi();
    log(`dev server ${server.address}, local Messages API ${mock.url}; logs in ${workDir}`);
    const taskQueue = `soak-${randomUUID()}`;
    const { ok } = await runSoak(args, {
      address: server.address,
      namespace: server.namespace,
      taskQueue,
      mock,
      executionLog,
      workerLog,
      log,
      ...(killsServer && { killServer: async () => (await server!.kill(), await server!.restart()) }),
      async startWorker(workerEnv) {
        const metricsAddress = `127.0.0.1:${await freePort()}`;
        const process = await startWorkerProcess({
          temporalAddress: server!.address,
          namespace: server!.namespace,
          taskQueue,
          anthropicBaseUrl: mock!.url,
          executionLog,
          toolLatencyMs: args.toolLatencyMs,
          workflowBundlePath: bundleFile,
          readyTimeoutMs: 120_000,
          env: { WORKER_METRICS_ADDRESS: metricsAddress, ...workerEnv },
          output: (line) => void (!outputClosed && workerOutput.write(`${line}\n`)),
        });
        return { process, metricsUrl: `http://${metricsAddress}/metrics` };
      },
    });
    return ok ? 0 : 1;
  } finally {
    await cleanup();
  }
}

if (require.main === module) runMain(main);
