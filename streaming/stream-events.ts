// What a conversation streams to its readers. Two sources, one sequence:
//   - the durable log (streaming/workflow/conversation-stream.ts): ordered, offset-addressed events that only the workflow
//     appends to, in memory (no history event): turns, each model call's start and final reply, tool calls and
//     results, approvals. Readers read it with a query (getStreamEvents) or a bounded long poll (pollEvents);
//   - the live reply: while a model call runs, the model activity's heartbeat details hold what the API has streamed
//     so far (LiveReply), which readers poll (DescribeWorkflowExecution) and turn into `live` text and tool events.
// Text events carry their position (`at`) in their block, so text seen live and then in the final reply is shown
// once. Types only: this module is workflow-safe.
import type { StopReason } from '@anthropic-ai/sdk/resources/messages';
import type { ConversationStatus, PendingApproval, TokenUsage, TurnFailure } from '../common/conversation-types';

/** A model call is numbered like the conversation's calls (callNumber); each Temporal retry of it is an attempt. */
export interface ModelAttempt {
  call: number;
  attempt: number;
}

export type StreamEvent =
  /** A user message became the current turn. */
  | { type: 'turn_started'; turn: number; text: string }
  /** A model call was scheduled (its attempts stream live until `model_call_finished` or a discard). */
  | {
      type: 'model_call_started';
      call: number;
      /** Present when the call went to a fallback model (the model before it stayed overloaded). */
      model?: string;
    }
  /** Text the model wrote: `text` starts at character `at` of content block `block` of the reply. */
  | ({ type: 'text'; block: number; at: number; text: string } & ModelAttempt)
  /**
   * What the model thought before it wrote (a `thinking` block), like `text`: `text` starts at character `at` of
   * block `block`. `redacted`: a `redacted_thinking` block, whose content is encrypted (no text). Readers may show or
   * hide it; it is never part of the answer's text.
   */
  | ({ type: 'thinking'; block: number; at: number; text: string; redacted?: true } & ModelAttempt)
  /** The model began a tool call: its name first, the input once complete (`tool_call_input`). */
  | ({ type: 'tool_call_started'; block: number; id: string; name: string } & ModelAttempt)
  | ({ type: 'tool_call_input'; block: number; id: string; name: string; input: unknown } & ModelAttempt)
  /**
   * The API ran one of its server tools for the model (web search, web fetch, code execution, tool search): what the
   * model asked (`server_tool_call`), then that it answered (`server_tool_result`, with its `error` code when it
   * failed). Nothing for the conversation to run; the results are in the reply.
   */
  | ({ type: 'server_tool_call'; block: number; id: string; name: string; input: unknown } & ModelAttempt)
  | ({ type: 'server_tool_result'; block: number; toolUseId: string; name: string; error?: string } & ModelAttempt)
  /**
   * Drop what this model call streamed: of attempts up to `attempt` when given (it failed midway and is retried), of
   * every attempt otherwise (the reply was cut by max_tokens and is asked again). The transcript never holds it.
   */
  | {
      type: 'model_output_discarded';
      call: number;
      attempt?: number;
      reason: 'retried' | 'failed' | 'max_tokens';
    }
  /** The model call's reply is final and entered the transcript. */
  | {
      type: 'model_call_finished';
      call: number;
      stopReason: StopReason | null;
      usage: TokenUsage;
      /** What the call cost in USD; null when the model has no price (common/pricing.ts). */
      costUsd?: number | null;
      /** Present when a fallback model answered. */
      model?: string;
    }
  | { type: 'approval_requested'; approval: PendingApproval }
  | { type: 'approval_settled'; callId: string; outcome: 'approved' | 'rejected' | 'timed_out'; agent?: string }
  /**
   * A sub-agent (an agent tool's call) started as a child conversation `agentId`, whose own stream holds its steps;
   * `task` is cut at MAX_STREAMED_RESULT_CHARS.
   */
  | { type: 'agent_started'; callId: string; tool: string; agentId: string; task: string }
  /** The sub-agent ended: how (`status`: its turn's, or `failed`, `timed_out`, `cancelled`) and what it cost. */
  | {
      type: 'agent_finished';
      callId: string;
      tool: string;
      agentId: string;
      status: string;
      isError: boolean;
      usage?: TokenUsage;
      costUsd?: number | null;
    }
  /** A tool call ran (or was refused): what the model reads next. `content` is cut at MAX_STREAMED_RESULT_CHARS. */
  | { type: 'tool_result'; id: string; name: string; isError: boolean; content: string; truncated?: boolean }
  | {
      type: 'turn_finished';
      turn: number;
      status: ConversationStatus;
      text: string;
      stopReason: StopReason | null;
      usage: TokenUsage;
      /** The typed answer, when the turn asked for one (TurnResult.output). */
      output?: unknown;
      /** The turn's cost in USD; null when the model has no price. */
      costUsd?: number | null;
    }
  | { type: 'turn_failed'; turn: number; failure: TurnFailure }
  /** The conversation ended; nothing follows. */
  | { type: 'conversation_ended'; status: ConversationStatus };

