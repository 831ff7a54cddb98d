// `claude-temporal-orchestrator/tracing`: OpenTelemetry traces from the client through the workflow to each model and
// tool call. `startTracing()` sets up the SDK (OTLP exporter from the OTEL_* variables by default); pass the result as
// `tracing` to createConversationWorker and `tracing.clientInterceptors()` as a client's `interceptors`. runWorker
// does both from the environment alone.
export { CAPTURE_CONTENT_VARIABLE, type TracingSettings, tracingSettings } from './tracing-settings';
export { INSTRUMENTATION_NAME, startTracing, type StartTracingOptions, type Tracing } from './tracing-sdk';
export { ATTEMPT, CONTENT_ATTRIBUTES, GEN_AI } from './genai-attributes';
export { ContentFreeLogger } from './content-free-logger';
export { describeError } from './content-free';
