// SIGTERM is how a deployment stops a worker (docker compose stop, a rolling update). Running model and tool calls
// get WORKER_SHUTDOWN_GRACE_TIME to finish on the worker that runs them: they are not cancelled and run again
// elsewhere. The worker is the rigs' worker (workers/main.ts's runWorker, with the execution log) in a child process;
// "in flight" is seen, not guessed: the local server has received the model request, the tool wrote its start line.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { ConversationClient } from '../../client/conversation-client';
import { STOCK_QUESTION, STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import { startMessagesApi } from '../../testing/messages-api/server';
import type { MessagesApi } from '../../testing/messages-api/types';
import { attemptsOf, namespace, readExecutions, temporalAddress, uniquePrompt } from '../support/harness';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';
import { spawnWorker } from '../../scripts/worker-process';

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
  // A's call outlasts B's first call and the start of its tool with room to spare on a busy machine.
  mock.script(modelPrompt, [{ demo: true, delayMs: 3 * SLOW_MS }]);
  const toolPrompt = uniquePrompt("What's the weather in Tokyo?");
  const a = `graceful-model-${Date.now()}`;
  const b = `graceful-tool-${Date.now()}`;
  const options = { closeAfterFirstReply: true, timeouts: { modelHeartbeat: '10 seconds' } };
  const answers = Promise.all([
    conversations.sendMessage(a, modelPrompt, { start: { ...options, tools: STOCK_TOOLS } }),
    conversations.sendMessage(b, toolPrompt, { start: { ...options, tools: ['get_weather'] } }),
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

/** A worker (runWorker, as a service writes it) with one tool that ignores its abort signal for `ms`. */
function stubbornWorkerScript(ms: number): string {
  const root = join(__dirname, '..', '..');
  const file = join(mkdtempSync(join(tmpdir(), 'stubborn-')), 'worker.ts');
  writeFileSync(
    file,
    `import { z } from ${JSON.stringify(join(root, 'node_modules', 'zod'))};
import { defineTool } from ${JSON.stringify(join(root, 'activities', 'tool-definition'))};
import { runWorker } from ${JSON.stringify(join(root, 'workers', 'run-worker'))};
const stubborn = defineTool({
  name: 'stubborn_tool',
  description: 'Takes its time and does not listen.',
  input: z.object({}),
  timeout: '2 minutes',
  async run() {
    console.log('stubborn tool started');
    await new Promise((resolve) => setTimeout(resolve, ${ms})); // no signal: it cannot be cut short
    return 'done';
  },
});
runWorker({ tools: [stubborn] }).catch((err) => {
  console.error(err);
  process.exit(1);
});
`,
  );
  return file;
}

test('a tool that ignores its abort signal cannot keep a stopping worker up past WORKER_SHUTDOWN_FORCE_TIME', async () => {
  const taskQueue = `stubborn-${randomUUID()}`;
  const lines: string[] = [];
  const worker = await spawnWorker({
    entry: stubbornWorkerScript(30_000),
    env: {
      TEMPORAL_ADDRESS: temporalAddress,
      TEMPORAL_NAMESPACE: namespace,
      TEMPORAL_TASK_QUEUE: taskQueue,
      ANTHROPIC_BASE_URL: mock.url,
      ...(process.env.WORKFLOW_BUNDLE_PATH && { WORKFLOW_BUNDLE_PATH: process.env.WORKFLOW_BUNDLE_PATH }),
      WORKER_SHUTDOWN_GRACE_TIME: '2 seconds',
      WORKER_SHUTDOWN_FORCE_TIME: '5 seconds',
    },
    output: (line) => lines.push(line),
  });
  const conversations = new ConversationClient({
    client: new Client({ connection, namespace }),
    taskQueue,
    tools: ['stubborn_tool'],
  });
  const prompt = uniquePrompt('Take your time');
  mock.script(prompt, [
    { reply: { content: [{ type: 'tool_use', name: 'stubborn_tool', input: {} }], stop_reason: 'tool_use' } },
    { reply: { content: [{ type: 'text', text: 'Done.' }], stop_reason: 'end_turn' } },
  ]);
  const id = `stubborn-${randomUUID()}`;
  const reply = conversations.sendMessage(id, prompt, { start: { tools: ['stubborn_tool'] } }).catch(() => undefined);
  try {
    while (!lines.some((line) => line.includes('stubborn tool started'))) {
      assert.ok(worker.running, worker.tail());
      await sleep(50);
    }
    const signalled = Date.now();
    worker.child.kill('SIGTERM');
    const exit = await Promise.race([worker.exited, sleep(40_000).then(() => 'still running' as const)]);
    const took = Date.now() - signalled;
    if (exit === 'still running') assert.fail(`the worker still runs ${took} ms after SIGTERM:\n${worker.tail()}`);
    assert.notEqual(exit.code, 0, 'it exits non-zero: it did not stop cleanly');
    assert.equal(exit.signal, null, 'it exited by itself, not by a signal');
    assert.ok(took >= 4_500, `not before the force time (${took} ms)`);
    assert.ok(took < 5_000 + 7_000, `soon after the force time: ${took} ms (the tool would run 30 s)`);
    assert.ok(
      lines.some((line) => /did not stop within 5000 ms of SIGTERM .*abort signal/.test(line)),
      `a log line says why:\n${worker.tail()}`,
    );
  } finally {
    await worker.kill();
    await conversations.client.workflow
      .getHandle(id)
      .terminate('test over')
      .catch(() => undefined);
    await reply;
  }
});
