// `claude-temporal-orchestrator/client`: start, continue, read and list conversations from any service. No tool
// code: the tool names a conversation may ask for come from the `tools` option or from the workers themselves.
export { ConversationClient, type ConversationSummary, type Fork } from './conversation-client';
export type { ForkAt, ForkedFrom } from '../common/fork';
export type {
  ConnectOptions,
  ConversationClientOptions,
  ForkOptions,
  ListFilter,
  SendOptions,
  StartOptions,
  StreamOptions,
  SubmitOptions,
  WaitOptions,
} from './call-options';
export { type AnswerFormat, type TypedTurnResult } from './answer-format';
export { ConversationError, type ConversationErrorCode } from './errors';
export { type EventsOptions } from '../streaming/client/conversation-events';
export { followConversation, type FollowOptions } from './progress';
export { formatMessage, type FormattedLine, renderLine } from './transcript-format';
export {
  type ApprovalDecision,
  type ConversationResult,
  type ConversationSnapshot,
  type ConversationStatus,
  FINAL_STATUSES,
  OPEN_STATUSES,
  type PendingApproval,
  type TokenUsage,
  INVALID_OUTPUT,
  type TurnResult,
} from '../common/conversation-types';
export { type ConversationOptions, type ConversationOptionsInput, DEFAULT_MODEL } from '../common/options';
export { FailureType, ModelFailureType } from '../common/failure-types';
export type { StreamEvent, StreamItem } from '../streaming/stream-events';
export { costUsd, formatUsd, type ModelPrices, PUBLISHED_PRICES, pricesFor } from '../common/pricing';
export type { BudgetOptions } from '../common/budget';
export { promoteBuild, type PromoteBuildOptions, type PromotedBuild } from './worker-deployments';