/**
 * One event as a reader receives it. `offset` is the event's place in the durable log (the same for every reader, for
 * ever), or, for a `live` event, the offset of the durable event it follows. `cursor` names the position after this
 * event: a reader resumes after it (`events(id, { after })`, the gateway's `Last-Event-ID`).
 */
export interface StreamItem {
  offset: number;
  cursor: string;
  /** From the reply in flight, not (yet) from the log. */
  live?: true;
  /** A tool call this reader was already told of live (the log repeats it; text is never repeated). */
  seen?: true;
  /**
   * The sub-agent (child conversation's id) whose stream this event comes from, when a reader follows a parent's
   * sub-agents (`events(id, { agents })`); absent for the conversation's own events. Its `offset` is then the child's.
   */
  agent?: string;
  event: StreamEvent;
}

/** At most this many events per StreamPage… */
export const STREAM_PAGE_EVENTS = 500;
/** …and at most this many bytes of their JSON (one event more when the first is larger): under the 2 MB payload limit. */
export const STREAM_PAGE_BYTES = 1_000_000;

/**
 * A page of the durable log (the `getStreamEvents` query, the `pollEvents` update): events from an offset, and whether
 * a turn is under way.
 */
export interface StreamPage {
  events: { offset: number; event: StreamEvent }[];
  /** The offset after the last event of the page: where the next read starts. */
  next: number;
  /** The log has events past this page (a page holds at most STREAM_PAGE_EVENTS, STREAM_PAGE_BYTES). */
  more: boolean;
  /** A turn runs, or messages wait for one: more events are coming without anyone writing. */
  busy: boolean;
}

/**
 * What a long poll (`pollEvents`) asks: the events from offset `from`, waiting up to `waitMs` (default and limit
 * MAX_POLL_WAIT_MS) for the first one. It answers at once when the log has one; otherwise when one comes, when the run
 * ends (continue-as-new, the conversation's end) or when the wait is over — with an empty page then.
 */
export interface PollRequest {
  from: number;
  waitMs?: number;
}

/**
 * A long poll holds one of the few updates Temporal lets a workflow have in flight (10 by default) until it answers:
 * it answers within this time even when nothing happens, so a reader that went away frees its slot soon.
 */
export const MAX_POLL_WAIT_MS = 20_000;

/**
 * Long polls a conversation holds at once; more are refused (READERS_BUSY) and those readers read by query instead.
 * Temporal's default of 10 updates in flight then leaves 6 for the updates that carry work: 4 for the callers waiting
 * on a turn (`sendMessage`, `awaitTurn`: workflows/turn-waiters.ts), 2 for those answered at once (`approveToolCall`,
 * `submitMessage`). The gateway shares one reader per conversation, so 4 is room for a few gateways and clients at once.
 */
export const MAX_POLLS_IN_FLIGHT = 4;

/** Why a long poll was refused; the reader reads another way or asks again, it never fails for these. */
export const PollRefusal = {
  /** MAX_POLLS_IN_FLIGHT polls wait already: read by query (getStreamEvents) for a while. */
  ReadersBusy: 'StreamReadersBusy',
  /** The run is ending (continue-as-new, or the conversation's end): ask again, the next run answers. */
  Detached: 'StreamDetached',
} as const;

/** What the model activity heartbeats while a reply streams: the reply so far (the tail of long text blocks). */
export interface LiveReply {
  call: number;
  attempt: number;
  blocks: LiveBlock[];
  /** Where the worker's live relay streams this attempt's reply as it comes (heartbeats only; streaming/worker/live-relay.ts). */
  relay?: string;
  /**
   * Where the same worker streams the conversation's feed (its log's events and its calls' replies as they come, for a
   * whole turn: streaming/worker/live-feed.ts), when the workflow runs there too (heartbeats only).
   */
  feed?: string;
}

export type LiveBlock =
  | { index: number; kind: 'text'; at: number; text: string }
  | { index: number; kind: 'thinking'; at: number; text: string; redacted?: true }
  | { index: number; kind: 'tool'; id: string; name: string; input?: unknown };

/** The most text of one block a live reply carries (its tail): a reader further behind waits for the final reply. */
export const MAX_LIVE_TEXT_CHARS = 8_000;

/** A tool's output is in the history already; the stream carries a readable head of it. */
export const MAX_STREAMED_RESULT_CHARS = 8_000;
