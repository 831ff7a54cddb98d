// The public shapes of the local Messages API server: what tests script, what it records, what it returns.
// Plain TypeScript (no zod): tests build these literally.
import type { StopReason } from '@anthropic-ai/sdk/resources/messages';
import type { RateLimits } from './rate-limits';
import type { ThreadErrorCode } from './threads';

export type { StopReason };

/** A text block of a scripted reply. */
export interface ScriptTextBlock {
  type: 'text';
  text: string;
}

/**
 * A tool_use block of a scripted reply. Without `id` the server makes one up (`toolu_…`). What is given goes out as
 * it is, whether the real API would send it or not: a proxy or another model behind the same endpoint can send ids
 * with any characters, repeated ids, and inputs that are not objects.
 */
export interface ScriptToolUseBlock {
  type: 'tool_use';
  id?: string;
  name: string;
  /** Usually an object; anything JSON can hold goes out as it is (a string, null, an array). */
  input?: unknown;
  /** The input as raw JSON text, instead of `input`: for inputs JSON.stringify cannot write (nested 10,000 deep). */
  inputJson?: string;
}

/**
 * The answer of a request with `output_config.format` (structured outputs), as data: it goes out as a text block
 * holding its JSON. The server checks that a scripted final reply to such a request is JSON (the real API's
 * constrained decoding guarantees that much), not that it matches the schema: bounds the API leaves to descriptions
 * (`minimum`, …) are the caller's to check, so a test can script an answer that breaks them.
 */
export interface ScriptJsonBlock {
  type: 'json';
  value: unknown;
}

/**
 * A thinking block of a scripted reply: the server signs it (a block sent back changed is refused as the API refuses
 * it). Scripted with or without `thinking` in the request, as a model that thinks by default answers.
 */
export interface ScriptThinkingBlock {
  type: 'thinking';
  thinking: string;
}

/** A redacted thinking block: the server encrypts `thinking` into its `data` (default: a fixed sentence). */
export interface ScriptRedactedThinkingBlock {
  type: 'redacted_thinking';
  thinking?: string;
}

/**
 * A server tool call the API ran for the model (`web_search`, `web_fetch`, `code_execution`, `bash_code_execution`,
 * `tool_search_tool_regex`, …); its id is made up when not given. Web searches and fetches count in
 * `usage.server_tool_use`.
 */
export interface ScriptServerToolUseBlock {
  type: 'server_tool_use';
  id?: string;
  name: string;
  input: unknown;
}

/**
 * A server tool's result as the API writes it (`content` as its type has it: search results, a fetched document,
 * program output, tool references, or an error object); `tool_use_id` defaults to the last server tool call's.
 */
export interface ScriptServerToolResultBlock {
  type:
    | 'web_search_tool_result'
    | 'web_fetch_tool_result'
    | 'code_execution_tool_result'
    | 'bash_code_execution_tool_result'
    | 'text_editor_code_execution_tool_result'
    | 'tool_search_tool_result';
  tool_use_id?: string;
  content: unknown;
}

export type ScriptBlock =
  | ScriptTextBlock
  | ScriptToolUseBlock
  | ScriptJsonBlock
  | ScriptThinkingBlock
  | ScriptRedactedThinkingBlock
  | ScriptServerToolUseBlock
  | ScriptServerToolResultBlock;

/** Usage counters a scripted step may pin; the rest is computed (token estimate, prompt cache). */
export interface ScriptUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

/**
 * One scripted answer, taken in order from the queue of the conversation it matches (see `MessagesApi.script`).
 *
 * Every step may carry `delayMs`: the answer is that much slower (on top of the server's latency). A streaming
 * answer sends its headers and `message_start` at once, then `event: ping` every 500 ms while it waits, then the
 * content — so the connection stays alive and only a client-side timeout/abort ends it early. A JSON answer (and
 * any HTTP error) simply comes later.
 */
