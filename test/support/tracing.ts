// What the tracing tests share: a workflow bundle that includes Temporal's OpenTelemetry workflow interceptors (the
// shared WORKFLOW_BUNDLE_PATH of the test run does not), and spans as plain nodes for assertions and printing.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hrTimeToMilliseconds } from '@opentelemetry/core';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { OTEL_WORKFLOW_INTERCEPTORS, WORKFLOWS_PATH } from '../../workers/workflow-bundles';
import type { SpanNode } from '../../tracing/span-tree';

let traced: Promise<string> | undefined;

/** The workflows bundled with the tracing interceptors, once per test process (the `default-traced` bundle's recipe). */
export function tracedWorkflowBundle(): Promise<string> {
  traced ??= bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    workflowInterceptorModules: [OTEL_WORKFLOW_INTERCEPTORS],
    logger: new DefaultLogger('WARN'),
  }).then(({ code }) => {
    const file = join(mkdtempSync(join(tmpdir(), 'traced-bundle-')), 'default-traced.js');
    writeFileSync(file, code);
    return file;
  });
  return traced;
}

export function nodeOf(span: ReadableSpan): SpanNode & { traceId: string; status: ReadableSpan['status'] } {
  return {
    traceId: span.spanContext().traceId,
    spanId: span.spanContext().spanId,
    parentSpanId: span.parentSpanId,
    name: span.name,
    startMs: hrTimeToMilliseconds(span.startTime),
    durationMs: hrTimeToMilliseconds(span.duration),
    attributes: span.attributes,
    status: span.status,
  };
}
