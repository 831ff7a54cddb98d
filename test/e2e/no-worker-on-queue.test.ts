// A client whose task queue no worker polls (the worker is down, or the queue's name is wrong): every call answers
// soon with `unavailable`, naming the task queue, instead of a raw gRPC error or a wait for the whole turn timeout.
// And where a worker does poll, the look costs one DescribeTaskQueue now and then, not one per message.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Client, Connection, type ConnectionOptions } from '@temporalio/client';
import { ConversationClient } from '../../client/conversation-client';
import type { ConversationInput } from '../../common/conversation-input';
import { CONVERSATION_WORKFLOW } from '../../common/conversation-types';
import { conversationOptionsSchema } from '../../common/options';
import { ConversationError } from '../../client/errors';
import { grpcStatusOf } from '../../client/grpc-status';
import { STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import { type Harness, namespace, startHarness, temporalAddress, uniquePrompt } from '../support/harness';

/** The gRPC methods the connection called, by name (e.g. DescribeTaskQueue). */
const calls: string[] = [];
let connection: Connection;
before(async () => {
  type Interceptor = NonNullable<ConnectionOptions['interceptors']>[number];
  const recording: Interceptor = (options, next) => {
    calls.push(options.method_definition.path.split('/').at(-1)!);
    return next(options) as ReturnType<Interceptor>;
  };
  connection = await Connection.connect({ address: temporalAddress, interceptors: [recording] });
});
after(async () => {
  await connection?.close();
});

/** A client of a task queue nobody polls; `tools` configured or (absent) asked of the workers. */
function clientOfEmptyQueue(tools?: string[]): ConversationClient {
  return new ConversationClient({
    client: new Client({ connection, namespace }),
    taskQueue: `nobody-polls-${randomUUID()}`,
    ...(tools && { tools }),
  });
}

/** A conversation started raw, with no worker there: the client itself starts none on a queue no worker polls. */
async function startRaw(client: ConversationClient): Promise<string> {
  const workflowId = `no-worker-${randomUUID()}`;
  const input: ConversationInput = { options: conversationOptionsSchema.parse({}) };
  await client.client.workflow.start(CONVERSATION_WORKFLOW, { workflowId, taskQueue: client.taskQueue, args: [input] });
  return workflowId;
}

/** The call fails with `unavailable` naming the task queue, within `withinMs`. */
async function unavailable(client: ConversationClient, call: () => Promise<unknown>, withinMs: number) {
  const started = Date.now();
  await assert.rejects(call(), (err: unknown) => {
    const cause = (err as { cause?: unknown }).cause;
    assert.ok(
      err instanceof ConversationError,
      `a ConversationError, not ${String(err).slice(0, 300)} (gRPC status ${grpcStatusOf(err)}; ${String(cause).slice(0, 300)})`,
    );
    assert.equal(err.code, 'unavailable', err.message);
    assert.ok(err.message.includes(`task queue "${client.taskQueue}"`), err.message);
    assert.match(err.message, /worker/);
    return true;
  });
  const took = Date.now() - started;
  assert.ok(took < withinMs, `answered in ${took} ms (at most ${withinMs})`);
}

describe('no worker polls the task queue', () => {
  test('getState and getTranscript answer unavailable, naming the task queue, not a raw DEADLINE_EXCEEDED', async () => {
    const client = clientOfEmptyQueue([]);
    const id = await startRaw(client);
    // The client looks for a worker while the query goes out, and answers as soon as it found none (the server would
    // hold the query for one until its own deadline, 30 s)…
    await unavailable(client, () => client.getState(id), 12_000);
    // …or the caller's deadline ends it sooner. (Another conversation: the server holds one query per run at a time,
    // and may still hold the first for a moment.)
    const other = await startRaw(client);
    await unavailable(
      client,
      () => client.client.withDeadline(Date.now() + 3_000, () => client.getTranscript(other)),
      12_000,
    );
    await unavailable(client, () => client.startConversation({ id: `no-worker-start-${randomUUID()}` }), 12_000);
    for (const workflowId of [id, other]) await client.client.workflow.getHandle(workflowId).terminate('test over');
  });

  test('sendMessage answers unavailable within seconds, with tools and without, asked of the workers or configured', async () => {
    const asked = clientOfEmptyQueue();
    const configured = clientOfEmptyQueue(STOCK_TOOLS);
    const within = 12_000; // the client waits 5 s for a worker that is starting; the rest is a busy machine's slack
    await Promise.all([
      unavailable(asked, () => asked.sendMessage(`nw-${randomUUID()}`, 'Hello', { start: { tools: [] } }), within),
      unavailable(
        asked,
        () => asked.sendMessage(`nw-${randomUUID()}`, 'Hello', { start: { tools: STOCK_TOOLS } }),
        within,
      ),
      unavailable(
        configured,
        () => configured.sendMessage(`nw-${randomUUID()}`, 'Hello', { start: { tools: [] } }),
        within,
      ),
      unavailable(
        configured,
        () => configured.submitMessage(`nw-${randomUUID()}`, 'Hello', { start: { tools: [] } }),
        within,
      ),
    ]);
    // A conversation that exists (started without a message), and is sent one while no worker is there.
    const id = await startRaw(configured);
    await unavailable(configured, () => configured.sendMessage(id, 'Hello'), within);
    await configured.client.workflow.getHandle(id).terminate('test over');
  });
});

describe('a worker polls the task queue', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
  });

  test('messages go through; the first one looks for the worker, the next ones trust what it saw', async () => {
    const client = new ConversationClient({
      client: new Client({ connection, namespace }),
      taskQueue: h.taskQueue,
      tools: STOCK_TOOLS,
    });
    const id = `worker-seen-${randomUUID()}`;
    const first = await client.sendMessage(id, uniquePrompt('Hello there'), { start: { tools: [] } });
    // The first message looked (more than once if the worker had not polled yet); the next ones trust what it saw.
    const before = calls.length;
    const second = await client.sendMessage(id, uniquePrompt('Hello again'));
    const third = await client.submitMessage(id, uniquePrompt('And once more'));
    assert.deepEqual([first.turn, second.turn, third.turn], [1, 2, 3]);
    assert.ok(calls.includes('DescribeTaskQueue'), 'the first message looked for a worker');
    assert.deepEqual(
      calls.slice(before).filter((name) => name === 'DescribeTaskQueue'),
      [],
    );
    await client.end(id);
  });
});
