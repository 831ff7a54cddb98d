// `claude-temporal-orchestrator/testing`: what your own tests stand on. A local Messages API server (the real
// Anthropic SDK points at it with `baseURL`) with scripted replies and faults, a Temporal dev server (the official
// CLI's `temporal server start-dev`) with the conversation search attributes, and the demo's tools.
export { startMessagesApi } from './messages-api/server';
export { clientFor, withMessagesApi } from './messages-api/sdk-client';
export type {
  MessagesApi,
  MessagesApiOptions,
  RecordedRequest,
  ScriptBlock,
  ScriptStep,
  ScriptUsage,
} from './messages-api/types';
export type { RateLimits } from './messages-api/rate-limits';
export {
  connectOrStartDevServer,
  type DevServer,
  type DevServerOptions,
  ensureSearchAttributes,
  startDevServer,
} from './dev-server';
export { ensureTemporalCli } from './temporal-cli';
export {
  type ConversationTestEnv,
  type ConversationTestEnvOptions,
  startConversationTestEnv,
} from './conversation-test-env';
export { demoTools } from './demo-tools';
