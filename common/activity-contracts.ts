// The shapes that cross between the workflow and its activities. Activities implement them (Node side);
// the workflow only schedules them, so it imports nothing but these types.
import type { BetaContextManagementConfig } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { MessageParam, StopReason, ToolChoice } from '@anthropic-ai/sdk/resources/messages';
import type { CallGuard } from './budget';
import type { ReplyBlock } from './compaction';
import type { CallContext } from './context-accounting';
import type { ModelPrices } from './pricing';
import type { ContainerRef } from './conversation-types';
import type { TokenUsage } from './usage';
import { CALL_MCP_TOOL_ACTIVITY, LIST_MCP_SERVERS_ACTIVITY, LIST_MCP_TOOLS_ACTIVITY } from './mcp';
import type { ProtocolName } from './protocols/types';
import type { ServerToolsOption } from './server-tools';
import type { OutputSpec } from './structured-output';
import type { Effort, ThinkingOption } from './thinking';
import type { ThreadRequest, ThreadUse } from './threads';
import type { ToolPolicy } from './tool-policy';
import type { BatchMode } from './batch-mode';

export type { ToolPolicy } from './tool-policy';

/** The activity names the orchestrator uses itself; tools may not take them. */
export const MODEL_ACTIVITY = 'callModel';
export const DESCRIBE_TOOLS_ACTIVITY = 'describeTools';
export const LIST_TOOLS_ACTIVITY = 'listTools';
/** The orchestrator's own compaction: one model call that summarises the older part of the transcript. */
export const SUMMARISE_ACTIVITY = 'summariseContext';
/** Budgets: the next call's prompt counted by the API (count_tokens), and the model's prices (a local activity). */
export const COUNT_TOKENS_ACTIVITY = 'countPromptTokens';
export const MODEL_PRICES_ACTIVITY = 'modelPrices';
/** A typed answer checked against its schema (a local activity: workflows/answer-check.ts). */
export const CHECK_ANSWER_ACTIVITY = 'checkTypedAnswer';
/** Batch mode (common/batch-mode.ts): a model call submitted to a Message Batch, its result polled, its batch cancelled. */
export const SUBMIT_BATCHED_CALL_ACTIVITY = 'submitBatchedModelCall';
export const CHECK_BATCHED_CALL_ACTIVITY = 'checkBatchedModelCall';
export const CANCEL_BATCHED_CALL_ACTIVITY = 'cancelBatchedModelCall';
export const RESERVED_ACTIVITY_NAMES: readonly string[] = [
  MODEL_ACTIVITY,
  COUNT_TOKENS_ACTIVITY,
  MODEL_PRICES_ACTIVITY,
  CHECK_ANSWER_ACTIVITY,
  SUBMIT_BATCHED_CALL_ACTIVITY,
  CHECK_BATCHED_CALL_ACTIVITY,
  CANCEL_BATCHED_CALL_ACTIVITY,
  DESCRIBE_TOOLS_ACTIVITY,
  LIST_TOOLS_ACTIVITY,
  SUMMARISE_ACTIVITY,
  LIST_MCP_SERVERS_ACTIVITY,
  LIST_MCP_TOOLS_ACTIVITY,
  CALL_MCP_TOOL_ACTIVITY,
];

/**
 * A model call's activity id: `model-<call>` on the conversation's model, `model-<call>-fallback-<n>` on the n-th model
 * of its `fallbackModels` (an activity of its own, whose attempts count from 1 again).
 */
export function modelActivityId(call: number, fallback: number): string {
  return fallback === 0 ? `model-${call}` : `model-${call}-fallback-${fallback}`;
}

/** The call (and fallback) a model activity id names; undefined for any other id. */
export function parseModelActivityId(id: string): { call: number; fallback: number } | undefined {
  const match = /^model-([1-9]\d{0,14})(?:-fallback-([1-9]\d{0,2}))?$/.exec(id);
  return match ? { call: Number(match[1]), fallback: Number(match[2] ?? 0) } : undefined;
}

/** The workflow a client runs to learn which tools the workers of a task queue register (workflows/tool-catalog.ts). */
export const TOOL_CATALOG_WORKFLOW = 'toolCatalog';

