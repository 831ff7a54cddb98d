// SIGTERM is how a deployment stops a worker (docker compose stop, a rolling update). Running model and tool calls
// get WORKER_SHUTDOWN_GRACE_TIME to finish on the worker that runs them: they are not cancelled and run again
// elsewhere. The worker is the rigs' worker (workers/main.ts's runWorker, with the execution log) in a child process;
// "in flight" is seen, not guessed: the local server has received the model request, the tool wrote its start line.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { ConversationClient } from '../../client/conversation-client';
import { STOCK_QUESTION, STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import { startMessagesApi } from '../../testing/messages-api/server';
import type { MessagesApi } from '../../testing/messages-api/types';
import { attemptsOf, namespace, readExecutions, temporalAddress, uniquePrompt } from '../support/harness';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const SLOW_MS = 4_000;

let mock: MessagesApi;
let connection: Connection;
before(async () => {
  mock = await startMessagesApi();
  connection = await Connection.connect({ address: temporalAddress });
});
after(async () => {
  await connection?.close();
  await mock?.close();
});

test('on SIGTERM a model call and a tool call in flight finish on their worker, within the grace time', async () => {
  const taskQueue = `graceful-${randomUUID()}`;
  const executionLog = join(mkdtempSync(join(tmpdir(), 'graceful-')), 'executions.jsonl');
  const start = (): Promise<WorkerProcess> =>
    startWorkerProcess({
      taskQueue,
      anthropicBaseUrl: mock.url,
      executionLog,
      toolLatencyMs: SLOW_MS,
      env: { WORKER_SHUTDOWN_GRACE_TIME: '30 seconds' },
    });
  const conversations = new ConversationClient({
    client: new Client({ connection, namespace }),
    taskQueue,
    tools: ['get_ticker_symbol', 'get_current_stock_price', 'get_weather'],
  });
  const first = await start();

  // A: its first model call is slow. B: its tool is slow (every tool waits TOOL_LATENCY_MS).
  const modelPrompt = uniquePrompt(STOCK_QUESTION);
  mock.script(modelPrompt, [{ demo: true, delayMs: 2 * SLOW_MS }]);
  const toolPrompt = uniquePrompt("What's the weather in Tokyo?");
  const a = `graceful-model-${Date.now()}`;
  const b = `graceful-tool-${Date.now()}`;
  const options = { closeAfterFirstReply: true, timeouts: { modelHeartbeat: '10 seconds' } };
  const answers = Promise.all([
    conversations.sendMessage(a, modelPrompt, { ...options, tools: STOCK_TOOLS }),
    conversations.sendMessage(b, toolPrompt, { ...options, tools: ['get_weather'] }),
  ]);
  while (
    mock.requestsFor(modelPrompt).length === 0 ||
    !readExecutions(executionLog, b).some((e) => e.event === 'start')
  )
    await sleep(50);
  const history = await conversations.client.workflow.getHandle(a).fetchHistory();
  assert.ok(
    !history.events?.some((e) => e.activityTaskCompletedEventAttributes),
    'the model call is still in flight at SIGTERM (the machine was too slow to overlap them; the test proves nothing)',
  );
  await first.stop(60_000); // SIGTERM; SIGKILL only if it has not exited by then
  assert.deepEqual(await first.exited, { code: 0, signal: null }, 'the worker exited by itself');
  assert.equal(
    mock.requestsFor(modelPrompt).length,
    1,
    'the model was asked once: the call was not cut off and retried',
  );
  assert.deepEqual(
    readExecutions(executionLog, b).map((e) => [e.event, e.pid]),
    [
      ['start', first.pid],
      ['finish', first.pid],
    ],
    'the tool finished on the worker that ran it',
  );

  // Another worker takes the conversations on from there; nothing ran twice.
  const second = await start();
  try {
    const [replyA, replyB] = await answers;
    assert.match(replyA.text, /38\.50/);
    assert.equal(
      mock.requestsFor(modelPrompt).length,
      3,
      "the chain's three model calls, none cut off and asked again",
    );
    assert.match(replyB.text, /Tokyo/);
    for (const id of [a, b]) {
      const attempts = await attemptsOf(conversations.client, id);
      assert.deepEqual(
        attempts.filter((x) => x.attempt > 1),
        [],
        `${id}: no activity was tried again`,
      );
      assert.ok(attempts[0]!.identity.startsWith(`${first.pid}@`), `${id}: the first worker ran the call in flight`);
    }
    assert.equal(readExecutions(executionLog, b, 'get_weather').filter((e) => e.event === 'start').length, 1);
  } finally {
    await second.kill();
  }
});
