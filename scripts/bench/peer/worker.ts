// The peer's worker process: @temporalio/ai-sdk's plugin (its model activities, on the AI SDK's Anthropic provider
// pointed at the local Messages API server) and the chain's tools as activities, on the peer's own SDK (1.23). The
// workflow bundle is built through the plugin (it adds the AI SDK's polyfills) once, into PEER_BUNDLE_PATH, and reused
// by every later start. Environment: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_TASK_QUEUE, ANTHROPIC_BASE_URL,
// PEER_BUNDLE_PATH, and the bench's WORKER_MAX_* tuning variables.
import fs from 'node:fs';
import { createAnthropic } from '@ai-sdk/anthropic';
import { AiSdkPlugin } from '@temporalio/ai-sdk';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Worker } from '@temporalio/worker';
import * as tools from './tools';

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} must be set`);
  return value;
}

/** The product worker's defaults (workers/config.ts), so every system runs the same worker shape. */
function int(name: string, fallback: number): number {
  const value = Number(process.env[name] || fallback);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
  return value;
}

async function main(): Promise<void> {
  const plugin = new AiSdkPlugin({
    modelProvider: createAnthropic({ baseURL: `${env('ANTHROPIC_BASE_URL')}/v1`, apiKey: 'bench-peer' }),
  });
  const bundlePath = env('PEER_BUNDLE_PATH');
  if (!fs.existsSync(bundlePath)) {
    const { code } = await bundleWorkflowCode({
      workflowsPath: require.resolve('./workflow'),
      plugins: [plugin],
      logger: new DefaultLogger('WARN'),
    });
    fs.writeFileSync(`${bundlePath}.tmp`, code);
    fs.renameSync(`${bundlePath}.tmp`, bundlePath);
  }
  const connection = await NativeConnection.connect({ address: env('TEMPORAL_ADDRESS') });
  const worker = await Worker.create({
    connection,
    namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
    taskQueue: env('TEMPORAL_TASK_QUEUE'),
    plugins: [plugin],
    workflowBundle: { codePath: bundlePath },
    activities: tools,
    maxConcurrentActivityTaskExecutions: int('WORKER_MAX_CONCURRENT_ACTIVITIES', 2000),
    maxConcurrentWorkflowTaskExecutions: int('WORKER_MAX_CONCURRENT_WORKFLOW_TASKS', 100),
    maxCachedWorkflows: int('WORKER_MAX_CACHED_WORKFLOWS', 2000),
  });
  console.log(`Worker ready (peer: @temporalio/ai-sdk) on task queue "${env('TEMPORAL_TASK_QUEUE')}"`);
  await worker.run();
  await connection.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