/** What the workers of a task queue offer: their tools, and the MCP servers they are configured with. */
export interface ToolCatalog {
  tools: string[];
  mcpServers: string[];
}

/**
 * One model call. It carries only what is new since the previous reply plus a reference to the conversation:
 * the worker keeps the earlier transcript in a cache and asks the workflow (a query) when it does not have it.
 * So history grows with what each turn adds, not with the whole transcript.
 */
/** A conversation's run: where the worker's caches keep what they know of it, and whom they query when they do not. */
export interface ConversationRun {
  workflowId: string;
  runId: string;
}

export interface CallModelInput {
  /** The format it was written in (common/input-format.ts); absent: format 1. A worker answers in the same format. */
  v?: number;
  /**
   * The conversation's run. Absent in what the workflow sends now: the activity is that run's (withConversation in
   * activities/model-context-cache.ts takes it from the activity's info); inputs recorded by 0.1.0 name it.
   */
  conversation?: ConversationRun;
  /** Model calls so far in the conversation; the legacy protocol derives call ids from it. */
  callNumber: number;
  /** How many messages the request carries in all. */
  transcriptLength: number;
  /** The last messages of the transcript, those added since the previous reply. */
  newMessages: MessageParam[];
  /**
   * Present when `newMessages` is the whole transcript (a conversation's first call): the call then carries all it
   * needs, the system prompt included, and the worker asks the workflow nothing. Later calls leave the system
   * prompt out; the worker has it cached with the transcript, or reads both by query.
   */
  fullContext?: { system?: string };
  /**
   * The id of the model reply the earlier transcript ends with. A worker's cached copy counts only if it ends with
   * this very reply: a late attempt whose result the server had already given up on must not stand in for it.
   */
  afterReply?: string;
  /** Present when the reply streams: the activity heartbeats the reply so far at most once per interval. */
  stream?: { intervalMs: number };
  request: ModelRequestOptions;
  /**
   * Present when the call may go to another model (fallbackModels): from this attempt on, an overloaded model is given
   * up (ModelOverloaded, not retried) instead of retried.
   */
  fallbackAfter?: number;
  /** Present when the conversation has a budget: a retry of a failed attempt is checked against it too. */
  guard?: CallGuard;
  /**
   * The transcript ends with a turn the API paused (`pause_turn`): the request sends it back as it is, and the reply
   * joins that assistant message (common/paused-turn.ts) instead of following it.
   */
  joinsPausedTurn?: true;
  /**
   * Present when the conversation has threads on (common/threads.ts): with `continueFrom`, the first attempt sends
   * only `newMessages` (the messages after that reply) as a continue of its thread; otherwise, and on every later
   * attempt, the whole conversation as a new thread.
   */
  thread?: ThreadRequest;
}

/** What the worker reads from the workflow (query) when its cache lacks a conversation's context. */
export interface ModelContext {
  system?: string;
  messages: MessageParam[];
  /** The id of the reply the messages end with, when they end with one. */
  lastReplyId?: string;
}

export interface ModelRequestOptions {
  model: string;
  maxTokens: number;
  protocol: ProtocolName;
  /** The tools to offer, by name: the worker's own, then MCP tools of the set `mcpToolSet`. */
  tools: string[];
  /** The digest of the run's MCP tool list (ListMcpToolsResult) that the MCP names in `tools` come from. */
  mcpToolSet?: string;
  toolChoice?: ToolChoice;
  disableParallelToolUse?: boolean;
  promptCaching: boolean;
  /** Compaction and context editing by the API (common/context-options.ts): the beta request's fields. */
  contextManagement?: { config: BetaContextManagementConfig; betas: string[] };
  /** A typed answer: `output_config.format` (native) or the answer tool after the others (tool). */
  output?: OutputSpec;
  /** The request's `thinking` (common/thinking.ts); absent: the model's default. */
  thinking?: ThinkingOption;
  /** `output_config.effort`; absent: the model's default. */
  effort?: Effort;
  /** The API's server tools to offer, and which of `tools` tool search defers (common/server-tools.ts). */
  serverTools?: ServerToolsOption;
  /** The code execution container to run in (the id the API named in an earlier reply). */
  container?: string;
}

