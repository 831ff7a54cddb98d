// What every section of the bench stands on: the Temporal server and a client, the local Messages API server, the
// workflow bundles, and the two kinds of worker process (conversations; the bare chain), each on its own task queue.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { ConversationClient } from '../../client/conversation-client';
import type { DevServer } from '../dev-server';
import type { MockAnthropic } from '../mock-anthropic/types';
import type { BenchArgs } from './args';
import type { Bundles } from './bundles';
import { type ChildWorker, startChildWorker } from './child-worker';

export interface BenchContext {
  args: BenchArgs;
  server: DevServer;
  client: Client;
  mock: MockAnthropic;
  bundles: Bundles;
  /** performance.now() by which the whole bench should be done (--budget): long runs are cut to fit. */
  budgetEnd: number;
  log(line: string): void;
}

export interface RunningWorker {
  worker: ChildWorker;
  taskQueue: string;
}

function baseEnv(ctx: BenchContext, taskQueue: string): Record<string, string> {
  return { TEMPORAL_ADDRESS: ctx.server.address, TEMPORAL_NAMESPACE: ctx.server.namespace, TEMPORAL_TASK_QUEUE: taskQueue };
}

/** `node --import tsx workers/main.ts`, as in production, against the local Messages API server. */
export async function startConversationWorker(ctx: BenchContext, label: string): Promise<RunningWorker & { conversations: ConversationClient }> {
  const taskQueue = `bench-${label}-${randomUUID().slice(0, 8)}`;
  const worker = await startChildWorker({
    entry: 'workers/main.ts',
    env: { ...baseEnv(ctx, taskQueue), ANTHROPIC_BASE_URL: ctx.mock.url, WORKFLOW_BUNDLE_PATH: ctx.bundles.conversation, TOOL_LATENCY_MS: '0' },
    ...(ctx.args.profileDir && { profileDir: ctx.args.profileDir }),
  });
  return { worker, taskQueue, conversations: new ConversationClient({ client: ctx.client, taskQueue }) };
}

/** The bare chain's worker (scripts/bench/bare-worker.ts), the same shape. */
export async function startBareWorker(ctx: BenchContext, label: string): Promise<RunningWorker> {
  const taskQueue = `bench-bare-${label}-${randomUUID().slice(0, 8)}`;
  const worker = await startChildWorker({
    entry: 'scripts/bench/bare-worker.ts',
    env: { ...baseEnv(ctx, taskQueue), WORKFLOW_BUNDLE_PATH: ctx.bundles.bare },
    ...(ctx.args.profileDir && { profileDir: ctx.args.profileDir }),
  });
  return { worker, taskQueue };
}

/** Terminates open workflows (conversations stay open awaiting the next message), a few at a time; errors ignored. */
export async function terminateAll(client: Client, workflowIds: readonly string[], parallel = 50): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < workflowIds.length) {
      const id = workflowIds[next++]!;
      await client.workflow.getHandle(id).terminate('benchmark finished').catch(() => undefined);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, workflowIds.length) }, lane));
}
