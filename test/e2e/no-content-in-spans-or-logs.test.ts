// With payloads encrypted or content capture off (the default), no content reaches a span or the worker's log: a
// marker planted in a tool's input, its result, its error, an unexpected failure and an MCP protocol error (600 KB,
// quoting the call) is nowhere in the spans the worker exports (attributes, exception events, status messages) or in
// what it prints, at DEBUG; the errors' types and sizes are. The worker is runWorker in a process of its own, traced
// from OTEL_* variables to an OTLP receiver here; the local Messages API server plays the model. A control run with
// content capture on and plain payloads shows the marker where it went, so the checks can see it.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { ConversationClient } from '../../client/conversation-client';
import { encryptingDataConverter } from '../../codec/data-converter';
import { parseKeyRing } from '../../codec/keys';
import { startMessagesApi } from '../../testing/messages-api/server';
import type { MessagesApi, ScriptStep } from '../../testing/messages-api/types';
import { formatSpanTree } from '../../tracing/span-tree';
import { PREBUILT_BUNDLES } from '../../workers/workflow-bundles';
import { spawnWorker } from '../../scripts/worker-process';
import { MARKER } from '../support/content-leak-tools';
import { lastUserBlocks, namespace, temporalAddress, uniquePrompt } from '../support/harness';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../support/otlp-receiver';
import { tracedWorkflowBundle } from '../support/tracing';

const KEYS = `k1:${randomBytes(32).toString('base64')}`;
const TOOLS = ['get_patient_record', 'find_patient', 'get_ticker_symbol'];
const SIZE = /\(\d+ characters\)/;

interface Setting {
  name: string;
  encrypted: boolean;
  captureAsked: boolean;
}

interface Run {
  spans: ReceivedSpan[];
  log: string[];
  /** What the model was sent after the tool calls: one tool_result per call. */
  toolResults: { content?: unknown; is_error?: boolean }[];
}

let receiver: OtlpReceiver;
let mock: MessagesApi;
let connection: Connection;

before(async () => {
  receiver = await startOtlpReceiver();
  mock = await startMessagesApi();
  connection = await Connection.connect({ address: temporalAddress });
});

after(async () => {
  await connection?.close();
  await mock?.close();
  await receiver?.close();
});

