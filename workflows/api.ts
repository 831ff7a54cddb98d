// What the conversation workflow and its callers share: input/result types and the message definitions
// (updates, queries, signals). Both sides import this module, so a name is written once.
// Workflow-safe: only @temporalio/workflow and types.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { MessageParam, StopReason, ToolChoice } from '@anthropic-ai/sdk/resources/messages';
import type { ModelContext } from './activity-contracts';
import type { ProtocolName } from './protocols/types';

export const CONVERSATION_WORKFLOW = 'conversation';

/** Everything a conversation can be told at start. Defaults are filled in by `withDefaults`. */
export interface ConversationOptions {
  model: string;
  system?: string;
  /** Names of tools the worker registers; the conversation may use only these. */
  tools: string[];
  protocol: ProtocolName;
  /** `any` and `tool` force a tool on the first model call of each user turn; later calls of the turn use `auto`. */
  toolChoice?: ToolChoice;
  disableParallelToolUse?: boolean;
  /** `max_tokens` of the first attempt; a reply cut off by it is asked again higher up the ladder. */
  maxTokens: number;
  /** The top of the `max_tokens` ladder (defaults to the model's output cap). */
  maxTokensCap?: number;
  /** Cache breakpoints on tools, system prompt and the newest turn (prompt caching). */
  promptCaching: boolean;
  limits: {
    /** Model calls for one user message before the conversation ends with `limit_reached`. */
    maxModelCallsPerTurn: number;
    /** Tool executions for one user message before the conversation ends with `limit_reached`. */
    maxToolCallsPerTurn: number;
    /**
     * The transcript's size (characters of JSON) at which the conversation ends with `limit_reached`: it is carried
     * whole across continue-as-new, in one payload that must stay under Temporal's 2 MB limit.
     */
    maxTranscriptChars: number;
  };
  timeouts: {
    /** How long an open conversation waits for the next user message before it closes. */
    idle: string;
    /** How long a tool call that needs approval waits for a person. */
    approval: string;
    /** One model call (one attempt), and how often it must show signs of life while streaming. */
    modelCall: string;
    modelHeartbeat: string;
  };
  /** Close the conversation after the first reply (a one-shot question). */
  closeAfterFirstReply: boolean;
  /** Continue-as-new after this many model calls in one run even if Temporal does not suggest it yet. */
  continueAsNewAfterModelCalls: number;
}

export type ConversationOptionsInput = Partial<Omit<ConversationOptions, 'limits' | 'timeouts'>> & {
  limits?: Partial<ConversationOptions['limits']>;
  timeouts?: Partial<ConversationOptions['timeouts']>;
};

export const DEFAULT_MODEL = 'claude-sonnet-5-5';

export function withDefaults(input: ConversationOptionsInput): ConversationOptions {
  return {
    model: input.model ?? DEFAULT_MODEL,
    tools: input.tools ?? [],
    protocol: input.protocol ?? 'native',
    maxTokens: input.maxTokens ?? 1024,
    promptCaching: input.promptCaching ?? true,
    closeAfterFirstReply: input.closeAfterFirstReply ?? false,
    continueAsNewAfterModelCalls: input.continueAsNewAfterModelCalls ?? 1000,
    ...(input.system !== undefined && { system: input.system }),
    ...(input.toolChoice !== undefined && { toolChoice: input.toolChoice }),
    ...(input.disableParallelToolUse !== undefined && { disableParallelToolUse: input.disableParallelToolUse }),
    ...(input.maxTokensCap !== undefined && { maxTokensCap: input.maxTokensCap }),
    limits: { maxModelCallsPerTurn: 50, maxToolCallsPerTurn: 200, maxTranscriptChars: 1_500_000, ...input.limits },
    timeouts: { idle: '24 hours', approval: '1 hour', modelCall: '10 minutes', modelHeartbeat: '30 seconds', ...input.timeouts },
  };
}

/**
 * Where a conversation stands. `running`, `awaiting_user` and `awaiting_approval` are open states;
 * the others are final and say why the conversation ended.
 */
export type ConversationStatus =
  | 'running'
  | 'awaiting_user'
  | 'awaiting_approval'
  | 'completed'
  | 'idle_timeout'
  | 'refused'
  | 'context_window_exceeded'
  | 'max_tokens_exhausted'
  | 'limit_reached'
  | 'cancelled'
  | 'failed';

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
}

/** The outcome of one user message: the model's final reply after all its tool calls. */
export interface TurnResult {
  turn: number;
  /** The conversation's status once the turn ended (`awaiting_user` when it can go on). */
  status: ConversationStatus;
  text: string;
  stopReason: StopReason | null;
  modelCalls: number;
  toolCalls: number;
  usage: TokenUsage;
}

/** A `sendMessage` either answers, or says the run moved on (continue-as-new) and the caller should ask the new run. */
export type TurnOutcome = { kind: 'reply'; result: TurnResult } | { kind: 'continued'; turn: number };

export interface PendingApproval {
  callId: string;
  tool: string;
  input: Record<string, unknown>;
  /** A digest of the exact arguments: an approval must name it, so it cannot approve a different call. */
  argumentsDigest: string;
  requestedAt: string;
}

export interface ActivityInProgress {
  kind: 'model' | 'tool';
  name: string;
  startedAt: string;
}

export interface ConversationSnapshot {
  status: ConversationStatus;
  model: string;
  protocol: ProtocolName;
  turns: number;
  modelCalls: number;
  toolCalls: number;
  usage: TokenUsage;
  transcriptLength: number;
  lastText: string;
  pendingApprovals: PendingApproval[];
  running: ActivityInProgress[];
  /** How many runs (continue-as-new) this conversation has gone through. */
  runs: number;
}

export interface ConversationResult {
  status: ConversationStatus;
  text: string;
  turns: number;
  modelCalls: number;
  toolCalls: number;
  usage: TokenUsage;
  transcriptLength: number;
}

/** What a run hands to the next one at continue-as-new. */
export interface CarriedState {
  transcript: MessageParam[];
  /** Turn results the client may still ask for (`awaitTurn`). */
  results: TurnResult[];
  pendingMessages: { turn: number; text: string }[];
  /** A turn interrupted by continue-as-new in the middle of its tool chain. */
  inFlight?: { turn: number; modelCalls: number; toolCalls: number; usage: TokenUsage };
  nextTurn: number;
  modelCalls: number;
  toolCalls: number;
  usage: TokenUsage;
  runs: number;
  lastText: string;
}

export interface ConversationInput {
  options: ConversationOptions;
  /** The first user message, when the conversation is started with one. */
  firstMessage?: string;
  carried?: CarriedState;
}

export interface ApprovalDecision {
  callId: string;
  argumentsDigest: string;
  approve: boolean;
  reason?: string;
}

/** Maximum size of one user message, in characters. */
export const MAX_USER_MESSAGE_CHARS = 200_000;

export const sendMessageUpdate = defineUpdate<TurnOutcome, [text: string]>('sendMessage');
export const awaitTurnUpdate = defineUpdate<TurnOutcome, [turn: number]>('awaitTurn');
export const approveToolCallUpdate = defineUpdate<void, [decision: ApprovalDecision]>('approveToolCall');
export const endConversationSignal = defineSignal('endConversation');
export const stateQuery = defineQuery<ConversationSnapshot>('getState');
export const transcriptQuery = defineQuery<MessageParam[], [range?: { from?: number; to?: number }]>('getTranscript');
/** For the worker's model-call cache: the system prompt and the first `to` messages. */
export const modelContextQuery = defineQuery<ModelContext, [range: { to: number }]>('getModelContext');
