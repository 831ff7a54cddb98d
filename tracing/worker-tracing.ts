// What tracing adds to a worker: Temporal's OpenTelemetry interceptors (a span per workflow run, update, activity
// start and activity attempt, with the trace carried in Temporal headers), the GenAI spans of model and tool calls,
// and the sink through which the workflow sandbox hands out its spans. The workflow-side interceptors must be in the
// workflow bundle (workers/workflow-bundles.ts: the `traced` bundles, or `workflowModules` when bundling at start).
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
import { OTEL_WORKFLOW_INTERCEPTORS } from '../workers/workflow-bundles';

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
    sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
  };
}
