// How a reply goes on the wire: the Message JSON, or the SSE event sequence the real API streams:
//
//   message_start (empty content, usage with the input tokens) → ping
//   → per block: content_block_start, content_block_delta × a few (text_delta / input_json_delta), content_block_stop
//   → message_delta (stop_reason, stop_sequence, cumulative usage) → message_stop
//
// Each event is `event: <type>\ndata: <json>\n\n`. A stream that fails midway sends `event: error` and ends.
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ErrorBody } from './errors';
import type { CacheUsage } from './prompt-cache';
import type { StopReason } from './types';

type Json = Record<string, unknown>;

export type ReplyBlock =
  | { type: 'text'; text: string }
  /** Signed by the server (thinking.ts); streamed as thinking_delta pieces, then one signature_delta. */
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  /** The summary of a compacted conversation; it opens the reply (context-management.ts). */
  | { type: 'compaction'; content: string; encrypted_content: string; signature: string }
  /**
   * `partialJson`: cut off by max_tokens; only this prefix of the input JSON is streamed (JSON answer: `{}`).
   * `inputJson`: the input as this raw JSON text instead of `input` (for inputs JSON.stringify cannot write).
   */
  | { type: 'tool_use'; id: string; name: string; input: unknown; partialJson?: string; inputJson?: string }
  /** A server tool's block (`server_tool_use`, `web_search_tool_result`, …) as the API sends it (server-tools.ts). */
  | { type: 'server'; json: Json };

export interface ReplyUsage extends CacheUsage {
  output_tokens: number;
  /** Of output_tokens, those spent thinking (`output_tokens_details.thinking_tokens`). */
  thinking_tokens?: number;
  /** Per sampling iteration, when the reply took more than one (a compaction, then the answer). */
  iterations?: Json[];
  /** Server tools the reply ran (`usage.server_tool_use`). */
  server_tool_use?: { web_search_requests: number; web_fetch_requests: number } | null;
}

export interface Reply {
  id: string;
  model: string;
  content: ReplyBlock[];
  /** `compaction`: paused after compacting (`pause_after_compaction`); scripts may send any other string, or null. */
  stop_reason: StopReason | 'compaction' | (string & {}) | null;
  stop_sequence: string | null;
  usage: ReplyUsage;
  /** Present when the request asked for context management: the edits applied to its prompt. */
  context_management?: { applied_edits: readonly object[] };
  /** The code execution container the reply ran in (requests that offer code execution). */
  container?: { id: string; expires_at: string };
}

export const PING_INTERVAL_MS = 500;

export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
} as const;

function usageJson(usage: ReplyUsage, outputTokens: number): Json {
  return {
    input_tokens: usage.input_tokens,
    cache_creation_input_tokens: usage.cache_creation_input_tokens,
    cache_read_input_tokens: usage.cache_read_input_tokens,
    cache_creation: { ...usage.cache_creation },
    output_tokens: outputTokens,
    output_tokens_details: usage.thinking_tokens !== undefined ? { thinking_tokens: usage.thinking_tokens } : null,
    server_tool_use: usage.server_tool_use ?? null,
    service_tier: 'standard',
    inference_geo: 'not_available',
    ...(usage.iterations && { iterations: usage.iterations }),
  };
}

function blockJson(block: ReplyBlock): Json {
  if (block.type === 'server') return serverBlockJson(block.json);
  if (block.type === 'text') return { type: 'text', text: block.text, citations: null };
  if (block.type === 'compaction' || block.type === 'thinking' || block.type === 'redacted_thinking')
    return { ...block };
  const input = block.partialJson === undefined ? block.input : {};
  return { type: 'tool_use', id: block.id, name: block.name, input, caller: { type: 'direct' } };
}

/** A server tool's block as the API writes it: server tool calls and web results name their caller. */
function serverBlockJson(json: Json): Json {
  const type = json['type'];
  const called = type === 'server_tool_use' || type === 'web_search_tool_result' || type === 'web_fetch_tool_result';
  return called && json['caller'] === undefined ? { ...json, caller: { type: 'direct' } } : { ...json };
}

function messageShell(reply: Reply): Json {
  return { id: reply.id, type: 'message', role: 'assistant', model: reply.model };
}

/** The JSON text of a tool_use block's input as the reply carries it. */
export function inputJsonOf(block: Extract<ReplyBlock, { type: 'tool_use' }>): string {
  return block.inputJson ?? JSON.stringify(block.input) ?? 'null';
}

