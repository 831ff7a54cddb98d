// What every section of the bench stands on: the Temporal server and a client, the local Messages API server, the
// workflow bundles, and worker processes (systems.ts says which), each on its own task queue.
import type { Client } from '@temporalio/client';
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

/** Passed through from the bench's environment to every worker, so a tuning can be tried without code changes. */
const TUNING_VARIABLES = [
  'WORKER_MAX_CONCURRENT_ACTIVITIES',
  'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS',
  'WORKER_MAX_CACHED_WORKFLOWS',
  'NODE_OPTIONS',
  'UV_THREADPOOL_SIZE',
];

/** A worker process (its own, so its memory and CPU can be read from /proc/<pid> without the bench's mixed in). */
export function startBenchWorker(
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
