// What a conversation is made of, as its workflow, its client and its activities see it. Types only, plus a few
// constants: this module is workflow-safe.
import type { MessageParam, StopReason } from '@anthropic-ai/sdk/resources/messages';
import type { UsageByModel } from './fallback-models';
import type { ContextAccounting } from './context-accounting';
import type { ProtocolName } from './protocols/types';
import type { OutputSpec } from './structured-output';
import type { BatchOption } from './batch-mode';
import type { ThreadAnchor } from './threads';
import type { TokenUsage } from './usage';

// Token usage has its own file (usage.ts, a leaf): the files that count it are imported by this one.
export type { TokenUsage } from './usage';

export const CONVERSATION_WORKFLOW = 'conversation';

/** Maximum size of one user message, in characters. */
export const MAX_USER_MESSAGE_CHARS = 200_000;

/** Open statuses: the conversation takes messages (or is working on one). */
export const OPEN_STATUSES = ['running', 'awaiting_user', 'awaiting_approval'] as const;
/** Final statuses: each says why the conversation ended. */
export const FINAL_STATUSES = [
  'completed',
  'idle_timeout',
  'refused',
  'context_window_exceeded',
  'max_tokens_exhausted',
  'limit_reached',
  /** A budget ran out (the `budget` option): per turn, the turn ends so; per conversation, the conversation too. */
  'budget_exhausted',
  'cancelled',
  'failed',
] as const;

export type ConversationStatus = (typeof OPEN_STATUSES)[number] | (typeof FINAL_STATUSES)[number];

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
  /** The answer as data, when the turn asked for a typed answer: checked against its schema (`text` is its JSON). */
  output?: unknown;
  /** What the turn's model calls cost in USD; null when the model has no price (common/pricing.ts). */
  costUsd: number | null;
  /** The turn's usage and cost per model: present when the conversation has fallbackModels. */
  byModel?: UsageByModel;
}

/**
 * How a turn that asked for a typed answer fails when the model's answer does not match the schema, even after it was
 * told once what is wrong (a TurnFailure type). The conversation goes on, from before the turn.
 */
export const INVALID_OUTPUT = 'invalid_output';

/** Why a turn has no reply: `type` is a FailureType, or a model failure's type (e.g. `ModelAuthentication`). */
export interface TurnFailure {
  type: string;
  message: string;
}

/**
 * What a caller waiting on a turn is told: the reply; that the turn failed (the conversation may still go on); or
 * that the run moved on (continue-as-new) and the next run has the answer.
 */
export type TurnOutcome =
  | { kind: 'reply'; result: TurnResult }
  | { kind: 'failed'; turn: number; failure: TurnFailure }
  | { kind: 'continued'; turn: number };

export interface PendingApproval {
  callId: string;
  tool: string;
  input: Record<string, unknown>;
  /** A digest of the exact arguments: an approval must name it, so it cannot approve a different call. */
  argumentsDigest: string;
  requestedAt: string;
  /** The sub-agent (child conversation id) whose call this is; absent for the conversation's own calls. */
  agent?: string;
}

export interface ApprovalDecision {
  callId: string;
  argumentsDigest: string;
  approve: boolean;
  reason?: string;
  /** The sub-agent whose call this decides (PendingApproval.agent), when two of them wait with the same call id. */
  agent?: string;
}

/** A model call or tool call running now. */
export interface ActivityInProgress {
  kind: 'model' | 'tool' | 'agent';
  name: string;
  startedAt: string;
}

/** What a conversation has done so far: in its state (query) and in its result. */
export interface ConversationTotals {
  status: ConversationStatus;
  turns: number;
  modelCalls: number;
  toolCalls: number;
  usage: TokenUsage;
  /** USD so far; null when the model has no price (common/pricing.ts). */
  costUsd: number | null;
  /**
   * Usage and cost per model: present when the conversation has fallbackModels (common/fallback-models.ts) or ran
   * sub-agents (their spending is the conversation's too).
   */
  byModel?: UsageByModel;
  transcriptLength: number;
}

export interface ConversationSnapshot extends ConversationTotals {
  model: string;
  protocol: ProtocolName;
  lastText: string;
  pendingApprovals: PendingApproval[];
  running: ActivityInProgress[];
  /** How many runs (continue-as-new) this conversation has gone through. */
  runs: number;
  /** The model's context: input tokens before and after compaction or clearing, the compactions so far. */
  context: ContextAccounting;
  /** The conversation this one was forked from (common/fork.ts): absent for one that is no fork. */
  forkedFrom?: ForkedFrom;
}

