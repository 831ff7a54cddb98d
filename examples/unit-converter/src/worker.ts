// The service's worker: the orchestrator's conversation workflow and model activity, plus this service's tools.
// Configured by environment: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_TASK_QUEUE, ANTHROPIC_API_KEY (or
// ANTHROPIC_BASE_URL for a local Messages API server), … Stops cleanly on SIGINT / SIGTERM.
import { ConfigError, runWorker } from 'claude-temporal-orchestrator/worker';
import { tools } from './tools';

runWorker({ tools }).catch((error: unknown) => {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