export type ScriptStep =
  /** Answer with exactly this content and stop reason (streamed or as JSON, as the request asked). */
  | {
      fault?: never;
      reply: {
        content: ScriptBlock[];
        /** Any string (or null) goes out as it is: a proxy may send a stop reason the API does not define. */
        stop_reason: StopReason | (string & {}) | null;
        stop_sequence?: string | null;
        usage?: ScriptUsage;
      };
      delayMs?: number;
      /** Stream the content token by token, this many ms apart (overrides the server's `tokenDelayMs`). */
      tokenDelayMs?: number;
    }
  /** Let the built-in demo model answer this request (useful with `delayMs` for a slow but normal reply). */
  | { fault?: never; demo: true; delayMs?: number; tokenDelayMs?: number }
  /**
   * Answer with an HTTP error: `{type:'error', error:{type, message}, request_id}`. `errorType` defaults from the
   * status (400 invalid_request_error, 401 authentication_error, 402 billing_error, 403 permission_error,
   * 404 not_found_error, 408 timeout_error, 409 conflict_error, 413 request_too_large, 429 rate_limit_error,
   * 500 api_error, 504 timeout_error, 529 overloaded_error; other 4xx invalid_request_error, other 5xx api_error).
   * `headers` are added to the response as given (e.g. `retry-after`, `retry-after-ms`, `x-should-retry`).
   */
  | {
      fault: 'status';
      status: number;
      errorType?: string;
      message?: string;
      headers?: Record<string, string>;
      delayMs?: number;
    }
  /** Destroy the socket without answering (the SDK sees a connection error). */
  | { fault: 'connection-reset'; delayMs?: number }
  /**
   * A stream that starts normally (200, `message_start`, `afterBlocks` complete text blocks, default 1) and then
   * sends `event: error` with `{type:'error', error:{type: errorType ?? 'overloaded_error', message}}` and ends.
   * A non-streaming request gets that error as an HTTP status instead (overloaded_error → 529, api_error → 500, …).
   */
  | {
      fault: 'stream-error';
      afterBlocks?: number;
      errorType?: string;
      message?: string;
      delayMs?: number;
      tokenDelayMs?: number;
      /** The text of the blocks sent before the error (default: "Partial reply, part N, before the stream failed."). */
      text?: string;
      /**
       * What `message_start` reports (its output tokens are at most 1, as the API's are); no `message_delta` follows.
       * What the attempt billed is that prompt and what it streamed.
       */
      usage?: ScriptUsage;
    }
  /**
   * A reply cut off by `max_tokens` in the middle of a tool_use: optional text block, then the tool_use whose
   * input JSON is streamed only up to `cutAt` characters (default: half), `stop_reason: 'max_tokens'`.
   * As JSON: the tool_use block with `input: {}` and `stop_reason: 'max_tokens'`.
   */
  /**
   * A thread refusal (threads.ts), whatever the request: 404 `thread_not_found`, or 400 `thread_already_continued`,
   * `thread_continue_in_flight`, `thread_fingerprint_mismatch`, `thread_unsupported_request` (with `unsupported`,
   * default `['thinking']`), each with `details.error_code` as the API sends it.
   */
  | {
      fault: 'thread';
      error: ThreadErrorCode;
      message?: string;
      unsupported?: string[];
      delayMs?: number;
    }
  /**
   * Inside a Message Batch, shapes this request's result line: `expired`, a `malformed` line (not JSON), or a line
   * under an `unknown_custom_id`. Outside a batch the demo model answers.
   */
  | { fault: 'batch-result'; result: 'expired' | 'malformed' | 'unknown_custom_id'; delayMs?: number }
  | {
      fault: 'truncated-tool-use';
      text?: string;
      tool: { name: string; input: Record<string, unknown> };
      cutAt?: number;
      delayMs?: number;
    };

/** One HTTP request the server received, in arrival order. */
export interface RecordedRequest {
  /** `Date.now()` when the request arrived. */
  at: number;
  method: string;
  /** Path without the query string, e.g. `/v1/messages`. */
  path: string;
  /** Lower-cased header names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  /** The parsed JSON body (the raw text when it was not JSON, `undefined` when empty). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary request fields
  body: any;
  /** The HTTP status answered; 0 while still pending, and for a `connection-reset` (nothing was answered). */
  status: number;
  /** The script key whose step answered this request (absent when the demo model or an error answered). */
  match?: string;
  /**
   * A request that continues a thread: the first user message's text of the conversation the thread holds, which
   * scripts and `requestsFor` match (the body itself carries only the new messages).
   */
  threadText?: string;
  /** Whether the request asked for a stream (`"stream": true`). */
  stream: boolean;
  /** Paced streams only: each text token and when it was written (`Date.now()`). */
  emitted?: { text: string; at: number }[];
}