export interface ConversationResult extends ConversationTotals {
  text: string;
  /** A sub-agent's answer to its parent (workflows/agent-calls.ts): how its one turn ended. */
  agentAnswer?: AgentAnswer;
}

/** How a sub-agent's turn ended, for its parent: the model it ran on, its turn's status, its typed answer or failure. */
export interface AgentAnswer {
  model: string;
  status: ConversationStatus;
  output?: unknown;
  failure?: TurnFailure;
}

/** The turn being worked on; its counters restart with every user message. */
export interface TurnInProgress {
  turn: number;
  modelCalls: number;
  toolCalls: number;
  usage: TokenUsage;
  /** USD of the turn's calls (null: unknown); absent in a turn carried from before costs were kept. */
  costUsd?: number | null;
  /** Usage and cost per model (fallbackModels only). */
  byModel?: UsageByModel;
  /** The `max_tokens` rung a cut-off reply forced this turn up to; later calls of the turn start there. */
  maxTokens?: number;
  /** Transcript length when the turn began: a failed turn's messages are taken back out. */
  transcriptStart: number;
  /** The typed answer the turn asks for (its message's, else the conversation's), and the answers checked so far. */
  output?: OutputSpec;
  answerAttempts?: number;
  /** The next model call must call the answer tool (mode `tool`: after a wrong or missing answer). */
  forceAnswer?: boolean;
  /** The turn's message asked for batch mode (or asked it off) for this turn (common/batch-mode.ts). */
  batch?: BatchOption;
  /** The turn's message asked for this priority for the turn's activities and sub-agents (common/fairness.ts). */
  priority?: number;
}

/** A user message waiting for its turn; `output` when this message asked for a typed answer of its own. */
export interface PendingMessage {
  turn: number;
  text: string;
  output?: OutputSpec;
  batch?: BatchOption;
  priority?: number;
}

/**
 * Where turn `turn`'s user message sits in the transcript: index `at`. `joined`: the message joined the user message
 * that was there (a summary, tool results a budget-stopped turn left): its first `joined` blocks are that message.
 * Kept so that a conversation can be forked before a turn (common/fork.ts).
 */
export interface TurnStart {
  turn: number;
  at: number;
  joined?: number;
}

/**
 * The conversation a fork was cut from (common/fork.ts): its id, the run that answered the cut, and the turn the fork
 * was cut before (the fork's first turn), or, with `step`, inside (the fork goes on with that turn after its step).
 */
export interface ForkedFrom {
  workflowId: string;
  runId: string;
  turn: number;
  step?: number;
}

/** What a run hands to the next one at continue-as-new. */
export interface CarriedState {
  transcript: MessageParam[];
  /** Turn outcomes the client may still ask for (`awaitTurn`). */
  outcomes: TurnOutcome[];
  pendingMessages: PendingMessage[];
  currentTurn?: TurnInProgress;
  nextTurn: number;
  modelCalls: number;
  toolCalls: number;
  usage: TokenUsage;
  runs: number;
  lastText: string;
  /** `end()` was asked for: the next run finishes the turns already sent, then completes. */
  endRequested: boolean;
  /** The first run's id: with the workflow id, it makes tool idempotency keys unique to this conversation. */
  firstRunId: string;
  context?: ContextAccounting;
  /** USD so far (null: unknown); absent in a state carried from before costs were kept. */
  costUsd?: number | null;
  /** The last model call's usage: a budget estimates the next run's first call from it. */
  lastCallUsage?: TokenUsage;
  /** Usage and cost per model (fallbackModels only). */
  byModel?: UsageByModel;
  /** The code execution container the API named last, sent back with every call until it expires. */
  container?: ContainerRef;
  /** Threads on: the reply the next call may continue from (common/threads.ts). */
  threadAnchor?: ThreadAnchor;
  /** Threads on, and the API said it cannot thread this conversation's requests: they go whole. */
  threadsUnsupported?: true;
  /** Where each turn still in the transcript began (common/fork.ts); absent in a state carried from before. */
  turnStarts?: TurnStart[];
}

/** A code execution container: its id, and when the API said it expires (ISO 8601). */
export interface ContainerRef {
  id: string;
  expiresAt: string;
}

/** A queued user message: its turn, and the stream offset from which its events can be read. */
export interface SubmittedMessage {
  turn: number;
  offset: number;
}