/** The non-streaming answer as JSON text: a complete Message, raw `inputJson` inputs written into it as they are. */
export function messageText(reply: Reply): string {
  const raw: string[] = [];
  const marker = (i: number) => `\u0000raw-input-${i}\u0000`;
  const content = reply.content.map((block) => {
    if (block.type !== 'tool_use' || block.inputJson === undefined || block.partialJson !== undefined) return block;
    raw.push(block.inputJson);
    return { ...block, inputJson: undefined, input: marker(raw.length - 1) };
  });
  let text = JSON.stringify(messageJson({ ...reply, content }));
  raw.forEach((json, i) => (text = text.split(JSON.stringify(marker(i))).join(json)));
  return text;
}

/** The non-streaming answer: a complete Message. */
export function messageJson(reply: Reply): Json {
  return {
    ...messageShell(reply),
    content: reply.content.map(blockJson),
    stop_reason: reply.stop_reason,
    stop_sequence: reply.stop_sequence,
    stop_details: null,
    container: reply.container ?? null,
    usage: usageJson(reply.usage, reply.usage.output_tokens),
    ...(reply.context_management && { context_management: reply.context_management }),
  };
}

export function sseEvent(type: string, data: unknown): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** `text` in at most `parts` pieces, never splitting a surrogate pair. */
function pieces(text: string, parts: number): string[] {
  if (text.length === 0) return [];
  const chars = Array.from(text);
  const size = Math.max(1, Math.ceil(chars.length / parts));
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

/** `text` as a model emits it: words with their trailing space, long words in pieces of at most 8 characters. */
export function tokens(text: string): string[] {
  const out: string[] = [];
  for (const word of text.match(/\S*\s*/g) ?? []) {
    if (word === '') continue;
    const chars = Array.from(word);
    for (let i = 0; i < chars.length; i += 8) out.push(chars.slice(i, i + 8).join(''));
  }
  return out;
}

/** One SSE event of a reply, and the text it carries (what a reader sees of it). */
interface WireEvent {
  sse: string;
  text?: string;
  /** A delta: paced streams wait before each one. */
  delta: boolean;
}

function blockEvents(block: ReplyBlock, index: number, paced: boolean): WireEvent[] {
  const out: WireEvent[] = [];
  const split = (text: string) => (paced ? tokens(text) : pieces(text, 3));
  if (block.type === 'server') {
    // A server tool call streams its input like a tool_use; a result block comes whole with its start.
    const json = serverBlockJson(block.json);
    if (json['type'] === 'server_tool_use') {
      out.push({
        delta: false,
        sse: sseEvent('content_block_start', {
          type: 'content_block_start',
          index,
          content_block: { ...json, input: {} },
        }),
      });
      for (const partial_json of split(JSON.stringify(json['input'] ?? {}))) {
        out.push({
          delta: true,
          sse: sseEvent('content_block_delta', {
            type: 'content_block_delta',
            index,
            delta: { type: 'input_json_delta', partial_json },
          }),
        });
      }
    } else {
      out.push({
        delta: false,
        sse: sseEvent('content_block_start', { type: 'content_block_start', index, content_block: json }),
      });
    }
  } else if (block.type === 'compaction') {
    // The signature comes with the start; the summary and its opaque metadata in one compaction_delta.
    out.push({
      delta: false,
      sse: sseEvent('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'compaction', content: null, encrypted_content: null, signature: block.signature },
      }),
    });
    out.push({
      delta: false,
      sse: sseEvent('content_block_delta', {
        type: 'content_block_delta',
        index,
        delta: { type: 'compaction_delta', content: block.content, encrypted_content: block.encrypted_content },
      }),
    });
  } else if (block.type === 'redacted_thinking') {
    out.push({
      delta: false,
      sse: sseEvent('content_block_start', { type: 'content_block_start', index, content_block: { ...block } }),
    });
  } else if (block.type === 'thinking') {
    out.push({
      delta: false,
      sse: sseEvent('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      }),
    });
    for (const thinking of split(block.thinking)) {
      out.push({
        delta: true,
        sse: sseEvent('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'thinking_delta', thinking },
        }),
      });
    }
    out.push({
      delta: false,
      sse: sseEvent('content_block_delta', {
        type: 'content_block_delta',
        index,
        delta: { type: 'signature_delta', signature: block.signature },
      }),
    });
  } else if (block.type === 'text') {
    out.push({
      delta: false,
      sse: sseEvent('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'text', text: '', citations: null },
      }),
    });
    for (const text of split(block.text)) {
      out.push({
        delta: true,
        text,
        sse: sseEvent('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'text_delta', text },
        }),
      });
    }
  } else {
    out.push({
      delta: false,
      sse: sseEvent('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: block.id, name: block.name, input: {}, caller: { type: 'direct' } },
      }),
    });
    const json = block.partialJson ?? inputJsonOf(block);
    for (const partial_json of ['', ...split(json)]) {
      out.push({
        delta: partial_json !== '',
        sse: sseEvent('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json },
        }),
      });
    }
  }
  out.push({ delta: false, sse: sseEvent('content_block_stop', { type: 'content_block_stop', index }) });
  return out;
}

