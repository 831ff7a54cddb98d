// What the tracing tests share: a workflow bundle that includes Temporal's OpenTelemetry workflow interceptors (the
// shared WORKFLOW_BUNDLE_PATH of the test run does not), and spans as plain nodes for assertions and printing.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hrTimeToMilliseconds } from '@opentelemetry/core';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { type BundleVariant, conversationBundleOptions, PREBUILT_BUNDLES } from '../../workers/workflow-bundles';
import type { SpanNode } from '../../tracing/span-tree';

const traced = new Map<BundleVariant, Promise<string>>();

/**
 * The workflows bundled with the tracing interceptors, once per test process and variant: the `default-traced`
 * bundle's recipe, or `encoded-failures-traced`'s for a worker that encrypts payloads.
 */
export function tracedWorkflowBundle(variant: BundleVariant = PREBUILT_BUNDLES['default-traced']): Promise<string> {
  let bundle = traced.get(variant);
  if (!bundle) {
    bundle = bundleWorkflowCode({ ...conversationBundleOptions(variant), logger: new DefaultLogger('WARN') }).then(
      ({ code }) => {
        const file = join(mkdtempSync(join(tmpdir(), 'traced-bundle-')), variant.file);
        writeFileSync(file, code);
        return file;
      },
    );
    traced.set(variant, bundle);
  }
  return bundle;
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
