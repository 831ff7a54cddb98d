// What every section of the bench stands on: the Temporal server and a client, the local Messages API server, the
// workflow bundles, and the two kinds of worker process (conversations; the bare chain), each on its own task queue.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { ConversationClient } from '../../client/conversation-client';
import type { DevServer } from '../../testing/dev-server';
import type { MessagesApi } from '../../testing/messages-api/types';
import { spawnWorker, type WorkerProcess } from '../worker-process';
import type { BenchArgs } from './args';
import type { Bundles } from './bundles';

export interface BenchContext {
  args: BenchArgs;
  server: DevServer;
  client: Client;
  mock: MessagesApi;
  bundles: Bundles;
  /** performance.now() by which the whole bench should be done (--budget): long runs are cut to fit. */
  budgetEnd: number;
  log(line: string): void;
}

export interface RunningWorker {
  worker: WorkerProcess;
  taskQueue: string;
}

/** Passed through from the bench's environment to every worker, so a tuning can be tried without code changes. */
const TUNING_VARIABLES = [
  'WORKER_MAX_CONCURRENT_ACTIVITIES',
  'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS',
  'WORKER_MAX_CACHED_WORKFLOWS',
  'NODE_OPTIONS',
  'UV_THREADPOOL_SIZE',
];

/** A worker process (its own, so its memory and CPU can be read from /proc/<pid> without the bench's mixed in). */
function startBenchWorker(
  ctx: BenchContext,
  entry: string,
  taskQueue: string,
  env: Record<string, string>,
): Promise<WorkerProcess> {
  const tuning = Object.fromEntries(
    TUNING_VARIABLES.flatMap((name) => (process.env[name] ? [[name, process.env[name]]] : [])),
  );
  return spawnWorker({
    entry,
    env: {
      ...tuning,
      TEMPORAL_ADDRESS: ctx.server.address,
      TEMPORAL_NAMESPACE: ctx.server.namespace,
      TEMPORAL_TASK_QUEUE: taskQueue,
      ...env,
    },
    readyTimeoutMs: 120_000,
    stopTimeoutMs: 20_000,
    ...(ctx.args.profileDir && { profileDir: ctx.args.profileDir }),
  });
}

/** `node --import tsx scripts/rig-worker.ts` (the production worker plus the rigs' instrumentation), against the local Messages API server. */
export async function startConversationWorker(
  ctx: BenchContext,
  label: string,
): Promise<RunningWorker & { conversations: ConversationClient }> {
  const taskQueue = `bench-${label}-${randomUUID().slice(0, 8)}`;
  const worker = await startBenchWorker(ctx, 'scripts/rig-worker.ts', taskQueue, {
    ANTHROPIC_BASE_URL: ctx.mock.url,
    WORKFLOW_BUNDLE_PATH: ctx.bundles.conversation,
    TOOL_LATENCY_MS: '0',
  });
  return { worker, taskQueue, conversations: new ConversationClient({ client: ctx.client, taskQueue }) };
}

/** The bare chain's worker (scripts/bench/bare-worker.ts), the same shape. */
export async function startBareWorker(ctx: BenchContext, label: string): Promise<RunningWorker> {
  const taskQueue = `bench-bare-${label}-${randomUUID().slice(0, 8)}`;
  const worker = await startBenchWorker(ctx, 'scripts/bench/bare-worker.ts', taskQueue, {
    WORKFLOW_BUNDLE_PATH: ctx.bundles.bare,
  });
  return { worker, taskQueue };
}

/** Terminates open workflows (conversations stay open awaiting the next message), a few at a time; errors ignored. */
export async function terminateAll(client: Client, workflowIds: readonly string[], parallel = 50): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < workflowIds.length) {
      const id = workflowIds[next++]!;
      await client.workflow
        .getHandle(id)
        .terminate('benchmark finished')
        .catch(() => undefined);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, workflowIds.length) }, lane));
}
