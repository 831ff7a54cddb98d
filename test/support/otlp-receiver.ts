// An OTLP/HTTP receiver for tests: worker processes export to it with OTEL_EXPORTER_OTLP_PROTOCOL=http/json, and the
// test reads every span it was sent (with its events and status), tagged with the sending process's service.name.
// Only /v1/traces, JSON only.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SpanNode } from '../../tracing/span-tree';

export interface ReceivedSpan extends SpanNode {
  traceId: string;
  service: string;
  /** Events (e.g. `exception`, with `exception.message` and `exception.stacktrace`), attributes as plain values. */
  events: { name: string; attributes: Record<string, unknown> }[];
  status: { code: number; message?: string };
}

export interface OtlpReceiver {
  /** http://127.0.0.1:port: the value for OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string;
  spans(): ReceivedSpan[];
  close(): Promise<void>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
  attributes?: { key: string; value: OtlpValue }[];
  events?: { name: string; attributes?: { key: string; value: OtlpValue }[] }[];
  status?: { code?: number; message?: string };
}
interface OtlpRequest {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: OtlpValue }[] };
    scopeSpans?: { spans?: OtlpSpan[] }[];
  }[];
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: ReceivedSpan[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !req.headers['content-type']?.includes('json')) {
        res.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpRequest;
      for (const resource of body.resourceSpans ?? []) {
        const service = String(valueOf(attribute(resource.resource?.attributes, 'service.name')) ?? '');
        for (const scope of resource.scopeSpans ?? [])
          for (const span of scope.spans ?? []) received.push(spanOf(span, service));
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans: () => [...received],
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function spanOf(span: OtlpSpan, service: string): ReceivedSpan {
  const startNs = BigInt(span.startTimeUnixNano);
  const endNs = BigInt(span.endTimeUnixNano);
  return {
    traceId: hexId(span.traceId),
    spanId: hexId(span.spanId),
    parentSpanId: span.parentSpanId ? hexId(span.parentSpanId) : undefined,
    name: span.name,
    startMs: Number(startNs / 1000n) / 1000,
    durationMs: Number(endNs - startNs) / 1e6,
    attributes: attributesOf(span.attributes),
    service,
    events: (span.events ?? []).map((event) => ({ name: event.name, attributes: attributesOf(event.attributes) })),
    status: { code: span.status?.code ?? 0, ...(span.status?.message && { message: span.status.message }) },
  };
}

function attributesOf(list: { key: string; value: OtlpValue }[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, valueOf(value)]));
}

function attribute(list: { key: string; value: OtlpValue }[] | undefined, key: string): OtlpValue | undefined {
  return list?.find((entry) => entry.key === key)?.value;
}

function valueOf(value: OtlpValue | undefined): unknown {
  if (!value) return undefined;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(valueOf);
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.doubleValue ?? value.boolValue;
}

/** OTLP/JSON ids are hex; some encoders send base64: either way, lower-case hex. */
function hexId(id: string): string {
  return /^[0-9a-f]+$/i.test(id) && (id.length === 32 || id.length === 16)
    ? id.toLowerCase()
    : Buffer.from(id, 'base64').toString('hex');
}
