// The worker process: `npm run worker`. Configured by environment (see workers/config.ts).
// `--check` validates the configuration and exits without connecting.
import { readFileSync } from 'node:fs';
import { NativeConnection, Runtime } from '@temporalio/worker';
import { encryptingDataConverter } from '../codec/data-converter';
import { ConfigError, loadConfig } from './config';
import { connectionOptions, createAnthropic, createConversationWorker } from './worker';

async function main(): Promise<void> {
  const config = loadConfig();
  if (process.argv.includes('--check')) {
    // Configuration dry run (the Docker image's smoke test): validate, read the TLS files and the bundle, no server.
    connectionOptions(config);
    if (process.env.WORKFLOW_BUNDLE_PATH) readFileSync(process.env.WORKFLOW_BUNDLE_PATH);
    if (config.PAYLOAD_ENCRYPTION_KEYS) encryptingDataConverter(config.PAYLOAD_ENCRYPTION_KEYS);
    console.log(`Worker configuration OK: task queue "${config.TEMPORAL_TASK_QUEUE}" (${config.TEMPORAL_ADDRESS}, namespace ` +
      `${config.TEMPORAL_NAMESPACE}); workflow bundle: ${process.env.WORKFLOW_BUNDLE_PATH ?? 'built at start'}; payload encryption: ` +
      `${config.PAYLOAD_ENCRYPTION_KEYS ? `on (keys ${config.PAYLOAD_ENCRYPTION_KEYS.ids.join(', ')})` : 'off'}`);
    return;
  }
  if (config.WORKER_METRICS_ADDRESS) {
    // Before the first connection: the runtime (and its metrics exporter) is created once per process.
    // Finer buckets than the SDK's default (50, 100, 500 ms...) for request latencies: a completion's round trip is the
    // window in which a crash makes a finished activity run again.
    const buckets = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000];
    Runtime.install({
      telemetryOptions: {
        metrics: { prometheus: { bindAddress: config.WORKER_METRICS_ADDRESS, histogramBucketOverrides: { request_latency: buckets } } },
      },
    });
  }
  const connection = await NativeConnection.connect(connectionOptions(config));
  const worker = await createConversationWorker({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    anthropic: createAnthropic(config),
    toolOptions: {
      ...(config.TOOL_EXECUTION_LOG && { executionLog: config.TOOL_EXECUTION_LOG }),
      latencyMs: config.TOOL_LATENCY_MS,
    },
    ...(process.env.WORKFLOW_BUNDLE_PATH && { workflowBundlePath: process.env.WORKFLOW_BUNDLE_PATH }),
    tuning: {
      maxConcurrentActivityTaskExecutions: config.WORKER_MAX_CONCURRENT_ACTIVITIES,
      maxConcurrentWorkflowTaskExecutions: config.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS,
      maxCachedWorkflows: config.WORKER_MAX_CACHED_WORKFLOWS,
    },
    ...(config.PAYLOAD_ENCRYPTION_KEYS && { dataConverter: encryptingDataConverter(config.PAYLOAD_ENCRYPTION_KEYS) }),
  });
  const model = config.ANTHROPIC_API_KEY ? `Claude via ${config.ANTHROPIC_BASE_URL ?? 'api.anthropic.com'}` : `the local Messages API at ${config.ANTHROPIC_BASE_URL}`;
  const encryption = config.PAYLOAD_ENCRYPTION_KEYS ? `on (current key ${config.PAYLOAD_ENCRYPTION_KEYS.current.id})` : 'off';
  const metrics = config.WORKER_METRICS_ADDRESS ? `; metrics: http://${config.WORKER_METRICS_ADDRESS}/metrics` : '';
  console.log(`Worker ready on task queue "${config.TEMPORAL_TASK_QUEUE}" (${config.TEMPORAL_ADDRESS}, namespace ${config.TEMPORAL_NAMESPACE}); model: ${model}; payload encryption: ${encryption}${metrics}`);
  await worker.run();
  await connection.close();
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
