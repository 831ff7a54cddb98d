// The OpenTelemetry SDK for one process (a worker, a client, or both in a test): a tracer provider whose spans go to
// an exporter (from the OTEL_* variables by default: OTLP over HTTP), registered as the process's global provider,
// propagator (W3C trace context) and context manager, which Temporal's interceptors use to carry the trace from the
// client through the workflow to its activities.
import * as otel from '@opentelemetry/api';
import { envDetectorSync, Resource } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ConsoleSpanExporter,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import type { ClientInterceptors } from '@temporalio/client';
import type { WorkerInterceptors } from '@temporalio/worker';
import { contentFreeSpanProcessor } from './content-free-span-processor';
import { tracingSettings } from './tracing-settings';
import { type TracedWorkerOptions, tracedWorkerOptions } from './worker-tracing';

/** What the worker and the client need of a running SDK. */
export interface Tracing {
  tracer: otel.Tracer;
  resource: Resource;
  /**
   * Where every span goes, the workflow's too (made inside the workflow sandbox, handed out through a sink): content
   * (exception and status messages, content attributes) is taken off here unless it is to be kept.
   */
  spanProcessor: SpanProcessor;
  /** Prompts, replies and tool input/output on spans (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true). */
  captureContent: boolean;
  /**
   * A worker's interceptors and sinks with tracing added (createConversationWorker calls it, so a worker without
   * tracing loads none of this). With `payloadsProtected` (encryption) no content reaches a span, whatever was asked:
   * from then on no span of this process carries content.
   */
  workerOptions(interceptors: WorkerInterceptors | undefined, payloadsProtected: boolean): TracedWorkerOptions;
  /** For `new Client({ interceptors })` or ConversationClient.connect: a span per start, update, signal and query. */
  clientInterceptors(): ClientInterceptors;
  /** Exports what is pending. */
  flush(): Promise<void>;
  /** Flushes, stops the exporter and unregisters the globals. */
  shutdown(): Promise<void>;
}

export interface StartTracingOptions {
  /** service.name unless OTEL_SERVICE_NAME says otherwise. */
  serviceName: string;
  /** Default: the exporter(s) OTEL_TRACES_EXPORTER names (otlp, console), behind a batching processor. */
  spanProcessor?: SpanProcessor;
  captureContent?: boolean;
  env?: Record<string, string | undefined>;
}

export const INSTRUMENTATION_NAME = 'claude-temporal-orchestrator';

export function startTracing(options: StartTracingOptions): Tracing {
  const env = options.env ?? process.env;
  const resource = new Resource({ 'service.name': options.serviceName }).merge(envDetectorSync.detect());
  const exporting = options.spanProcessor
    ? [options.spanProcessor]
    : exportersFromEnv(env).map((exporter) => new BatchSpanProcessor(exporter));
  const captureContent = options.captureContent ?? tracingSettings(env).captureContent;
  // Content stays on spans only when asked for and no worker of this process encrypts its payloads.
  let keepContent = captureContent;
  const spanProcessor = contentFreeSpanProcessor(
    {
      onStart: (span, context) => exporting.forEach((processor) => processor.onStart(span, context)),
      onEnd: (span) => exporting.forEach((processor) => processor.onEnd(span)),
      forceFlush: async () => void (await Promise.all(exporting.map((processor) => processor.forceFlush()))),
      shutdown: async () => void (await Promise.all(exporting.map((processor) => processor.shutdown()))),
    },
    () => keepContent,
  );
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register();
  const tracing: Tracing = {
    tracer: provider.getTracer(INSTRUMENTATION_NAME),
    resource,
    spanProcessor,
    captureContent,
    workerOptions: (interceptors, payloadsProtected) => {
      if (payloadsProtected) keepContent = false;
      return tracedWorkerOptions(tracing, interceptors, payloadsProtected);
    },
    clientInterceptors: () => ({ workflow: [new OpenTelemetryWorkflowClientInterceptor({ tracer: tracing.tracer })] }),
    flush: () => provider.forceFlush(),
    async shutdown() {
      await provider.shutdown();
      otel.trace.disable();
      otel.context.disable();
      otel.propagation.disable();
    },
  };
  return tracing;
}

/** OTEL_TRACES_EXPORTER (default otlp): otlp over http/protobuf (default) or http/json, and console. */
function exportersFromEnv(env: Record<string, string | undefined>): SpanExporter[] {
  const names = (env.OTEL_TRACES_EXPORTER?.trim() || 'otlp').split(',').map((name) => name.trim());
  return names.map((name) => {
    if (name === 'console') return new ConsoleSpanExporter();
    if (name !== 'otlp') throw new Error(`OTEL_TRACES_EXPORTER: "${name}" is not supported (otlp, console, none)`);
    const protocol =
      env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim() || env.OTEL_EXPORTER_OTLP_PROTOCOL?.trim() || 'http/protobuf';
    // Both exporters read their endpoint, headers and timeout from the OTEL_EXPORTER_OTLP_* variables themselves.
    if (protocol === 'http/protobuf') return new OtlpProtobufExporter();
    if (protocol === 'http/json') return new OtlpJsonExporter();
    throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL: "${protocol}" is not supported (http/protobuf, http/json)`);
  });
}
