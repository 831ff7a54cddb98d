// `claude-temporal-orchestrator/worker`: run conversations with your own tools. `runWorker({ tools })` is a whole
// worker process configured by environment (config.ts); createConversationWorker builds one for your own process.
export { createAnthropic } from './anthropic-client';
export { ConfigError, configSchema, LOCAL_API_KEY, loadConfig, type WorkerConfig } from './config';
export { connectionOptions, connectionSettingsSchema } from '../client/connection-settings';
export { type ConversationWorkerOptions, createConversationWorker, type WorkerDeployment } from './conversation-worker';
export { runWorker, type RunWorkerOptions } from './run-worker';
export {
  type BrokenHistory,
  DEFAULT_REPLAY_CHECK_MAX,
  DEFAULT_REPLAY_CHECK_QUERY,
  replayCheck,
  type ReplayCheckOptions,
  type ReplayCheckResult,
} from './replay-check';
export { PREBUILT_BUNDLES_DIR, prebuiltWorkflowBundle, WORKFLOWS_PATH } from './workflow-bundles';
export { LiveRelay, type LiveRelayOptions } from '../streaming/worker/live-relay';
export { McpClientPool } from '../activities/mcp/mcp-client-pool';
export { type McpServerConfig, type McpServersInput } from '../activities/mcp/mcp-server-config';