/** Sleeps `ms`, false if `signal` aborted first. */
export async function wait(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  if (ms <= 0) return true;
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}

export interface StreamOptions {
  /** Wait this long after `message_start`, pinging every 500 ms. */
  delayMs: number;
  /** Fail the stream with this error body after that many complete blocks. */
  failure?: { afterBlocks: number; body: ErrorBody };
  /**
   * Emit the content token by token (a word, or 8 characters of a long word or of tool input JSON), this long apart,
   * as a model that generates slowly does. 0: everything at once.
   */
  tokenDelayMs?: number;
  /** Told when each text token goes out (paced streams only). */
  onText?(text: string, at: number): void;
  signal: AbortSignal;
  /** Writes the status line and headers (the server records the status there). */
  writeHead(status: number, headers: Record<string, string>): void;
}

function writable(res: ServerResponse): boolean {
  return !res.destroyed && !res.writableEnded;
}

/** Streams `reply` as server-sent events; resolves when done or when the client went away. */
export async function streamReply(res: ServerResponse, reply: Reply, options: StreamOptions): Promise<void> {
  options.writeHead(200, { ...SSE_HEADERS });
  const start = {
    type: 'message_start',
    message: {
      ...messageShell(reply),
      content: [],
      stop_reason: null,
      stop_sequence: null,
      stop_details: null,
      container: null,
      usage: usageJson({ ...reply.usage, iterations: undefined }, Math.min(1, reply.usage.output_tokens)),
    },
  };
  // Everything that is ready goes out in one write (one syscall): the events are the same, only the TCP chunking
  // differs from a model that generates slowly.
  let out = sseEvent('message_start', start) + sseEvent('ping', { type: 'ping' });
  if (options.delayMs > 0) {
    res.write(out);
    out = '';
    let remaining = options.delayMs;
    while (remaining > 0) {
      const step = Math.min(PING_INTERVAL_MS, remaining);
      if (!(await wait(step, options.signal)) || !writable(res)) return;
      remaining -= step;
      if (remaining > 0) res.write(sseEvent('ping', { type: 'ping' }));
    }
    if (!writable(res)) return;
  }

  const failure = options.failure;
  const tokenDelayMs = options.tokenDelayMs ?? 0;
  for (const [index, block] of reply.content.entries()) {
    if (failure && index >= failure.afterBlocks) break;
    for (const event of blockEvents(block, index, tokenDelayMs > 0)) {
      if (tokenDelayMs > 0 && event.delta) {
        res.write(out);
        out = '';
        if (!(await wait(tokenDelayMs, options.signal)) || !writable(res)) return;
        res.write(event.sse);
        if (event.text !== undefined) options.onText?.(event.text, Date.now());
      } else {
        out += event.sse;
      }
    }
  }
  if (failure) {
    res.end(out + sseEvent('error', failure.body));
    return;
  }
  const delta = {
    type: 'message_delta',
    delta: {
      stop_reason: reply.stop_reason,
      stop_sequence: reply.stop_sequence,
      stop_details: null,
      container: reply.container ?? null,
    },
    usage: {
      input_tokens: reply.usage.input_tokens,
      cache_creation_input_tokens: reply.usage.cache_creation_input_tokens,
      cache_read_input_tokens: reply.usage.cache_read_input_tokens,
      output_tokens: reply.usage.output_tokens,
      ...(reply.usage.thinking_tokens !== undefined && {
        output_tokens_details: { thinking_tokens: reply.usage.thinking_tokens },
      }),
      ...(reply.usage.iterations && { iterations: reply.usage.iterations }),
      ...(reply.usage.server_tool_use && { server_tool_use: reply.usage.server_tool_use }),
    },
    ...(reply.context_management && { context_management: reply.context_management }),
  };
  res.end(out + sseEvent('message_delta', delta) + sseEvent('message_stop', { type: 'message_stop' }));
}
