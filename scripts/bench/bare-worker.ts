// The floor's worker process: the same shape as workers/main.ts (one NativeConnection, a pre-built bundle from
// WORKFLOW_BUNDLE_PATH, the same WORKER_MAX_* tuning variables and defaults), only the workflow and activities differ.
//   TEMPORAL_ADDRESS=… TEMPORAL_TASK_QUEUE=… ANTHROPIC_BASE_URL=… WORKFLOW_BUNDLE_PATH=… node --import tsx scripts/bench/bare-worker.ts
import { NativeConnection, Worker } from '@temporalio/worker';
import { configSchema } from '../../workers/config';
import { bareActivities } from './bare-activities';

async function main(): Promise<void> {
  const present = Object.fromEntries(
    Object.entries(process.env).filter(([, value]) => value !== undefined && value !== ''),
  );
  const config = configSchema
    .pick({
      TEMPORAL_ADDRESS: true,
      TEMPORAL_NAMESPACE: true,
      TEMPORAL_TASK_QUEUE: true,
      WORKER_MAX_CONCURRENT_ACTIVITIES: true,
      WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: true,
      WORKER_MAX_CACHED_WORKFLOWS: true,
    })
    .parse(present);
  const bundlePath = process.env.WORKFLOW_BUNDLE_PATH;
  const baseURL = process.env.ANTHROPIC_BASE_URL;
  if (!bundlePath || !baseURL)
    throw new Error('WORKFLOW_BUNDLE_PATH (the bundled bare-workflow.ts) and ANTHROPIC_BASE_URL must be set');
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  const worker = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    workflowBundle: { codePath: bundlePath },
    activities: bareActivities(baseURL),
    maxConcurrentActivityTaskExecutions: config.WORKER_MAX_CONCURRENT_ACTIVITIES,
    maxConcurrentWorkflowTaskExecutions: config.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS,
    maxCachedWorkflows: config.WORKER_MAX_CACHED_WORKFLOWS,
  });
  console.log(`Worker ready (bare chain) on task queue "${config.TEMPORAL_TASK_QUEUE}" (${config.TEMPORAL_ADDRESS})`);
  await worker.run();
  await connection.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
