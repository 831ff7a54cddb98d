// The shapes that cross between the workflow and its activities. Activities implement them (Node side);
// the workflow only schedules them, so it imports nothing but these types.
import type { ContentBlock, MessageParam, StopReason, ToolChoice } from '@anthropic-ai/sdk/resources/messages';
import type { TokenUsage } from './api';
import type { ProtocolName } from './protocols/types';

/** The activity names the orchestrator uses itself; tools may not take them. */
export const MODEL_ACTIVITY = 'callModel';
export const DESCRIBE_TOOLS_ACTIVITY = 'describeTools';
export const RESERVED_ACTIVITY_NAMES: readonly string[] = [MODEL_ACTIVITY, DESCRIBE_TOOLS_ACTIVITY];

/**
 * One model call. It carries only what is new since the previous reply plus a reference to the conversation:
 * the worker keeps the earlier transcript in a cache and asks the workflow (a query) when it does not have it.
 * So history grows with what each turn adds, not with the whole transcript.
 */
export interface CallModelInput {
  conversation: { workflowId: string; runId: string };
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
  request: ModelRequestOptions;
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
  tools: string[];
  toolChoice?: ToolChoice;
  disableParallelToolUse?: boolean;
  promptCaching: boolean;
}

export interface CallModelResult {
  content: ContentBlock[];
  stop_reason: StopReason | null;
  stop_sequence: string | null;
  id: string;
  model: string;
  usage: TokenUsage;
}

/** How the workflow schedules one tool: the worker's tool definition is the source of truth. */
export interface ToolPolicy {
  name: string;
  startToCloseTimeout: string;
  /** A worker that stops heartbeating for this long is taken for dead and the call runs again elsewhere. */
  heartbeatTimeout: string;
  maximumAttempts: number;
  initialInterval: string;
  requiresApproval: boolean;
}

export interface DescribeToolsResult {
  tools: ToolPolicy[];
  /** Requested names the worker does not register. */
  unknown: string[];
}

export interface ToolActivityInput {
  input: Record<string, unknown>;
  encoding: 'json' | 'xml-text';
}

/** Invalid input comes back as data (`ok: false`) at once; a failing handler throws, so Temporal retries it. */
export interface ToolActivityResult {
  ok: boolean;
  content: string;
}
