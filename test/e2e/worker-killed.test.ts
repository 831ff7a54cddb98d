// The only worker of a task queue dies the hard way (SIGKILL: no goodbye to the server), and the server goes on
// listing its poller for minutes. Every way in — the client, the CLI, the gateway — answers `unavailable` within
// seconds once that poller is older than a live one can be (a poll lasts at most the server's long poll, a minute),
// and a message creates nothing. In the minute before, a query answers `unavailable` when the server gives up on it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import { ConversationClient, LIVE_POLLER_MS } from '../../client/conversation-client';
import { ConversationError } from '../../client/errors';
import { type Gateway, startGateway } from '../../gateway/gateway-server';
import { startMessagesApi } from '../../testing/messages-api/server';
import type { MessagesApi } from '../../testing/messages-api/types';
import { namespace, temporalAddress, uniquePrompt } from '../support/harness';
import { startWorkerProcess } from '../support/worker-process';

const run = promisify(execFile);
const TOKEN = 'worker-killed-token-0123456789';

describe('the only worker was SIGKILLed', () => {
  const taskQueue = `worker-killed-${randomUUID()}`;
  /** A conversation that had a turn while the worker lived. */
  const id = `worker-killed-${randomUUID()}`;
  let api: MessagesApi;
  let connection: Connection;
  let temporalClient: Client;
  /** A client whose turn timeout is short: a message that waits for the dead worker fails this test in 20 s, not 15 min. */
  let client: ConversationClient;
  let gateway: Gateway;
  let killedAt: number;

  before(async () => {
    api = await startMessagesApi();
    connection = await Connection.connect({ address: temporalAddress });
    temporalClient = new Client({ connection, namespace });
    client = new ConversationClient({ client: temporalClient, taskQueue, turnTimeoutMs: 20_000 });
    gateway = await startGateway({ conversations: client, token: TOKEN, namespace });
    const worker = await startWorkerProcess({
      taskQueue,
      anthropicBaseUrl: api.url,
      executionLog: join(mkdtempSync(join(tmpdir(), 'worker-killed-')), 'executions.jsonl'),
      readyTimeoutMs: 180_000, // a busy machine: the process loads the SDKs before it polls
    });
    await client.sendMessage(id, uniquePrompt('Hello there'), { start: { tools: [] } });
    await worker.kill();
    killedAt = Date.now();
  });
  after(async () => {
    await gateway?.close();
    await temporalClient?.workflow
      .getHandle(id)
      .terminate('test over')
      .catch(() => undefined);
    await connection?.close();
    await api?.close();
  });

  /** The call rejects with `unavailable` naming the task queue, within `withinMs`. */
  async function unavailable(call: () => Promise<unknown>, withinMs: number): Promise<void> {
    const started = Date.now();
    await assert.rejects(call(), (err: unknown) => {
      assert.ok(err instanceof ConversationError, `a ConversationError, not ${String(err).slice(0, 300)}`);
      assert.equal(err.code, 'unavailable', err.message);
      assert.ok(err.message.includes(`task queue "${client.taskQueue}"`), err.message);
      return true;
    });
    const took = Date.now() - started;
    assert.ok(took < withinMs, `answered in ${took} ms (at most ${withinMs})`);
  }

  test('just after the kill (its poller still counts), getState answers unavailable once the server gives up', async () => {
    // The server waits for a worker on the conversation's sticky queue, then on the task queue, about 30 s in all,
    // and refuses with FAILED_PRECONDITION "no poller seen for task queue recently".
    await unavailable(() => client.getState(id), 60_000);
  });

  describe('once the dead poller is older than a live one can be', () => {
    before(async () => {
      // What the server lists: the dead worker's poller, its last access the moment its polls were cut.
      for (;;) {
        const { pollers } = await temporalClient.workflowService.describeTaskQueue({
          namespace,
          taskQueue: { name: client.taskQueue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
          taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
        });
        assert.ok(pollers.length > 0, 'the server still lists the dead worker');
        const newest = Math.max(...pollers.map((poller) => optionalTsToMs(poller.lastAccessTime) ?? 0));
        if (Date.now() - newest > LIVE_POLLER_MS + 1_000) break;
        assert.ok(Date.now() - killedAt < 5 * 60_000, 'the poller aged as a dead one does');
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    });

    test('the client: getState, getTranscript and a message to the conversation answer unavailable in seconds', async () => {
      const fresh = new ConversationClient({
        client: temporalClient,
        taskQueue: client.taskQueue,
        turnTimeoutMs: 20_000,
      });
      await unavailable(() => fresh.getState(id), 15_000);
      await unavailable(() => fresh.getTranscript(id), 15_000);
      await unavailable(() => fresh.sendMessage(id, 'Are you there?'), 15_000);
      await unavailable(() => fresh.awaitTurn(id, 1), 15_000);
    });

    test('a message that would start a conversation answers unavailable in seconds, and creates nothing', async () => {
      const fresh = new ConversationClient({
        client: temporalClient,
        taskQueue: client.taskQueue,
        turnTimeoutMs: 20_000,
      });
      const newId = `worker-killed-new-${randomUUID()}`;
      await unavailable(() => fresh.sendMessage(newId, 'Hello', { start: { tools: [] } }), 15_000);
      await unavailable(() => fresh.submitMessage(newId, 'Hello', { start: { tools: [] } }), 15_000);
      await unavailable(() => fresh.startConversation({ id: newId, firstMessage: 'Hello' }), 15_000);
      await assert.rejects(temporalClient.workflow.getHandle(newId).describe(), { name: 'WorkflowNotFoundError' });
    });

    test('the CLI: {error:{code,message}} with --json, one line without', async () => {
      const cli = (...args: string[]) =>
        run(process.execPath, ['--import', 'tsx', join(__dirname, '..', '..', 'client', 'cli.ts'), ...args], {
          env: { ...process.env, TEMPORAL_ADDRESS: temporalAddress, TEMPORAL_TASK_QUEUE: client.taskQueue },
        }).then(
          () => assert.fail('the CLI exited 0'),
          (err: { code: number; stdout: string; stderr: string }) => err,
        );
      const started = Date.now();
      const json = await cli('state', id, '--json');
      assert.ok(Date.now() - started < 25_000, `answered in ${Date.now() - started} ms`);
      assert.equal(json.code, 1);
      const { error } = JSON.parse(json.stdout) as { error: { code: string; message: string } };
      assert.equal(error.code, 'unavailable');
      assert.match(error.message, /task queue/);
      const plain = await cli('send', id, 'Are you there?');
      assert.equal(plain.code, 1);
      // The error is one line (after the conversation's Web UI link), with no stack trace.
      assert.match(plain.stderr, /^error \(unavailable\): .*task queue.*\n$/m);
      assert.doesNotMatch(plain.stderr, /^\s+at /m);
    });

    test('the gateway: 503 unavailable for a read and for a message, and the message creates nothing', async () => {
      const auth = { authorization: `Bearer ${TOKEN}` };
      const state = await fetch(`${gateway.url}/api/conversations/${id}`, { headers: auth });
      assert.equal(state.status, 503);
      assert.equal(((await state.json()) as { error: { code: string } }).error.code, 'unavailable');
      const newId = `worker-killed-gw-${randomUUID()}`;
      const sent = await fetch(`${gateway.url}/api/conversations/${newId}/messages`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'Hello', start: { tools: [] } }),
      });
      assert.equal(sent.status, 503);
      assert.equal(sent.headers.get('retry-after'), '5');
      assert.equal(((await sent.json()) as { error: { code: string } }).error.code, 'unavailable');
      await assert.rejects(temporalClient.workflow.getHandle(newId).describe(), { name: 'WorkflowNotFoundError' });
    });
  });
});
