// Tracing survives a crash without duplicates. Two real worker processes (workers/main.ts's runWorker, tracing on
// from OTEL_* variables alone) export over OTLP/HTTP to a receiver in this test. The first is SIGKILLed while the
// second model call of the ticker → price chain is in flight; the second replays the history and finishes the chain.
// Replay must export no span for a step that already ran, and the spans of both processes must form one tree.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { ConversationClient } from '../../client/conversation-client';
import type { ConversationResult } from '../../common/conversation-types';
import { startMessagesApi } from '../../testing/messages-api/server';
import { STOCK_QUESTION, STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import type { MessagesApi } from '../../testing/messages-api/types';
import { CONTENT_ATTRIBUTES } from '../../tracing/genai-attributes';
import { formatSpanTree } from '../../tracing/span-tree';
import { namespace, temporalAddress, uniquePrompt } from '../support/harness';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../support/otlp-receiver';
import { tracedWorkflowBundle } from '../support/tracing';
import { waitUntil } from '../support/wait-until';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';

let receiver: OtlpReceiver;
let mock: MessagesApi;
let connection: Connection;
let first: WorkerProcess | undefined;
let second: WorkerProcess | undefined;
let result: ConversationResult;
let spans: ReceivedSpan[];
let tree: string;
const id = `traced-crash-${randomUUID().slice(0, 8)}`;

before(async () => {
  receiver = await startOtlpReceiver();
  mock = await startMessagesApi();
  connection = await Connection.connect({ address: temporalAddress });
  const taskQueue = `tracing-crash-${randomUUID()}`;
  const conversations = new ConversationClient({ client: new Client({ connection, namespace }), taskQueue });
  const worker = (service: string) => ({
    taskQueue,
    anthropicBaseUrl: mock.url,
    executionLog: join(mkdtempSync(join(tmpdir(), 'tracing-crash-')), 'executions.jsonl'),
    workflowBundlePath: bundle,
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '50',
      OTEL_SERVICE_NAME: service,
    },
  });
  const bundle = await tracedWorkflowBundle();
  first = await startWorkerProcess(worker('worker-a'));

  // The second model call hangs (far longer than the test waits); its retry on the second worker gets the demo reply.
  const prompt = uniquePrompt(STOCK_QUESTION);
  mock.script(prompt, [{ demo: true }, { demo: true, delayMs: 120_000 }]);
  await conversations.startConversation({
    id,
    firstMessage: prompt,
    tools: STOCK_TOOLS,
    closeAfterFirstReply: true,
    // Long enough for a worker that has just started, on a busy machine, to send its first heartbeats in time (at 2 s,
    // a run at load 10 lost the retry to a heartbeat timeout and needed a third attempt).
    timeouts: { modelHeartbeat: '5 seconds' },
  });
  const exported = (name: string) => () =>
    receiver
      .spans()
      .some((span) => span.name === name && (span.attributes.workflowId ?? span.attributes.temporalWorkflowId) === id);
  await waitUntil('the second model call to reach the server', () => mock.requestsFor(prompt).length >= 2);
  // What the first worker finished is exported before it dies (a batch every 50 ms); the rest dies with it. A span
  // that ended in the last batch before a SIGKILL is lost, never sent twice: replay does not export it again. So the
  // kill waits for the workflow's spans of the finished steps too (they end one workflow task after the activity's).
  for (const name of ['RunActivity:get_ticker_symbol', 'StartActivity:get_ticker_symbol', 'StartActivity:callModel'])
    await waitUntil(`the first worker to export ${name}`, exported(name));
  await first.kill();

  second = await startWorkerProcess(worker('worker-b'));
  result = await conversations.waitForResult(id);
  await second.stop(); // SIGTERM: the worker shuts down and flushes its last spans
  const run = receiver.spans().find((span) => span.name === 'RunWorkflow:conversation');
  assert.ok(run, formatSpanTree(receiver.spans()));
  spans = receiver.spans().filter((span) => span.traceId === run.traceId);
  tree = spans.map((span) => `${span.service}: ${span.name}`).join('\n') + '\n' + formatSpanTree(spans);
});

after(async () => {
  await first?.kill();
  await second?.kill();
  await connection?.close();
  await mock?.close();
  await receiver?.close();
});

const count = (name: string, service?: string) =>
  spans.filter((span) => span.name === name && (service === undefined || span.service === service)).length;

test('the conversation finished on the second worker', () => {
  assert.equal(result.status, 'completed');
  assert.match(result.text, /38\.50/);
});

test('each step of the chain has exactly one span: replay on the second worker exported none again', () => {
  assert.equal(count('RunWorkflow:conversation'), 1, tree);
  assert.equal(count('StartActivity:callModel'), 3, tree);
  assert.equal(count('StartActivity:get_ticker_symbol'), 1, tree);
  assert.equal(count('StartActivity:get_current_stock_price'), 1, tree);
  assert.equal(count('RunActivity:get_ticker_symbol'), 1, tree);
  assert.equal(count('execute_tool get_ticker_symbol'), 1, tree);
  assert.equal(count('execute_tool get_current_stock_price'), 1, tree);
  const ids = spans.map((span) => span.spanId);
  assert.equal(new Set(ids).size, ids.length, `no span id twice:\n${tree}`);
});

test('what ran before the crash was exported by the first worker, and only by it', () => {
  assert.equal(count('StartActivity:get_ticker_symbol', 'worker-a'), 1, tree);
  assert.equal(count('RunActivity:get_ticker_symbol', 'worker-a'), 1, tree);
  assert.equal(count('StartActivity:get_ticker_symbol', 'worker-b'), 0, tree);
  assert.equal(count('RunWorkflow:conversation', 'worker-b'), 1, tree);
});

test('the model call killed in flight shows once, as attempt 2 on the second worker', () => {
  const chats = spans.filter((span) => span.name.startsWith('chat ')).sort((a, b) => a.startMs - b.startMs);
  assert.deepEqual(
    chats.map((chat) => [chat.service, chat.attributes['temporal.activity.attempt']]),
    [
      ['worker-a', 1],
      ['worker-b', 2],
      ['worker-b', 1],
    ],
    tree,
  );
});

test('the spans of both processes form one tree: every parent was exported, under one workflow run', () => {
  const ids = new Set(spans.map((span) => span.spanId));
  const roots = spans.filter((span) => !span.parentSpanId || !ids.has(span.parentSpanId));
  assert.deepEqual(
    roots.map((span) => span.name),
    ['RunWorkflow:conversation'],
    tree,
  );
  for (const span of spans) for (const key of CONTENT_ATTRIBUTES) assert.equal(span.attributes[key], undefined, key);
});
