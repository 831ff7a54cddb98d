// What a test that SIGKILLs a worker mid-chain stands on: a local Messages API, a client, and worker processes
// (production's runWorker, test/support/worker-process.ts) on a task queue of their own. Call it inside a describe:
// it registers the before/after hooks that start and stop them. With `ownServer` the rig also starts a Temporal dev
// server of its own (not the test run's shared one), which a test may SIGKILL and restart.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { ConversationClient } from '../../client/conversation-client';
import { type DevServer, startDevServer } from '../../testing/dev-server';
import { startMessagesApi } from '../../testing/messages-api/server';
import type { MessagesApi } from '../../testing/messages-api/types';
import { namespace, temporalAddress } from './harness';
import { waitUntil } from './wait-until';
import { startWorkerProcess, type WorkerProcess } from './worker-process';

export interface CrashRigOptions {
  /** More variables for every worker process the rig starts (e.g. RIG_AGENT_TOOLS, TOOL_LATENCY_MS). */
  workerEnv?: Record<string, string>;
  /** A dev server of the rig's own, on a temporary SQLite file (default: the test run's shared server). */
  ownServer?: boolean;
}

export interface CrashRig {
  readonly mock: MessagesApi;
  /** The rig's own dev server, when `ownServer` asked for one. */
  readonly server?: DevServer;
  /** Where the workers' tools append their JSON lines (readExecutions). */
  readonly executionLog: string;
  readonly client: Client;
  readonly conversations: ConversationClient;
  /** Starts a worker process on the rig's task queue (once the previous one, if any, is gone). */
  startWorker(): Promise<WorkerProcess>;
  /**
   * Waits until the Messages API has had `requests` requests for `prompt` (the last one hanging in the worker), then
   * SIGKILLs the worker and starts a fresh one.
   */
  killAtRequest(prompt: string, requests: number): Promise<void>;
}

export function crashRig(name: string, options: CrashRigOptions = {}): CrashRig {
  const taskQueue = `${name}-${randomUUID()}`;
  const executionLog = join(mkdtempSync(join(tmpdir(), `${name}-`)), 'executions.jsonl');
  const workers: WorkerProcess[] = [];
  let connection: Connection | undefined;
  const rig = { executionLog } as { -readonly [K in keyof CrashRig]: CrashRig[K] };

  before(async () => {
    rig.mock = await startMessagesApi();
    if (options.ownServer) {
      rig.server = await startDevServer({
        ...(process.env.TEMPORAL_CLI_PATH && { cliPath: process.env.TEMPORAL_CLI_PATH }),
      });
    }
    connection = await Connection.connect({ address: rig.server?.address ?? temporalAddress });
    rig.client = new Client({ connection, namespace: rig.server?.namespace ?? namespace });
    rig.conversations = new ConversationClient({ client: rig.client, taskQueue });
  });
  after(async () => {
    for (const worker of workers) await worker.kill();
    await connection?.close();
    await rig.mock?.close();
    await rig.server?.stop();
  });

  rig.startWorker = async () => {
    const worker = await startWorkerProcess({
      ...(rig.server && { temporalAddress: rig.server.address, namespace: rig.server.namespace }),
      taskQueue,
      anthropicBaseUrl: rig.mock.url,
      executionLog,
      ...(options.workerEnv && { env: options.workerEnv }),
    });
    workers.push(worker);
    return worker;
  };
  rig.killAtRequest = async (prompt, requests) => {
    await waitUntil(`request ${requests}`, () => rig.mock.requestsFor(prompt).length >= requests);
    const running = workers.at(-1);
    assert.ok(running, 'no worker runs');
    await running.kill();
    assert.equal((await running.exited).signal, 'SIGKILL');
    await rig.startWorker();
  };
  return rig;
}