/**
 * How startMessagesApi's local server listens and answers.
 * @example
 * const api = await startMessagesApi({ tokenDelayMs: 5 });
 */
export interface MessagesApiOptions {
  /**
   * Interface to bind.
   * @default '127.0.0.1'
   */
  host?: string;
  /**
   * Port; 0 takes any free port.
   * @default 0
   */
  port?: number;
  /**
   * Latency added before every answer, in ms.
   * @default 0
   */
  latencyMs?: number;
  /**
   * Streams go out token by token (a word, or 8 characters of a long word or of tool input JSON), this many ms apart,
   * like a model that generates slowly; each text token's time is recorded (`RecordedRequest.emitted`). 0: each reply
   * at once. A script step's `tokenDelayMs` overrides it.
   * @default 0
   */
  tokenDelayMs?: number;
  /**
   * Clock for the prompt cache's 5-minute / 1-hour TTLs; lets tests expire entries.
   * @default Date.now
   */
  now?: () => number;
  /**
   * The model's context window in input tokens: a longer prompt, after any context management, is answered 400
   * `prompt is too long`. Tests set a small one to run out of context quickly.
   * @default 1_000_000
   * @example 20_000
   */
  contextWindowTokens?: number;
  /**
   * How long a Message Batch stays `in_progress` at least, in ms (its requests are answered at once; the results are
   * released together once this has passed). Env of the CLI: `MESSAGES_API_BATCH_DELAY_MS`.
   * @default 200
   * @example 2_000
   */
  batchDelayMs?: number;
  /**
   * Per-minute rate limits per model, enforced as the API enforces them (token buckets that refill continuously; 429
   * `rate_limit_error` with `retry-after`; `anthropic-ratelimit-*` headers on every `/v1/messages` response). Each
   * limit is optional; none (the default) is no limit. Env of the CLI: `MESSAGES_API_RATE_LIMITS` (this JSON).
   * Message Batches and `count_tokens` are not limited.
   * @default null
   * @example { inputTokensPerMinute: 40_000 }
   */
  rateLimits?: RateLimits | null;
}

export interface MessagesApi {
  /** Base URL for the SDK (`new Anthropic({ baseURL: server.url })`), e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /**
   * Queue replies for conversations whose FIRST user message text contains `match`. Each matching request takes the
   * next step; once the queue is empty (or when nothing matches) the built-in demo model answers. Calling it again
   * with the same `match` appends to that queue. When several keys match, the longest key with steps left wins.
   */
  script(match: string, steps: ScriptStep[]): void;
  /** The Messages API requests (`/v1/messages`) whose first user message contains `match` — the rule of `script` — in order. */
  requestsFor(match: string): RecordedRequest[];
  /** Latency added before every answer (default 0). */
  setLatency(ms: number): void;
  /** The context window, in input tokens, from now on. */
  setContextWindow(tokens: number): void;
  /** Time between streamed tokens (default 0: each reply at once). */
  setTokenDelay(ms: number): void;
  /** How long a Message Batch stays `in_progress` at least, from now on (default 200 ms). */
  setBatchDelay(ms: number): void;
  /**
   * Per-minute rate limits from now on, with full buckets (`null` or `{}`: none); throws on a limit that is not a
   * positive integer. Over HTTP: `POST /_test/rate-limits` with the same JSON.
   */
  setRateLimits(limits: RateLimits | null): void;
  /** Resolves once every request of every Message Batch so far has been answered. */
  batchesAnswered(): Promise<void>;
  /** Clear the scripts, the recorded requests, the prompt cache and the batches; refill the rate-limit buckets. */
  reset(): void;
  /** Stop listening; destroys open sockets (streams in progress end abruptly). */
  close(): Promise<void>;
}