export interface CallModelResult {
  /** A compaction block, when the API compacted the context, comes first. */
  content: ReplyBlock[];
  stop_reason: StopReason | null;
  /** Absent when null (history bytes: most replies stop without one). */
  stop_sequence?: string | null;
  id: string;
  model: string;
  /** Summed over the call's iterations: a compaction's own tokens are billed too. */
  usage: TokenUsage;
  /**
   * The context the reply was sampled from, when the API compacted or cleared anything; absent when it is just the
   * usage's prompt (contextOfUsage in common/context-accounting.ts).
   */
  context?: CallContext;
  /** The activity attempt that produced the reply: readers drop what other attempts streamed live. */
  attempt?: number;
  /** The code execution container the reply ran in, when it ran in one. */
  container?: ContainerRef;
  /** What the attempts before it billed (they failed mid-stream): counted like the reply's own usage. */
  failedAttempts?: TokenUsage;
  /** With threads on: whether the call created, continued or fell back to a new thread, or went unthreaded. */
  thread?: ThreadUse;
}

/**
 * The orchestrator's compaction: the context is assembled like a model call's (the worker's cache, or a query), and
 * its first `summariseUpTo` messages are summarised.
 */
export interface SummariseContextInput extends CallModelInput {
  summariseUpTo: number;
  instructions?: string;
}

export interface SummariseContextResult {
  summary: string;
  /** The summary call's message id: the worker's cache now holds the transcript as it is after the summary. */
  id: string;
  usage: TokenUsage;
  /** Input tokens of the whole context before it was summarised. */
  inputTokensBefore: number;
  /** What the attempts before it billed (they failed mid-stream). */
  failedAttempts?: TokenUsage;
}

export interface DescribeToolsResult {
  tools: ToolPolicy[];
  /** Requested names the worker does not register. */
  unknown: string[];
  /**
   * The prices of the model it was asked about (null: the worker knows none), so a conversation's start takes one local
   * activity, not two. Absent in the results of runs from before, which read them with the modelPrices activity.
   */
  prices?: ModelPrices | null;
}

export interface ToolActivityInput {
  /** The arguments as the model wrote them; the protocol decodes them before the tool's schema checks them. */
  input: Record<string, unknown>;
  protocol: ProtocolName;
  /**
   * `<workflowId>/<first run id>/<call ref>` (ToolCall.ref: the model call's number and the call's place in the
   * reply; runs begun before that used the tool_use id): the same for every attempt of this call, and never the same
   * for another call, even of a conversation that reuses the id after this one closed.
   */
  idempotencyKey: string;
}

/** Invalid input comes back as data (`ok: false`) at once; a failing handler throws, so Temporal retries it. */
export interface ToolActivityResult {
  ok: boolean;
  content: string;
}

/** A typed answer to check: the reply's text (mode `native`) or the answer tool's input (mode `tool`). */
export interface CheckAnswerInput {
  schema: Record<string, unknown>;
  answer: { text: string } | { value: unknown };
}

/**
 * The check's verdict as the history records it. An accepted answer carries its value only when the check changed it
 * (a `default` filled in, keys in the schema's order): otherwise the value is the answer the history already holds in
 * the model's reply, and recording it twice would double a typed answer's bytes.
 */
export type RecordedAnswerCheck = { ok: true; value?: unknown } | { ok: false; error: string };

/** A model call in batch mode, to submit: the call as callModel takes it (never streamed nor threaded), and its window. */
export interface SubmitBatchedCallInput extends CallModelInput {
  batch: BatchMode;
}

/** Where a submitted call is: its batch and its `custom_id` in it. */
export interface BatchedCall {
  batchId: string;
  customId: string;
}

/** A submitted call to look at: its batch, and what reading its reply needs. */
export interface CheckBatchedCallInput extends BatchedCall {
  callNumber: number;
}

/**
 * A batched call's state: still `pending` (the batch's processing status), its `reply`, or `resubmit` — its request
 * expired, was cancelled, failed in a way worth another try, or has no readable result line (`reason` says which).
 * A request the API refused for good fails the activity (not retried), like callModel's.
 */
export type BatchedCallCheck =
  | { kind: 'pending'; status: string }
  | { kind: 'reply'; reply: CallModelResult }
  | { kind: 'resubmit'; reason: string };
