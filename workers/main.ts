// The worker process: `npm run worker`. Configured by environment (see workers/config.ts).
import { NativeConnection } from '@temporalio/worker';
import { ConfigError, loadConfig } from './config';
import { createAnthropic, createConversationWorker } from './worker';

async function main(): Promise<void> {
  const config = loadConfig();
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
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
  });
  const model = config.ANTHROPIC_API_KEY ? `Claude via ${config.ANTHROPIC_BASE_URL ?? 'api.anthropic.com'}` : `the local Messages API at ${config.ANTHROPIC_BASE_URL}`;
  console.log(`Worker ready on task queue "${config.TEMPORAL_TASK_QUEUE}" (${config.TEMPORAL_ADDRESS}, namespace ${config.TEMPORAL_NAMESPACE}); model: ${model}`);
  await worker.run();
  await connection.close();
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
