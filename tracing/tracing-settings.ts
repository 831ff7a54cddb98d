// Whether to trace, from the standard OpenTelemetry environment variables only, so a process that never sets them
// loads no OpenTelemetry code at all (this file imports none). Tracing is on when an OTLP endpoint is configured or
// OTEL_TRACES_EXPORTER names an exporter; OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turns it off.

/** Opt-in for prompts, replies, tool arguments and results on spans: the variable OpenTelemetry's GenAI instrumentations read. */
export const CAPTURE_CONTENT_VARIABLE = 'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT';

export interface TracingSettings {
  enabled: boolean;
  /** Content on spans: only when asked for (never by default), and never when payloads are encrypted (the caller's check). */
  captureContent: boolean;
}

export function tracingSettings(env: Record<string, string | undefined> = process.env): TracingSettings {
  const value = (name: string) => env[name]?.trim() || undefined;
  const captureContent = value(CAPTURE_CONTENT_VARIABLE)?.toLowerCase() === 'true';
  if (value('OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return { enabled: false, captureContent };
  const exporters = value('OTEL_TRACES_EXPORTER')
    ?.split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  if (exporters) return { enabled: !exporters.includes('none'), captureContent };
  const endpoint = value('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') ?? value('OTEL_EXPORTER_OTLP_ENDPOINT');
  return { enabled: endpoint !== undefined, captureContent };
}
