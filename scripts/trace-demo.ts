// `npm run trace-demo`: a trace arriving at a real OpenTelemetry receiver. Starts Jaeger v2 (scripts/jaeger.ts: built
// from its Go module once), a Temporal dev server, the local Messages API and the worker process (`workers/main.ts`,
// traced by the OTEL_* variables alone), runs the ticker → price chain from a client traced in this process, then
// reads the trace back from Jaeger's query API and prints its span tree: name, duration and key attributes.
//
//   npm run trace-demo                  everything stops afterwards
//   npm run trace-demo -- --keep        Jaeger's UI stays up to look at the trace (Ctrl-C ends)
import { randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { ConversationClient } from '../client/conversation-client';
import { startDevServer } from '../testing/dev-server';
import { freePorts, isPortOpen } from '../testing/free-port';
import { STOCK_QUESTION, STOCK_TOOLS } from '../testing/messages-api/fixtures';
import { startMessagesApi } from '../testing/messages-api/server';
import { formatSpanTree, type SpanNode } from '../tracing/span-tree';
import { startTracing } from '../tracing/tracing-sdk';
import { ensureJaeger, jaegerConfig } from './jaeger';
import { runMain } from './script-main';
import { spawnWorker } from './worker-process';

interface JaegerTrace {
  spans: {
    spanID: string;
    operationName: string;
    references?: { refType: string; spanID: string }[];
    startTime: number;
    duration: number;
    tags: { key: string; value: unknown }[];
    processID: string;
  }[];
  processes: Record<string, { serviceName: string }>;
}

async function main(): Promise<number> {
  const keep = process.argv.includes('--keep');
  const jaegerPath = await ensureJaeger((line) => console.log(line));
  const [otlpGrpc, otlpHttp, query, queryGrpc] = (await freePorts(4)) as [number, number, number, number];
  const configFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'jaeger-')), 'config.yaml');
  fs.writeFileSync(configFile, jaegerConfig({ otlpGrpc, otlpHttp, query, queryGrpc }));
  const jaeger = spawn(jaegerPath, ['--config', configFile], { stdio: ['ignore', 'ignore', 'pipe'] });
  let jaegerLog = '';
  jaeger.stderr.on('data', (chunk: Buffer) => (jaegerLog = (jaegerLog + chunk.toString()).slice(-4000)));
  const cleanups: (() => Promise<unknown>)[] = [async () => jaeger.kill('SIGTERM')];
  try {
    for (let i = 0; !(await isPortOpen('127.0.0.1', query)) || !(await isPortOpen('127.0.0.1', otlpHttp)); i++) {
      if (i > 300 || jaeger.exitCode !== null) throw new Error(`Jaeger did not start:\n${jaegerLog}`);
      await sleep(100);
    }
    const jaegerUrl = `http://127.0.0.1:${query}`;
    console.log(`Jaeger ${jaegerPath}: OTLP/HTTP on 127.0.0.1:${otlpHttp}, UI and query API ${jaegerUrl}`);

    const server = await startDevServer({ log: () => undefined });
    cleanups.unshift(() => server.stop());
    const mock = await startMessagesApi();
    cleanups.unshift(() => mock.close());
    const taskQueue = `trace-demo-${randomUUID().slice(0, 8)}`;
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${otlpHttp}` };
    console.log('Starting the worker process (tracing on by OTEL_EXPORTER_OTLP_ENDPOINT; bundles the workflows)…');
    const worker = await spawnWorker({
      entry: 'workers/main.ts',
      env: {
        TEMPORAL_ADDRESS: server.address,
        TEMPORAL_NAMESPACE: server.namespace,
        TEMPORAL_TASK_QUEUE: taskQueue,
        ANTHROPIC_BASE_URL: mock.url,
        OTEL_SERVICE_NAME: 'conversation-worker',
        ...otel,
      },
      readyTimeoutMs: 180_000,
    });
    cleanups.unshift(() => worker.kill());

    Object.assign(process.env, otel); // the client's exporter reads its endpoint from the environment too
    const tracing = startTracing({ serviceName: 'trace-demo-client' });
    const connection = await Connection.connect({ address: server.address });
    cleanups.unshift(() => connection.close());
    const client = new Client({ connection, namespace: server.namespace, interceptors: tracing.clientInterceptors() });
    const conversations = new ConversationClient({ client, taskQueue });
    const id = `trace-demo-${randomUUID().slice(0, 8)}`;
    const { traceId, text } = await tracing.tracer.startActiveSpan('trace-demo', async (span) => {
      const reply = await conversations.sendMessage(id, STOCK_QUESTION, {
        start: {
          tools: STOCK_TOOLS,
          closeAfterFirstReply: true,
        },
      });
      await conversations.waitForResult(id);
      span.end();
      return { traceId: span.spanContext().traceId, text: reply.text };
    });
    console.log(`Conversation ${id}: ${text}`);
    await worker.stop(); // SIGTERM: the worker flushes its spans on the way out
    await tracing.shutdown();

    const trace = await readTrace(jaegerUrl, traceId);
    const services = new Set(Object.values(trace.processes).map((p) => p.serviceName));
    console.log(
      `\nTrace ${traceId} from Jaeger's query API: ${trace.spans.length} spans from ${[...services].join(', ')}` +
        `\n${jaegerUrl}/trace/${traceId}\n`,
    );
    console.log(formatSpanTree(trace.spans.map((span) => nodeOf(span, trace))));
    if (keep) {
      console.log('\nJaeger keeps running; Ctrl-C stops it.');
      await new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
    }
    return 0;
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}

/** Polls the query API until the trace holds the workflow run and stops growing (the batches have all arrived). */
async function readTrace(jaegerUrl: string, traceId: string): Promise<JaegerTrace> {
  let last = -1;
  for (let i = 0; i < 100; i++) {
    const response = await fetch(`${jaegerUrl}/api/traces/${traceId}`);
    if (response.ok) {
      const trace = ((await response.json()) as { data?: JaegerTrace[] }).data?.[0];
      const complete = trace?.spans.some((span) => span.operationName === 'RunWorkflow:conversation');
      if (trace && complete && trace.spans.length === last) return trace;
      last = trace?.spans.length ?? -1;
    }
    await sleep(300);
  }
  throw new Error(`Jaeger has no complete trace ${traceId}`);
}

function nodeOf(span: JaegerTrace['spans'][number], trace: JaegerTrace): SpanNode {
  const service = trace.processes[span.processID]?.serviceName ?? '?';
  return {
    spanId: span.spanID,
    parentSpanId: span.references?.find((ref) => ref.refType === 'CHILD_OF')?.spanID,
    name: `${span.operationName} [${service}]`,
    startMs: span.startTime / 1000,
    durationMs: span.duration / 1000,
    attributes: Object.fromEntries(span.tags.map((tag) => [tag.key, tag.value])),
  };
}

if (require.main === module) runMain(main);
