// What the tracing tests share: a workflow bundle that includes Temporal's OpenTelemetry workflow interceptors (the
// shared WORKFLOW_BUNDLE_PATH of the test run does not), and spans as plain nodes for assertions and printing.
import { hrTimeToMilliseconds } from '@opentelemetry/core';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { type BundleVariant, PREBUILT_BUNDLES } from '../../workers/workflow-bundles';
import type { SpanNode } from '../../tracing/span-tree';
import { sharedWorkflowBundle } from './shared-workflow-bundle';

/**
 * The workflows bundled with the tracing interceptors, once per test run and variant (shared-workflow-bundle.ts): the
 * `default-traced` bundle's recipe, or `encoded-failures-traced`'s for a worker that encrypts payloads.
 */
export function tracedWorkflowBundle(variant: BundleVariant = PREBUILT_BUNDLES['default-traced']): Promise<string> {
  return sharedWorkflowBundle(variant);
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
