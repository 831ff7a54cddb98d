// Jaeger v2 (an OpenTelemetry Collector distribution with trace storage and a query API), for `npm run trace-demo`:
// $JAEGER_PATH, else `jaeger` on $PATH, else the cache (${XDG_CACHE_HOME:-~/.cache}/claude-temporal-orchestrator/
// jaeger/v1.76.0/jaeger), else built there from its Go module with the Go toolchain. Jaeger's go.mod has a replace
// directive, which `go install pkg@version` refuses; so the module is downloaded (`go mod download`, checked against
// the checksum database) and built as the main module in its own folder, with its own go.sum. Go module v1.76.0 is
// the Jaeger v2 line (`cmd/jaeger`). Several minutes the first time; a half-built binary is never used.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { cacheRoot, findOnPath } from '../testing/temporal-cli';

export const JAEGER_MODULE = 'github.com/jaegertracing/jaeger';
export const JAEGER_VERSION = 'v1.76.0';

const run = promisify(execFile);

export function cachedJaegerPath(): string {
  return path.join(cacheRoot(), 'jaeger', JAEGER_VERSION, 'jaeger');
}

export async function ensureJaeger(log: (line: string) => void = () => {}): Promise<string> {
  if (process.env.JAEGER_PATH) return process.env.JAEGER_PATH;
  const onPath = await findOnPath('jaeger');
  if (onPath) return onPath;
  const cached = cachedJaegerPath();
  if (fs.existsSync(cached)) return cached;

  const go = await findOnPath('go');
  if (!go) throw new Error(`Jaeger not found: set JAEGER_PATH, put jaeger on PATH, or install Go to build ${cached}`);
  log(`Building Jaeger ${JAEGER_VERSION} from ${JAEGER_MODULE} into ${cached} (several minutes, once)…`);
  const { stdout } = await run(go, ['mod', 'download', '-json', `${JAEGER_MODULE}@${JAEGER_VERSION}`], {
    maxBuffer: 16 * 1024 * 1024,
  });
  const { Dir: moduleDir } = JSON.parse(stdout) as { Dir: string };
  fs.mkdirSync(path.dirname(cached), { recursive: true });
  const partial = `${cached}.${process.pid}.partial`;
  await run(go, ['build', '-trimpath', '-ldflags=-s -w', '-o', partial, './cmd/jaeger'], {
    cwd: moduleDir,
    maxBuffer: 64 * 1024 * 1024,
    timeout: 60 * 60_000,
  });
  fs.renameSync(partial, cached);
  return cached;
}

/** An all-in-one Jaeger on the given loopback ports: OTLP in (gRPC, HTTP), in-memory storage, the query API and UI. */
export function jaegerConfig(ports: { otlpGrpc: number; otlpHttp: number; query: number; queryGrpc: number }): string {
  return `
service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:${ports.query}
    grpc:
      endpoint: 127.0.0.1:${ports.queryGrpc}
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 10000
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:${ports.otlpGrpc}
      http:
        endpoint: 127.0.0.1:${ports.otlpHttp}
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`;
}
