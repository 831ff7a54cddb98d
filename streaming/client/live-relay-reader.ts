// Follows a streaming model call's reply on the live relay of the worker running it (streaming/worker/live-relay.ts), as
// named by the call's heartbeat. Anything unexpected (unreachable, refused, a worker gone silent, a line that is not
// the relay's) ends the following, and the reader goes back to Temporal: the relay is a shortcut, never the record.
import type { LoadedDataConverter, Payload } from '@temporalio/common';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { type LiveBlock, type LiveReply, MAX_LIVE_TEXT_CHARS } from '../stream-events';
import { NdjsonLines, openNdjson, SilenceWatch } from './ndjson-stream';

/** What a heartbeat may name as a relay: http(s), the relay's path and key, nothing else. */
const RELAY_URL = /^https?:\/\/[^/?#\s]+\/live\/[0-9a-f]{32}$/;

export type RelayOutcome = 'ended' | 'failed';

export function isRelayUrl(url: unknown): url is string {
  return typeof url === 'string' && RELAY_URL.test(url);
}

/**
 * Attempt (`call`, `attempt`)'s reply so far, each time the relay adds to it — whole, as a heartbeat carries it (the
 * tail of a long text), so that readers treat both alike; returns 'ended' when the relay said the
 * attempt is over, 'failed' when following stopped for any other reason (or `signal` aborted).
 */
export async function* followRelay(
  url: string,
  expected: { call: number; attempt: number },
  converter: LoadedDataConverter,
  signal?: AbortSignal,
): AsyncGenerator<LiveReply, RelayOutcome, undefined> {
  if (!isRelayUrl(url) || signal?.aborted) return 'failed';
  const abort = new AbortController();
  const stop = () => abort.abort();
  signal?.addEventListener('abort', stop, { once: true });
  const silence = new SilenceWatch(stop);
  try {
    silence.heard();
    const body = await openNdjson(url, abort.signal);
    if (!body) return 'failed';
    const sofar = new LiveReplySoFar(expected);
    const lines = new NdjsonLines();
    for (;;) {
      const { done, value } = await body.read();
      if (done) break;
      silence.heard();
      for (const line of lines.push(value)) {
        const message = line as { reply?: unknown; alive?: unknown; end?: unknown };
        if (message.end === true) return 'ended';
        if (message.alive === true) continue;
        const part = await decodeFromPayloadsAtIndex<LiveReply>(converter, 0, [payloadFromJson(message.reply)]);
        if (!sofar.add(part)) return 'failed';
        yield sofar.reply();
      }
    }
    return 'failed'; // the connection closed without `end`: the worker went away
  } catch {
    return 'failed';
  } finally {
    silence.pause();
    signal?.removeEventListener('abort', stop);
    abort.abort();
  }
}

/** The relay's parts of one attempt's reply, put together. */
export class LiveReplySoFar {
  private readonly blocks = new Map<number, LiveBlock>();

  constructor(private readonly attempt: { call: number; attempt: number }) {}

  /** Adds what `part` says is new; false when it is not a part of this attempt's reply that follows on. */
  add(part: LiveReply | undefined): boolean {
    if (part?.call !== this.attempt.call || part.attempt !== this.attempt.attempt || !Array.isArray(part.blocks)) {
      return false;
    }
    for (const block of part.blocks as unknown[]) {
      const { index, kind } = (block ?? {}) as Partial<LiveBlock>;
      if (!Number.isSafeInteger(index) || index! < 0) return false;
      const had = this.blocks.get(index!);
      if (kind === 'text' || kind === 'thinking') {
        const { at, text, redacted } = block as { at?: unknown; text?: unknown; redacted?: unknown };
        const before = had?.kind === kind ? had : undefined;
        if (had && !before) return false;
        if (at !== (before ? before.at + before.text.length : 0) || typeof text !== 'string') return false;
        const whole = (before?.text ?? '') + text;
        const cut = Math.max(0, whole.length - MAX_LIVE_TEXT_CHARS);
        const tail = { index: index!, at: (before?.at ?? 0) + cut, text: whole.slice(cut) };
        this.blocks.set(
          index!,
          kind === 'text'
            ? { ...tail, kind }
            : {
                ...tail,
                kind,
                ...((redacted === true || (before?.kind === 'thinking' && before.redacted)) && {
                  redacted: true as const,
                }),
              },
        );
      } else if (kind === 'tool') {
        const { id, name, input } = block as { id?: unknown; name?: unknown; input?: unknown };
        if (typeof id !== 'string' || typeof name !== 'string' || (had && had.kind !== 'tool')) return false;
        this.blocks.set(index!, { index: index!, kind, id, name, ...(input !== undefined && { input }) });
      } else {
        return false;
      }
    }
    return true;
  }

  reply(): LiveReply {
    const blocks = [...this.blocks.values()].sort((a, b) => a.index - b.index);
    return { call: this.attempt.call, attempt: this.attempt.attempt, blocks };
  }
}

/** A payload from its JSON form (metadata and data base64); throws on anything else. */
export function payloadFromJson(json: unknown): Payload {
  const { metadata, data } = (json ?? {}) as { metadata?: unknown; data?: unknown };
  if (typeof data !== 'string' || typeof metadata !== 'object' || metadata === null) {
    throw new TypeError('not a payload');
  }
  const decoded: Record<string, Uint8Array> = {};
  for (const [key, value] of Object.entries(metadata)) {
    if (typeof value !== 'string') throw new TypeError('not a payload');
    decoded[key] = Buffer.from(value, 'base64');
  }
  return { metadata: decoded, data: Buffer.from(data, 'base64') };
}
