// What a test that SIGKILLs a worker mid-chain stands on: a local Messages API, a client, and worker processes
// (production's runWorker, test/support/worker-process.ts) on a task queue of their own. Call it inside a describe:
// it registers the before/after hooks that start and stop them.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { ConversationClient } from '../../client/conversation-client';
import { startMessagesApi } from '../../testing/messages-api/server';
import type { MessagesApi } from '../../testing/messages-api/types';
import { namespace, temporalAddress } from './harness';
import { waitUntil } from './wait-until';
import { startWorkerProcess, type WorkerProcess } from './worker-process';

export interface CrashRig {
  readonly mock: MessagesApi;
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

export function crashRig(name: string): CrashRig {
  const taskQueue = `${name}-${randomUUID()}`;
  const executionLog = join(mkdtempSync(join(tmpdir(), `${name}-`)), 'executions.jsonl');
  const workers: WorkerProcess[] = [];
  let connection: Connection | undefined;
  const rig = {} as { -readonly [K in keyof CrashRig]: CrashRig[K] };

  before(async () => {
    rig.mock = await startMessagesApi();
    connection = await Connection.connect({ address: temporalAddress });
    rig.client = new Client({ connection, namespace });
    rig.conversations = new ConversationClient({ client: rig.client, taskQueue });
  });
  after(async () => {
    for (const worker of workers) await worker.kill();
    await connection?.close();
    await rig.mock?.close();
  });

  rig.startWorker = async () => {
    const worker = await startWorkerProcess({ taskQueue, anthropicBaseUrl: rig.mock.url, executionLog });
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
