// Crashes, for real: the worker is `workers/main.ts` in a child process of its own and is ended with SIGKILL (no
// shutdown, no goodbye to the server), the Temporal dev server is SIGKILLed and restarted on the same SQLite file.
// "During" is never guessed with a timer: a model call is made slow by the local server's script and we wait until
// the server has received it; a tool is made slow by TOOL_LATENCY_MS and we wait for its `start` line in the
// execution log, which the tools write and this process reads (it outlives every worker).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { ConversationClient } from '../../client/conversation-client';
import type { ConversationResult } from '../../common/conversation-types';
import { type DevServer, startDevServer } from '../../testing/dev-server';
import { startMessagesApi } from '../../testing/messages-api/server';
import { STOCK_QUESTION, STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import type { MessagesApi, ScriptStep } from '../../testing/messages-api/types';
import { activitiesOf, attemptsOf, namespace, readExecutions, temporalAddress, uniquePrompt } from '../support/harness';
import { waitUntil } from '../support/wait-until';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';

const CHAIN = ['callModel', 'get_ticker_symbol', 'callModel', 'get_current_stock_price', 'callModel'];
/** A dead worker is noticed within this (the tools keep their default 10 s heartbeat timeout). */
const CONVERSATION_OPTIONS = {
  tools: STOCK_TOOLS,
  closeAfterFirstReply: true,
  timeouts: { modelHeartbeat: '2 seconds' },
};
/** A model call that is "in flight" stays so far longer than any test waits; the retry gets the normal demo reply. */
const SLOW_MODEL_MS = 120_000;

type Execution = ReturnType<typeof readExecutions>[number];

const tempDirs: string[] = [];
after(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

function newExecutionLog(): string {
  const dir = mkdtempSync(join(tmpdir(), 'crash-tools-'));
  tempDirs.push(dir);
  return join(dir, 'executions.jsonl');
}

describe('the worker process is SIGKILLed at each point of the ticker → price chain; a fresh worker takes over', () => {
  // Five conversations, one per kill point, all in position at the same moment; then ONE SIGKILL of the worker
  // process that runs all five, and a second worker process (no tool latency) finishes them.
  //
  // The first worker runs every tool with TOOL_LATENCY_MS, so a tool is in flight for that long after its `start`.
  // Conversations whose kill point is later in the chain go through their tools in the first worker first, which
  // takes that latency per tool: they are started early, the others are started once those are in position.
  const TOOL_LATENCY_MS = 15_000;
  const points = [
    'first model call',
    'get_ticker_symbol',
    'second model call',
    'get_current_stock_price',
    'final model call',
  ] as const;
  type Point = (typeof points)[number];
  const slowCall: Partial<Record<Point, number>> = {
    'first model call': 1,
    'second model call': 2,
    'final model call': 3,
  };

  let mock: MessagesApi;
  let connection: Connection;
  let client: Client;
  let conversations: ConversationClient;
  let first: WorkerProcess | undefined;
  let second: WorkerProcess | undefined;
  let firstExit: { code: number | null; signal: NodeJS.Signals | null };
  const executionLog = newExecutionLog();
  const taskQueue = `crash-${randomUUID()}`;
  const runs = new Map<Point, { id: string; prompt: string; result?: ConversationResult }>();

  before(async () => {
    mock = await startMessagesApi();
    connection = await Connection.connect({ address: temporalAddress });
    client = new Client({ connection, namespace });
    conversations = new ConversationClient({ client, taskQueue });
    const worker = { taskQueue, anthropicBaseUrl: mock.url, executionLog };
    first = await startWorkerProcess({ ...worker, toolLatencyMs: TOOL_LATENCY_MS });

    const start = async (point: Point): Promise<void> => {
      const prompt = uniquePrompt(STOCK_QUESTION);
      const n = slowCall[point];
      if (n !== undefined) {
        const steps: ScriptStep[] = [
          ...Array.from({ length: n - 1 }, () => ({ demo: true as const })),
          { demo: true, delayMs: SLOW_MODEL_MS },
        ];
        mock.script(prompt, steps);
      }
      const id = `crash-${point.replace(/ /g, '-')}-${randomUUID().slice(0, 8)}`;
      runs.set(point, { id, prompt });
      await conversations.startConversation({ id, firstMessage: prompt, ...CONVERSATION_OPTIONS });
    };
    const run = (point: Point) => runs.get(point)!;
    const requestArrived = (point: Point, n: number) => () => mock.requestsFor(run(point).prompt).length >= n;
    const toolStarted = (point: Point, tool: string) => () =>
      readExecutions(executionLog, run(point).id, tool).some((e) => e.event === 'start' && e.pid === first!.pid);

    // The final model call comes after two tools (2 × latency), the second after one.
    await Promise.all([start('final model call'), start('second model call')]);
    await waitUntil('the second model call of "second model call"', requestArrived('second model call', 2));
    await start('get_current_stock_price');
    await waitUntil('the final model call of "final model call"', requestArrived('final model call', 3));
    await waitUntil(
      'get_current_stock_price to start',
      toolStarted('get_current_stock_price', 'get_current_stock_price'),
    );
    await Promise.all([start('first model call'), start('get_ticker_symbol')]);
    await waitUntil('the first model call of "first model call"', requestArrived('first model call', 1));
    await waitUntil('get_ticker_symbol to start', toolStarted('get_ticker_symbol', 'get_ticker_symbol'));

    // Everyone in position (checked, not assumed): the model calls each conversation had made, and the tools that had
    // finished — the tickers of the three conversations past it, the price of the one past that.
    assert.deepEqual(
      points.map((p) => mock.requestsFor(run(p).prompt).length),
      [1, 1, 2, 2, 3],
      'model calls made before the kill',
    );
    const finished = readExecutions(executionLog).filter((e) => e.event === 'finish');
    assert.deepEqual(finished.map((e) => e.tool).sort(), [
      'get_current_stock_price',
      'get_ticker_symbol',
      'get_ticker_symbol',
      'get_ticker_symbol',
    ]);
    await first.kill();
    firstExit = await first.exited;

    second = await startWorkerProcess(worker);
    await Promise.all(
      points.map(async (point) => {
        run(point).result = await conversations.waitForResult(run(point).id);
      }),
    );
  });

  after(async () => {
    await first?.kill();
    await second?.kill();
    await connection?.close();
    await mock?.close();
  });

  test('the first worker died of SIGKILL, and every conversation still answered 38.50 through the same five steps', async () => {
    assert.equal(firstExit.signal, 'SIGKILL');
    for (const point of points) {
      const { id, result } = runs.get(point)!;
      assert.equal(result?.status, 'completed', point);
      assert.match(result.text, /38\.50/, point);
      assert.equal(result.modelCalls, 3, `${point}: a retried call counts once`);
      assert.equal(result.toolCalls, 2, point);
      assert.deepEqual(
        (await activitiesOf(client, id)).map((a) => a.type),
        CHAIN,
        `${point}: the history shows the chain, nothing more`,
      );
    }
  });

  for (const [point, n] of Object.entries(slowCall) as [Point, number][]) {
    test(`killed during the ${point}: that call is sent again with the same messages, and no tool runs twice`, async () => {
      const { id, prompt } = runs.get(point)!;
      const requests = mock.requestsFor(prompt);
      assert.equal(requests.length, 4, 'three calls, one of them twice');
      assert.deepEqual(
        requests[n]!.body.messages,
        requests[n - 1]!.body.messages,
        'the retry carries the same conversation',
      );
      assert.equal(requests[n - 1]!.status, 200, 'the killed call had started streaming');

      const attempts = await attemptsOf(client, id);
      const modelCalls = attempts.filter((a) => a.type === 'callModel');
      // Only the killed call was retried. It may take more than one retry: the new worker's first attempt reads the
      // transcript by query, which waits for the dead worker's sticky queue to time out, and callModel does not
      // heartbeat during that read (see the report); those attempts end before they reach the API.
      assert.deepEqual(
        modelCalls.map((a, i) => (i === n - 1 ? a.attempt >= 2 : a.attempt)),
        [1, 2, 3].map((i) => (i === n ? true : 1)),
      );
      assert.match(
        modelCalls[n - 1]!.lastFailure ?? '',
        /heartbeat/i,
        'the dead worker was noticed by its missing heartbeats',
      );

      for (const tool of STOCK_TOOLS) {
        const runsOfTool = readExecutions(executionLog, id, tool);
        assert.deepEqual(
          runsOfTool.map((e) => e.event),
          ['start', 'finish'],
          `${tool} ran exactly once`,
        );
        // Tools before the killed call ran in the first worker, tools after it in the second.
        const expectedPid = STOCK_TOOLS.indexOf(tool) + 1 < n ? first!.pid : second!.pid;
        assert.ok(
          runsOfTool.every((e) => e.pid === expectedPid),
          `${tool} ran in worker ${expectedPid}`,
        );
      }
    });
  }

  for (const tool of STOCK_TOOLS) {
    const point = tool as Point;
    test(`killed during ${tool}: the call runs once more, with the same idempotency key, and the tools that had finished never run again`, async () => {
      const { id, prompt } = runs.get(point)!;
      const runsOfTool = readExecutions(executionLog, id, tool);
      assert.deepEqual(
        runsOfTool.map((e) => [e.event, e.pid, e.attempt]),
        [
          ['start', first!.pid, 1],
          ['start', second!.pid, 2],
          ['finish', second!.pid, 2],
        ],
      );
      assert.equal(new Set(runsOfTool.map((e) => e.idempotencyKey)).size, 1, 'one idempotency key across attempts');

      if (tool === 'get_current_stock_price') {
        const ticker = readExecutions(executionLog, id, 'get_ticker_symbol');
        assert.deepEqual(
          ticker.map((e) => [e.event, e.pid]),
          [
            ['start', first!.pid],
            ['finish', first!.pid],
          ],
          'the finished ticker is not run again',
        );
      } else {
        const price = readExecutions(executionLog, id, 'get_current_stock_price');
        assert.deepEqual(
          price.map((e) => [e.event, e.pid]),
          [
            ['start', second!.pid],
            ['finish', second!.pid],
          ],
        );
      }

      const attempts = await attemptsOf(client, id);
      const killed = attempts.find((a) => a.type === tool)!;
      assert.equal(killed.attempt, 2);
      assert.match(killed.lastFailure ?? '', /heartbeat/i);
      // No model call was repeated: the model saw each tool result once.
      const requests = mock.requestsFor(prompt);
      assert.equal(requests.length, 3);
      assert.deepEqual(
        requests[2]!.body.messages.at(-1).content.map((b: { content: string }) => b.content),
        ['38.50'],
      );
    });
  }

  test('over all five conversations: no finished tool ran again; an unfinished one ran at most once more, same key', () => {
    const all = readExecutions(executionLog);
    const byKey = new Map<string, Execution[]>();
    for (const e of all) byKey.set(e.idempotencyKey, [...(byKey.get(e.idempotencyKey) ?? []), e]);
    for (const [key, entries] of byKey) {
      const finishedInFirst = entries.some((e) => e.event === 'finish' && e.pid === first!.pid);
      const startsInSecond = entries.filter((e) => e.event === 'start' && e.pid === second!.pid).length;
      if (finishedInFirst) assert.equal(startsInSecond, 0, `${key} finished before the kill and ran again`);
      else assert.ok(startsInSecond <= 1, `${key} ran ${startsInSecond} times after the kill`);
      assert.equal(entries.filter((e) => e.event === 'finish').length, 1, `${key} finished once`);
    }
    assert.equal(byKey.size, 10, 'two tool calls per conversation');
  });
});

describe('the Temporal dev server is SIGKILLed mid-chain and restarted on the same SQLite file', () => {
  let server: DevServer | undefined;
  let mock: MessagesApi;
  let connection: Connection | undefined;
  let worker: WorkerProcess | undefined;

  before(async () => {
    mock = await startMessagesApi();
    server = await startDevServer({ ...(process.env.TEMPORAL_CLI_PATH && { cliPath: process.env.TEMPORAL_CLI_PATH }) });
  });
  after(async () => {
    await worker?.kill();
    await connection?.close();
    await mock?.close();
    await server?.stop();
  });

  test('a tool that finishes while the server is down is not lost: the conversation completes after the restart', async (t) => {
    const executionLog = newExecutionLog();
    const taskQueue = `crash-server-${randomUUID()}`;
    worker = await startWorkerProcess({
      temporalAddress: server!.address,
      taskQueue,
      anthropicBaseUrl: mock.url,
      executionLog,
      toolLatencyMs: 3000,
    });
    connection = await Connection.connect({ address: server!.address });
    const conversations = new ConversationClient({
      client: new Client({ connection, namespace: server!.namespace }),
      taskQueue,
    });
    const prompt = uniquePrompt(STOCK_QUESTION);
    const id = `crash-server-${randomUUID().slice(0, 8)}`;
    await conversations.startConversation({ id, firstMessage: prompt, ...CONVERSATION_OPTIONS });
    await waitUntil(
      'get_ticker_symbol to start',
      () => readExecutions(executionLog, id, 'get_ticker_symbol').some((e) => e.event === 'start'),
      { timeoutMs: 60_000 },
    );

    await server!.kill();
    // The worker lives on; the tool finishes with nobody to report to.
    await waitUntil(
      'get_ticker_symbol to finish in the worker',
      () => readExecutions(executionLog, id, 'get_ticker_symbol').some((e) => e.event === 'finish'),
      { timeoutMs: 60_000 },
    );
    assert.equal(server!.process?.signalCode, 'SIGKILL');
    assert.equal(mock.requestsFor(prompt).length, 1, 'nothing more reached the model while the server was down');
    await server!.restart();

    // The client's calls during the outage would have failed; after the restart it simply waits again.
    const result = await conversations.waitForResult(id);
    assert.equal(result.status, 'completed');
    assert.match(result.text, /38\.50/);
    assert.equal(worker.running, true, 'the same worker process did all the work');
    assert.deepEqual(
      (await activitiesOf(conversations.client, id)).map((a) => a.type),
      CHAIN,
    );

    const tickers = readExecutions(executionLog, id, 'get_ticker_symbol');
    const starts = tickers.filter((e) => e.event === 'start');
    // Normally the completion is delivered once the server is back (attempt 1 only). Should the outage outlast the
    // worker's retries of that completion, the activity times out and runs once more — with the same key.
    t.diagnostic(`get_ticker_symbol ran ${starts.length} time(s)`);
    assert.ok(starts.length <= 2, `get_ticker_symbol ran ${starts.length} times`);
    assert.equal(new Set(tickers.map((e) => e.idempotencyKey)).size, 1);
    assert.deepEqual(
      readExecutions(executionLog, id, 'get_current_stock_price').map((e) => e.event),
      ['start', 'finish'],
    );
    const requests = mock.requestsFor(prompt);
    assert.equal(requests.length, 3);
    assert.deepEqual(
      requests[1]!.body.messages.at(-1).content.map((b: { content: string }) => b.content),
      ['GM'],
    );
  });
});

describe('two worker processes on one task queue', () => {
  let mock: MessagesApi;
  let connection: Connection;
  const workers: WorkerProcess[] = [];

  before(async () => {
    mock = await startMessagesApi();
    connection = await Connection.connect({ address: temporalAddress });
  });
  after(async () => {
    for (const worker of workers) await worker.kill();
    await connection?.close();
    await mock?.close();
  });

  test('one is SIGKILLed mid-chain: the other finishes every conversation, and no finished tool runs again', async () => {
    const executionLog = newExecutionLog();
    const taskQueue = `crash-pair-${randomUUID()}`;
    const options = { taskQueue, anthropicBaseUrl: mock.url, executionLog, toolLatencyMs: 3000 };
    workers.push(...(await Promise.all([startWorkerProcess(options), startWorkerProcess(options)])));
    const client = new Client({ connection, namespace });
    const conversations = new ConversationClient({ client, taskQueue });
    const ids = Array.from({ length: 4 }, (_, i) => `crash-pair-${i}-${randomUUID().slice(0, 8)}`);
    await Promise.all(
      ids.map((id) =>
        conversations.startConversation({ id, firstMessage: uniquePrompt(STOCK_QUESTION), ...CONVERSATION_OPTIONS }),
      ),
    );

    // Kill whichever worker is running the first tool call to start: that call is in flight, by construction.
    const victim = await waitUntil(
      'a tool call to start',
      () => readExecutions(executionLog).find((e) => e.event === 'start'),
      { timeoutMs: 60_000 },
    );
    const killed = workers.find((w) => w.pid === victim.pid)!;
    const survivor = workers.find((w) => w.pid !== victim.pid)!;
    await killed.kill();

    const results = await Promise.all(ids.map((id) => conversations.waitForResult(id)));
    for (const result of results) {
      assert.equal(result.status, 'completed');
      assert.match(result.text, /38\.50/);
    }
    assert.equal(survivor.running, true);

    const all = readExecutions(executionLog);
    const byKey = new Map<string, Execution[]>();
    for (const e of all) byKey.set(e.idempotencyKey, [...(byKey.get(e.idempotencyKey) ?? []), e]);
    assert.equal(byKey.size, ids.length * 2, 'two tool calls per conversation');
    for (const [key, entries] of byKey) {
      const finishes = entries.filter((e) => e.event === 'finish');
      assert.equal(finishes.length, 1, `${key} finished once`);
      const finishedInKilled = finishes[0]!.pid === killed.pid;
      const starts = entries.filter((e) => e.event === 'start');
      // A call the killed worker had finished never runs again; one it had in flight runs once more, in the survivor.
      if (finishedInKilled) assert.equal(starts.length, 1, `${key} ran again after it had finished`);
      else
        assert.ok(
          starts.filter((e) => e.pid === survivor.pid).length === 1 && starts.length <= 2,
          `${key}: ${JSON.stringify(starts)}`,
        );
    }
    const rerun = byKey.get(victim.idempotencyKey)!;
    assert.deepEqual(
      rerun.map((e) => [e.event, e.pid]),
      [
        ['start', killed.pid],
        ['start', survivor.pid],
        ['finish', survivor.pid],
      ],
    );
  });
});

describe('a worker process paused (SIGSTOP) in a model call, resumed after another worker took the call over', () => {
  let mock: MessagesApi;
  let connection: Connection;
  const workers: WorkerProcess[] = [];
  after(async () => {
    for (const worker of workers) {
      if (worker.running) process.kill(worker.pid, 'SIGCONT');
      await worker.kill();
    }
    await connection?.close();
    await mock?.close();
  });

  // The paused worker wakes up to a reply the server no longer wants (its attempt timed out; the retry elsewhere got
  // another reply, with other tool_use ids). That late reply must not leak into what this worker sends next.
  test('the late reply is dropped: the next model call on that worker sends the transcript the workflow has', async () => {
    mock = await startMessagesApi();
    connection = await Connection.connect({ address: temporalAddress });
    const client = new Client({ connection, namespace });
    const executionLog = newExecutionLog();
    const taskQueue = `crash-paused-${randomUUID()}`;
    const conversations = new ConversationClient({ client, taskQueue });
    // Tools take 3 s in both workers: the other worker is gone long before the next model call is due.
    const base = { taskQueue, anthropicBaseUrl: mock.url, executionLog, toolLatencyMs: 3000 };
    // One activity slot: while its model call hangs, this worker has no activity poll open that could swallow the retry.
    const paused = await startWorkerProcess({ ...base, env: { WORKER_MAX_CONCURRENT_ACTIVITIES: '1' } });
    workers.push(paused);

    const prompt = uniquePrompt(STOCK_QUESTION);
    // The paused worker's call: slow enough to be caught in flight, quick enough to be fully sent while it is paused.
    // The other worker's retry: slow enough to be seen in flight.
    mock.script(prompt, [
      { demo: true, delayMs: 1500 },
      { demo: true, delayMs: 2000 },
    ]);
    const id = `crash-paused-${randomUUID().slice(0, 8)}`;
    await conversations.startConversation({ id, firstMessage: prompt, ...CONVERSATION_OPTIONS });
    await waitUntil('the first model call', () => mock.requestsFor(prompt).length >= 1, {
      timeoutMs: 60_000,
    });
    process.kill(paused.pid, 'SIGSTOP');

    const other = await startWorkerProcess(base);
    workers.push(other);
    // The server times the paused attempt out (no heartbeats) and the other worker starts attempt 2.
    await waitUntil(
      'attempt 2 of the model call to start on the other worker',
      async () => {
        const { raw } = await client.workflow.getHandle(id).describe();
        return raw.pendingActivities?.some(
          (a) => (a.attempt ?? 0) >= 2 && a.lastWorkerIdentity?.startsWith(`${other.pid}@`),
        );
      },
      { timeoutMs: 60_000 },
    );
    process.kill(paused.pid, 'SIGCONT');
    await waitUntil(
      "the workflow to accept the other worker's reply",
      async () => (await activitiesOf(client, id)).some((a) => a.type === 'callModel' && a.result !== undefined),
      { timeoutMs: 60_000 },
    );
    // From now on, everything runs on the worker that was paused.
    await other.kill();

    const result = await conversations.waitForResult(id);
    assert.match(result.text, /38\.50/);
    // The situation really was the one described: the first call was answered through the other worker, the next one
    // ran on the worker that had been paused (and had received its own, late, reply to the first call meanwhile).
    const calls = (await attemptsOf(client, id)).filter((a) => a.type === 'callModel');
    assert.ok(calls[0]!.identity.startsWith(`${other.pid}@`) && calls[0]!.attempt >= 2, JSON.stringify(calls[0]));
    assert.ok(calls[1]!.identity.startsWith(`${paused.pid}@`), JSON.stringify(calls[1]));
    assert.equal(mock.requestsFor(prompt)[0]!.status, 200, "the paused worker's call was answered");
    for (const request of mock.requestsFor(prompt)) {
      const messages = request.body.messages as { content: unknown }[];
      const uses = messages.flatMap((m) =>
        (Array.isArray(m.content) ? m.content : [])
          .filter((b: { type: string }) => b.type === 'tool_use')
          .map((b: { id: string }) => b.id),
      );
      const results = messages.flatMap((m) =>
        (Array.isArray(m.content) ? m.content : [])
          .filter((b: { type: string }) => b.type === 'tool_result')
          .map((b: { tool_use_id: string }) => b.tool_use_id),
      );
      assert.deepEqual(results, uses.slice(0, results.length), 'every tool_result answers the tool_use before it');
    }
  });
});
