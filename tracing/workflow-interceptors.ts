// Temporal's OpenTelemetry interceptors on the workflow side: the module a traced workflow bundle includes. Here, with
// the rest of tracing, so that tracing/ (which workers/ builds on) never imports workers/ back; only the path, so that
// a worker without tracing loads nothing of OpenTelemetry for it.

/** The module a traced bundle includes (resolved, never loaded here). */
export const OTEL_WORKFLOW_INTERCEPTORS =
  require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');