/** One conversation on a worker of its own with this setting: the four tool calls in one reply, then an answer. */
async function converse(setting: Setting): Promise<Run> {
  const taskQueue = `no-content-${randomUUID()}`;
  const service = `no-content-${randomUUID().slice(0, 8)}`;
  const bundle = await tracedWorkflowBundle(
    setting.encrypted ? PREBUILT_BUNDLES['encoded-failures-traced'] : PREBUILT_BUNDLES['default-traced'],
  );
  const log: string[] = [];
  const worker = await spawnWorker({
    entry: 'test/support/content-leak-worker.ts',
    env: {
      TEMPORAL_ADDRESS: temporalAddress,
      TEMPORAL_NAMESPACE: namespace,
      TEMPORAL_TASK_QUEUE: taskQueue,
      ANTHROPIC_BASE_URL: mock.url,
      WORKFLOW_BUNDLE_PATH: bundle,
      WORKER_LOG_LEVEL: 'DEBUG',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '50',
      OTEL_SERVICE_NAME: service,
      ...(setting.captureAsked && { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' }),
      ...(setting.encrypted && { PAYLOAD_ENCRYPTION_KEYS: KEYS }),
    },
    readyTimeoutMs: 90_000,
    output: (line) => log.push(line),
  });
  try {
    const client = new Client({
      connection,
      namespace,
      ...(setting.encrypted && { dataConverter: encryptingDataConverter(parseKeyRing(KEYS)) }),
    });
    const conversations = new ConversationClient({ client, taskQueue, tools: TOOLS, mcpServers: ['quoting'] });
    const prompt = uniquePrompt(`Look up the patient ${MARKER}.`);
    const calls: ScriptStep = {
      reply: {
        content: [
          { type: 'tool_use', name: 'get_patient_record', input: { patient_id: 'P-1' } },
          { type: 'tool_use', name: 'find_patient', input: { name: `${MARKER} (in an input)` } },
          { type: 'tool_use', name: 'get_ticker_symbol', input: { company_name: `${MARKER} Inc` } },
          { type: 'tool_use', name: 'quoting__lookup', input: { query: MARKER } },
        ],
        stop_reason: 'tool_use',
      },
    };
    mock.script(prompt, [calls, { reply: { content: [{ type: 'text', text: 'Done.' }], stop_reason: 'end_turn' } }]);
    const id = `no-content-${randomUUID().slice(0, 8)}`;
    const reply = await conversations.sendMessage(id, prompt, {
      start: {
        tools: TOOLS,
        mcpServers: ['quoting'],
        closeAfterFirstReply: true,
      },
    });
    assert.equal(reply.text, 'Done.');
    await conversations.waitForResult(id);
    const [, afterTools] = mock.requestsFor(prompt);
    assert.ok(afterTools, 'the model was called again with the tool results');
    // SIGTERM: the worker stops, exports the spans it still holds and prints its last lines.
    await worker.stop();
    return {
      spans: receiver.spans().filter((span) => span.service === service),
      log,
      toolResults: lastUserBlocks(afterTools),
    };
  } finally {
    await worker.kill();
  }
}

/** The worker's log as entries: a line with a timestamp starts one, and the lines of its metadata follow it. */
function logEntries(run: Run): string[] {
  const entries: string[] = [];
  for (const line of run.log) {
    const text = line.replace(/^\[worker \d+\] /, '');
    if (/^\d{4}-\d\d-\d\dT/.test(text) || entries.length === 0) entries.push(text);
    else entries[entries.length - 1] += `\n${text}`;
  }
  return entries;
}

const runActivity = (run: Run, type: string) => {
  const span = run.spans.find((candidate) => candidate.name === `RunActivity:${type}`);
  assert.ok(span, `no RunActivity:${type} span:\n${formatSpanTree(run.spans)}`);
  return span;
};

/** Where the marker is, for the message of a failed check. */
function whereIs(run: Run): string {
  const spans = run.spans
    .filter((span) => JSON.stringify(span).includes(MARKER))
    .map((span) => `span ${span.name}: ${JSON.stringify(span).slice(0, 600)}`);
  const lines = run.log.filter((line) => line.includes(MARKER)).map((line) => `log: ${line.slice(0, 600)}`);
  return [...spans, ...lines].join('\n');
}

const withoutContent: Setting[] = [
  { name: 'payloads encrypted, content capture off', encrypted: true, captureAsked: false },
  { name: 'plain payloads, content capture off (the default)', encrypted: false, captureAsked: false },
  { name: 'payloads encrypted, content capture asked for (encryption vetoes it)', encrypted: true, captureAsked: true },
];

for (const setting of withoutContent) {
  describe(setting.name, () => {
    let run: Run;
    before(async () => {
      run = await converse(setting);
    });

    test('the marker reached the model: in a tool result and in the errors of three calls', () => {
      const texts = run.toolResults.map((result) => JSON.stringify(result.content));
      assert.equal(texts.length, 4);
      for (const text of texts) assert.ok(text.includes(MARKER), text.slice(0, 300));
      assert.deepEqual(
        run.toolResults.map((result) => result.is_error ?? false),
        [false, true, true, true],
      );
    });

    test('no exported span carries the marker: not in attributes, exception events or status messages', () => {
      assert.ok(run.spans.length > 10, formatSpanTree(run.spans));
      assert.equal(whereIs(run), '');
      assert.ok(!JSON.stringify(run.spans).includes(MARKER));
    });

    test("the worker's log, at DEBUG, never has the marker", () => {
      assert.ok(run.log.some((line) => line.includes('Worker ready')));
      assert.ok(!run.log.join('\n').includes(MARKER), whereIs(run));
    });

    test("spans say each failure's type and the size of its message", () => {
      const expected: [string, RegExp][] = [
        ['get_ticker_symbol', /^ApplicationFailure TickerNotFound \(\d+ characters\)$/],
        ['find_patient', /^(ApplicationFailure )?Error \(\d+ characters\)$/],
        // The MCP error is cut to the transcript's cap (100,000 characters) where it is made.
        ['callMcpTool', /^ApplicationFailure McpProtocolError \(\d{5,} characters\)$/],
      ];
      for (const [type, message] of expected) {
        const span = runActivity(run, type);
        const exception = span.events.find((event) => event.name === 'exception');
        assert.ok(exception, `${span.name}: no exception event`);
        assert.match(String(exception.attributes['exception.message']), message);
        assert.match(String(span.status.message), message);
        const stack = exception.attributes['exception.stacktrace'];
        if (stack !== undefined) for (const line of String(stack).split('\n')) assert.match(line, /^\s+at \S/);
      }
    });

    test("the log says each failure's type and the size of its message", () => {
      const failed = logEntries(run).filter((entry) => entry.includes('Activity failed'));
      const says = (pattern: RegExp) => failed.some((line) => pattern.test(line));
      assert.ok(says(/ApplicationFailure TickerNotFound \(\d+ characters\)/), failed.join('\n'));
      assert.ok(says(/'(ApplicationFailure )?Error \(\d+ characters\)'/), failed.join('\n'));
      assert.ok(says(/ApplicationFailure McpProtocolError \(\d{5,} characters\)/), failed.join('\n'));
      assert.ok(failed.length >= 4, failed.join('\n'));
      assert.ok(
        failed.every((entry) => SIZE.test(entry)),
        failed.join('\n'),
      );
    });
  });
}

describe('the control: plain payloads, content capture on', () => {
  let run: Run;
  before(async () => {
    run = await converse({ name: 'control', encrypted: false, captureAsked: true });
  });

  test('content stays where capture puts it: the marker is on spans and in the log, so the checks above can see it', () => {
    assert.ok(JSON.stringify(runActivity(run, 'get_ticker_symbol').events).includes(MARKER));
    assert.ok(
      run.spans.some((span) => String(span.attributes['gen_ai.tool.call.result'] ?? '').includes(MARKER)),
      formatSpanTree(run.spans),
    );
    assert.ok(logEntries(run).some((entry) => entry.includes('Activity failed') && entry.includes(MARKER)));
  });
});
