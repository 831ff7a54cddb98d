// OpenTelemetry traces, with the real SDK (InMemorySpanExporter) against the real dev server: one trace runs from
// the client's call through the workflow to every activity attempt, model calls and tool calls carry the GenAI
// attributes, a retried model call shows as attempts, and no prompt or tool content is on any span by default.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { ConversationClient } from '../../client/conversation-client';
import { MODEL_ACTIVITY, RESERVED_ACTIVITY_NAMES } from '../../common/activity-contracts';
import { demoTools } from '../../testing/demo-tools';
import { startMessagesApi } from '../../testing/messages-api/server';
import { STOCK_QUESTION, STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import type { MessagesApi } from '../../testing/messages-api/types';
import { CONTENT_ATTRIBUTES } from '../../tracing/genai-attributes';
import { formatSpanTree } from '../../tracing/span-tree';
import { startTracing, type Tracing } from '../../tracing/tracing-sdk';
import { createAnthropic } from '../../workers/anthropic-client';
import { createConversationWorker } from '../../workers/conversation-worker';
import { namespace, temporalAddress, uniquePrompt } from '../support/harness';
import { nodeOf, tracedWorkflowBundle } from '../support/tracing';

const exporter = new InMemorySpanExporter();
let tracing: Tracing;
let mock: MessagesApi;
let workerConnection: NativeConnection;
let worker: Worker;
let running: Promise<void>;
let connection: Connection;
let conversations: ConversationClient;

before(async () => {
  tracing = startTracing({ serviceName: 'tracing-test', spanProcessor: new SimpleSpanProcessor(exporter) });
  mock = await startMessagesApi();
  const taskQueue = `tracing-${randomUUID()}`;
  workerConnection = await NativeConnection.connect({ address: temporalAddress });
  worker = await createConversationWorker({
    connection: workerConnection,
    namespace,
    taskQueue,
    anthropic: createAnthropic({ ANTHROPIC_BASE_URL: mock.url }),
    tools: demoTools,
    workflowBundlePath: await tracedWorkflowBundle(),
    tracing,
  });
  running = worker.run();
  connection = await Connection.connect({ address: temporalAddress });
  const client = new Client({ connection, namespace, interceptors: tracing.clientInterceptors() });
  conversations = new ConversationClient({ client, taskQueue, tools: demoTools.map((tool) => tool.name) });
});

after(async () => {
  worker?.shutdown();
  await running?.catch(() => undefined);
  await workerConnection?.close();
  await connection?.close();
  await mock?.close();
  await tracing?.shutdown();
});

/** The spans of the trace that the conversation `id`'s workflow run belongs to. */
function traceOf(id: string) {
  const spans = exporter.getFinishedSpans().map(nodeOf);
  const workflowRun = spans.find(
    (span) => span.name === 'RunWorkflow:conversation' && span.attributes.workflowId === id,
  );
  assert.ok(workflowRun, `no span of ${id}:\n${formatSpanTree(spans)}`);
  return spans.filter((span) => span.traceId === workflowRun.traceId);
}

describe('the ticker → price chain, traced', () => {
  let id: string;
  let spans: ReturnType<typeof traceOf>;
  let tree: string;

  before(async () => {
    id = `traced-${randomUUID().slice(0, 8)}`;
    const reply = await conversations.sendMessage(id, uniquePrompt(STOCK_QUESTION), {
      start: {
        tools: STOCK_TOOLS,
        closeAfterFirstReply: true,
      },
    });
    assert.match(reply.text, /38\.50/);
    await conversations.waitForResult(id);
    await tracing.flush();
    spans = traceOf(id);
    tree = formatSpanTree(spans);
  });

  const named = (name: string) => spans.filter((span) => span.name === name);
  const parentOf = (span: { parentSpanId?: string | undefined }) =>
    spans.find((candidate) => candidate.spanId === span.parentSpanId);

  test('one trace: the client call is its root, and the workflow run hangs under it', () => {
    const roots = spans.filter((span) => parentOf(span) === undefined);
    assert.deepEqual(
      roots.map((span) => span.name),
      ['UpdateWithStartWorkflow:sendMessage'],
      tree,
    );
    const [run] = named('RunWorkflow:conversation');
    assert.equal(parentOf(run!)?.name, 'UpdateWithStartWorkflow:sendMessage', tree);
    assert.equal(parentOf(named('HandleUpdate:sendMessage')[0]!)?.name, 'UpdateWithStartWorkflow:sendMessage', tree);
  });

  test('every activity is started by the workflow and each attempt runs under its start: model, tool, model, tool, model', () => {
    const starts = spans
      .filter((span) => span.name.startsWith('StartActivity:'))
      .sort((a, b) => a.startMs - b.startMs)
      .map((span) => span.name.slice('StartActivity:'.length))
      // The chain's model and tool calls; the orchestrator's bookkeeping (tool policies, prices) is traced too.
      .filter((type) => type === MODEL_ACTIVITY || !RESERVED_ACTIVITY_NAMES.includes(type));
    assert.deepEqual(
      starts,
      ['callModel', 'get_ticker_symbol', 'callModel', 'get_current_stock_price', 'callModel'],
      tree,
    );
    for (const run of spans.filter((span) => span.name.startsWith('RunActivity:'))) {
      const start = parentOf(run);
      assert.equal(start?.name, run.name.replace('RunActivity:', 'StartActivity:'), tree);
      assert.ok(
        parentOf(start!)?.name.startsWith('RunWorkflow:') || parentOf(start!)?.name.startsWith('HandleUpdate:'),
      );
    }
  });

  test('each model call is a `chat {model}` span with the GenAI attributes, under its activity attempt', () => {
    const chats = spans.filter((span) => span.name.startsWith('chat ')).sort((a, b) => a.startMs - b.startMs);
    assert.equal(chats.length, 3, tree);
    assert.equal(
      spans.filter((span) => span.attributes['gen_ai.operation.name'] === 'chat').length,
      3,
      `one GenAI span per model call (the SDK's own spans are off), so tokens are not counted twice:\n${tree}`,
    );
    for (const chat of chats) {
      assert.equal(parentOf(chat)?.name, 'RunActivity:callModel', tree);
      assert.equal(chat.attributes['gen_ai.operation.name'], 'chat');
      assert.equal(chat.attributes['gen_ai.provider.name'], 'anthropic');
      assert.equal(chat.name, `chat ${chat.attributes['gen_ai.request.model']}`);
      assert.equal(chat.attributes['gen_ai.conversation.id'], id);
      assert.ok((chat.attributes['gen_ai.usage.input_tokens'] as number) > 0);
      assert.ok((chat.attributes['gen_ai.usage.output_tokens'] as number) > 0);
      assert.equal(chat.attributes['temporal.activity.attempt'], 1);
    }
    assert.deepEqual(
      chats.map((chat) => chat.attributes['gen_ai.response.finish_reasons']),
      [['tool_use'], ['tool_use'], ['end_turn']],
    );
  });

  test("each tool call is an `execute_tool {name}` span with the tool name and the model's tool_use id", () => {
    const tools = spans.filter((span) => span.name.startsWith('execute_tool ')).sort((a, b) => a.startMs - b.startMs);
    assert.deepEqual(
      tools.map((span) => span.attributes['gen_ai.tool.name']),
      ['get_ticker_symbol', 'get_current_stock_price'],
      tree,
    );
    for (const tool of tools) {
      assert.equal(parentOf(tool)?.name, `RunActivity:${tool.attributes['gen_ai.tool.name']}`);
      assert.match(String(tool.attributes['gen_ai.tool.call.id']), /^toolu_/);
      assert.equal(tool.attributes['gen_ai.operation.name'], 'execute_tool');
    }
  });

  test('workflow spans say which workflow run they are of, with scalar attributes only', () => {
    const [run] = named('RunWorkflow:conversation');
    assert.equal(run!.attributes.workflowId, id, tree);
    assert.equal(run!.attributes.workflowType, 'conversation');
    for (const span of spans)
      for (const [key, value] of Object.entries(span.attributes))
        assert.ok(
          ['string', 'number', 'boolean'].includes(typeof value) || Array.isArray(value),
          `${span.name}: ${key} is ${JSON.stringify(value)}`,
        );
  });

  test('no prompt, reply or tool content on any span by default', () => {
    for (const span of spans)
      for (const key of CONTENT_ATTRIBUTES) assert.equal(span.attributes[key], undefined, `${span.name}: ${key}`);
    const everything = JSON.stringify(spans.map((span) => span.attributes));
    assert.doesNotMatch(everything, /General Motors|38\.50/);
  });
});

test('a model call that fails with 529 and is retried shows as two attempts of the same activity start', async () => {
  const prompt = uniquePrompt(STOCK_QUESTION);
  mock.script(prompt, [{ demo: true }, { fault: 'status', status: 529 }]);
  const id = `traced-retry-${randomUUID().slice(0, 8)}`;
  const reply = await conversations.sendMessage(id, prompt, {
    start: { tools: STOCK_TOOLS, closeAfterFirstReply: true },
  });
  assert.match(reply.text, /38\.50/);
  await conversations.waitForResult(id);
  await tracing.flush();
  const spans = traceOf(id);
  const tree = formatSpanTree(spans);
  const starts = spans.filter((span) => span.name === 'StartActivity:callModel').sort((a, b) => a.startMs - b.startMs);
  assert.equal(starts.length, 3, tree);
  const attemptsUnder = (start: (typeof spans)[number]) =>
    spans
      .filter((span) => span.parentSpanId === start.spanId)
      .map((run) => spans.find((chat) => chat.parentSpanId === run.spanId && chat.name.startsWith('chat '))!)
      .sort((a, b) => a.startMs - b.startMs)
      .map((chat) => [chat.attributes['temporal.activity.attempt'], chat.attributes['error.type'] ?? 'ok']);
  assert.deepEqual(attemptsUnder(starts[0]!), [[1, 'ok']], tree);
  assert.deepEqual(
    attemptsUnder(starts[1]!),
    [
      [1, 'ModelOverloaded'],
      [2, 'ok'],
    ],
    tree,
  );
  assert.deepEqual(attemptsUnder(starts[2]!), [[1, 'ok']], tree);
  const failedRun = spans.find((span) => span.name === 'RunActivity:callModel' && span.status.code === 2);
  assert.ok(failedRun, `the failed attempt's RunActivity span has status ERROR:\n${tree}`);
});
