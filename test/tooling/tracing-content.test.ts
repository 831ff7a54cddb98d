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
