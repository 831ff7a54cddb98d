// What tracing adds to a worker: Temporal's OpenTelemetry interceptors (a span per workflow run, update, activity
// start and activity attempt, with the trace carried in Temporal headers), the GenAI spans of model and tool calls,
// and the sink through which the workflow sandbox hands out its spans. The workflow-side interceptors
// (workflow-interceptors.ts) must be in the workflow bundle: the `traced` bundles hold them, or `workflowModules` when
// bundling at start.
//
// Replay-safe by construction: span ids inside the workflow come from its deterministic random source, and the SDK
// calls the export sink only outside replay, so a worker that replays a history (after a crash, or an eviction from
// its cache) exports no span for a step that already ran.
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type * as otel from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { WorkerInterceptors, WorkerOptions } from '@temporalio/worker';
import { genAiActivityInterceptor } from './genai-activity-interceptor';
import { OTEL_WORKFLOW_INTERCEPTORS } from './workflow-interceptors';

export interface WorkerTracing {
  tracer: otel.Tracer;
  resource: Resource;
  spanProcessor: SpanProcessor;
  captureContent: boolean;
}

export interface TracedWorkerOptions {
  interceptors: WorkerInterceptors;
  sinks: NonNullable<WorkerOptions['sinks']>;
}

/**
 * The worker's interceptors with tracing added (outermost, so a span covers the others' work too), and its sinks.
 * `payloadsProtected` (a payload codec, i.e. encryption, is configured) keeps content off spans whatever was asked.
 */
export function tracedWorkerOptions(
  tracing: WorkerTracing,
  interceptors: WorkerInterceptors | undefined,
  payloadsProtected: boolean,
): TracedWorkerOptions {
  const { tracer } = tracing;
  return {
    interceptors: {
      ...interceptors,
      workflowModules: [OTEL_WORKFLOW_INTERCEPTORS, ...(interceptors?.workflowModules ?? [])],
      activity: [
        (ctx) => ({
          inbound: new OpenTelemetryActivityInboundInterceptor(ctx, { tracer }),
          outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
        genAiActivityInterceptor(tracer, tracing.captureContent && !payloadsProtected),
        ...(interceptors?.activity ?? []),
      ],
    },
    sinks: { exporter: makeWorkflowExporter(plainAttributesOnly(tracing.spanProcessor), tracing.resource) },
  };
}

/** WorkflowInfo fields the SDK's sink copies onto workflow spans that are objects or may hold data, not metadata. */
const DROPPED_WORKFLOW_INFO = new Set([
  'memo',
  'lastResult',
  'lastFailure',
  'searchAttributes',
  'typedSearchAttributes',
]);

/**
 * The SDK's workflow span sink copies the whole WorkflowInfo onto each workflow span (workflowId, runId, … but also
 * memo, search attributes and nested objects). Keep the scalar fields (and arrays of them), which say which
 * workflow a span is of; drop the rest, which is no span attribute and might hold data.
 */
function plainAttributesOnly(processor: SpanProcessor): SpanProcessor {
  const scalar = (value: unknown) => ['string', 'number', 'boolean'].includes(typeof value);
  return {
    onStart: (span, context) => processor.onStart(span, context),
    onEnd(span) {
      const attributes = span.attributes as Record<string, unknown>;
      for (const [key, value] of Object.entries(attributes)) {
        const plain = scalar(value) || (Array.isArray(value) && value.every(scalar));
        if (!plain || DROPPED_WORKFLOW_INFO.has(key)) delete attributes[key];
      }
      processor.onEnd(span);
    },
    forceFlush: () => processor.forceFlush(),
    shutdown: () => processor.shutdown(),
  };
}
