// Content on spans is opt-in, and payload encryption vetoes it: a tool activity runs through the worker's tracing
// interceptors (the real OpenTelemetry SDK, Temporal's MockActivityEnvironment) and its spans are read back.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createToolActivities, type ToolActivity } from '../../activities/tool-activities';
import { demoTools } from '../../testing/demo-tools';
import { GEN_AI } from '../../tracing/genai-attributes';
import { startTracing } from '../../tracing/tracing-sdk';

const exporter = new InMemorySpanExporter();
const tracing = startTracing({
  serviceName: 'tracing-content-test',
  spanProcessor: new SimpleSpanProcessor(exporter),
  captureContent: true,
});
after(() => tracing.shutdown());

async function toolSpan(payloadsProtected: boolean) {
  exporter.reset();
  const { interceptors } = tracing.workerOptions(undefined, payloadsProtected);
  const env = new MockActivityEnvironment(
    { activityType: 'get_ticker_symbol' },
    { interceptors: interceptors.activity ?? [] },
  );
  const tool = (createToolActivities(demoTools) as unknown as Record<string, ToolActivity>).get_ticker_symbol!;
  const result = await env.run(tool, {
    input: { company_name: 'General Motors' },
    protocol: 'native' as const,
    idempotencyKey: 'conv/run/toolu_42',
  });
  assert.deepEqual(result, { ok: true, content: 'GM' });
  const span = exporter.getFinishedSpans().find((s) => s.name === 'execute_tool get_ticker_symbol');
  assert.ok(
    span,
    exporter
      .getFinishedSpans()
      .map((s) => s.name)
      .join(', '),
  );
  assert.equal(
    span.parentSpanId,
    exporter
      .getFinishedSpans()
      .find((s) => s.name === 'RunActivity:get_ticker_symbol')
      ?.spanContext().spanId,
  );
  return span.attributes;
}

test('with content capture asked for and plain payloads, the tool span carries its arguments and result', async () => {
  const attributes = await toolSpan(false);
  assert.equal(attributes[GEN_AI.toolCallArguments], '{"company_name":"General Motors"}');
  assert.equal(attributes[GEN_AI.toolCallResult], 'GM');
  assert.equal(attributes[GEN_AI.toolCallId], 'toolu_42');
});

test('with encrypted payloads, no content reaches a span even though capture was asked for', async () => {
  const attributes = await toolSpan(true);
  assert.equal(attributes[GEN_AI.toolCallArguments], undefined);
  assert.equal(attributes[GEN_AI.toolCallResult], undefined);
  assert.equal(attributes[GEN_AI.toolName], 'get_ticker_symbol');
  assert.doesNotMatch(JSON.stringify(attributes), /General Motors|"GM"/);
});

test('a span the workflow sandbox hands out through the sink loses its exception text too, once payloads are encrypted', () => {
  exporter.reset();
  const secret = 'SECRET-PATIENT-NAME-4711';
  const { sinks } = tracing.workerOptions(undefined, true);
  const exportSpans = (sinks.exporter as { export: { fn: (info: unknown, spans: unknown[]) => void } }).export.fn;
  exportSpans({ workflowId: 'conv-1', runId: 'run-1', workflowType: 'conversation' }, [
    {
      name: 'HandleUpdate:sendMessage',
      kind: 0,
      spanContext: { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1 },
      startTime: [1, 0],
      endTime: [1, 1000],
      status: { code: 2, message: `no ticker for "${secret}"` },
      attributes: {},
      links: [],
      events: [
        {
          name: 'exception',
          time: [1, 500],
          attributes: {
            'exception.type': 'ApplicationFailure',
            'exception.message': `no ticker for "${secret}"`,
            'exception.stacktrace': `ApplicationFailure: no ticker for "${secret}"\n    at lookup (workflow-bundle.js:1:1)`,
          },
        },
      ],
      duration: [0, 1000],
      ended: true,
      droppedAttributesCount: 0,
      droppedLinksCount: 0,
      droppedEventsCount: 0,
      instrumentationLibrary: { name: 'test' },
    },
  ]);
  const [span] = exporter.getFinishedSpans();
  assert.ok(span);
  assert.equal(span.attributes.workflowId, 'conv-1');
  assert.deepEqual(span.status, { code: 2, message: 'ApplicationFailure (40 characters)' });
  assert.deepEqual(span.events[0]!.attributes, {
    'exception.type': 'ApplicationFailure',
    'exception.message': 'ApplicationFailure (40 characters)',
    'exception.stacktrace': '    at lookup (workflow-bundle.js:1:1)',
  });
  assert.doesNotMatch(JSON.stringify({ status: span.status, events: span.events }), /SECRET/);
});
