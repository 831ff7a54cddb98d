// Follows a conversation's feed on the worker running it (streaming/worker/live-feed.ts), as named by a model call's
// heartbeat: the log's events in order and the replies of the calls streaming there. A gap in the offsets, a line
// that is not the feed's or a worker gone ends the following, and the reader goes back to Temporal: the feed is a
// shortcut, never the record. After FEED_QUIET_MS with nothing new (a tool runs, the model thinks, the workflow moved
// to another worker, a call streams elsewhere, the conversation waits for a person) the caller looks at Temporal once
// (`stillHere`) and says whether to go on; it looks less often while the feed stays quiet.
import type { LoadedDataConverter } from '@temporalio/common';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import type { LiveReply, StreamEvent } from '../stream-events';
import { LiveReplySoFar, payloadFromJson } from './live-relay-reader';
import { NdjsonLines, openNdjson, SilenceWatch } from './ndjson-stream';

/** What a heartbeat may name as a feed: http(s), the feed's path and key, nothing else. */
const FEED_URL = /^https?:\/\/[^/?#\s]+\/feed\/[0-9a-f]{32}$/;
/**
 * Nothing but `alive` for this long: the reader asks `stillHere`; then twice as long each time it said yes and nothing
 * came meanwhile (a busy worker's queue, a long tool call), up to the last.
 */
export const FEED_QUIET_MS = { first: 3_000, max: 12_000 };

export type FeedItem =
  | { kind: 'durable'; offset: number; event: StreamEvent }
  | { kind: 'live'; call: number; attempt: number; reply: LiveReply };

/** 'ended': the run takes no more readers (it ended or continued as new); 'failed': anything else. */
export type FeedOutcome = 'ended' | 'failed';

export function isFeedUrl(url: unknown): url is string {
  return typeof url === 'string' && FEED_URL.test(url);
}

/** The feed's events from offset `from` on, each once and in order, and its calls' replies so far as they grow. */
export async function* followFeed(
  url: string,
  from: number,
  converter: LoadedDataConverter,
  signal?: AbortSignal,
  /** Called after each FEED_QUIET_MS with nothing new: false leaves the feed. Default: leave. */
  stillHere: () => Promise<boolean> = async () => false,
): AsyncGenerator<FeedItem, FeedOutcome, undefined> {
  if (!isFeedUrl(url) || signal?.aborted) return 'failed';
  const abort = new AbortController();
  const stop = () => abort.abort();
  signal?.addEventListener('abort', stop, { once: true });
  const silence = new SilenceWatch(stop);
  let quietFrom = Date.now();
  let quietMs = FEED_QUIET_MS.first;
  let timer: NodeJS.Timeout | undefined;
  let next = from;
  /**
   * The reply of each attempt streaming here, by `call.attempt`, from its first line (one with no blocks) on. A call
   * that went to a fallback model streams attempts with the numbers of the model before it: the log's
   * `model_call_started` closes the call's earlier replies, and the fallback's first line opens its own.
   */
  const replies = new Map<string, LiveReplySoFar>();
  try {
    silence.heard();
    const body = await openNdjson(`${url}?from=${from}`, abort.signal);
    if (!body) return 'failed';
    const lines = new NdjsonLines();
    // A read stays pending while the caller looks at Temporal: it is handled (the abort at the end rejects it).
    const read = () => {
      const next = body.read();
      next.catch(() => undefined);
      return next;
    };
    let reading = read();
    for (;;) {
      const wait = new Promise<'quiet'>((resolve) => {
        timer = setTimeout(() => resolve('quiet'), quietFrom + quietMs - Date.now());
      });
      const got = await Promise.race([reading, wait]);
      clearTimeout(timer);
      if (got === 'quiet') {
        silence.pause(); // the look may take a while on a busy server
        if (!(await stillHere())) return 'failed';
        silence.heard();
        quietFrom = Date.now();
        quietMs = Math.min(quietMs * 2, FEED_QUIET_MS.max);
        continue;
      }
      reading = read();
      const { done, value } = got;
      if (done) break;
      silence.heard();
      for (const line of lines.push(value)) {
        const message = line as { events?: unknown; reply?: unknown; alive?: unknown; end?: unknown };
        if (message.end === true) return 'ended';
        if (message.alive === true) continue;
        quietFrom = Date.now();
        quietMs = FEED_QUIET_MS.first;
        if (message.events !== undefined) {
          const page = await decodeFromPayloadsAtIndex<{ events?: unknown }>(converter, 0, [
            payloadFromJson(message.events),
          ]);
          if (!Array.isArray(page?.events)) return 'failed';
          for (const entry of page.events as unknown[]) {
            const { offset, event } = (entry ?? {}) as { offset?: unknown; event?: unknown };
            if (typeof offset !== 'number' || typeof (event as { type?: unknown } | null)?.type !== 'string') {
              return 'failed';
            }
            if (offset < next) continue; // had it already
            if (offset > next) return 'failed'; // a gap: the rest comes from Temporal
            next = offset + 1;
            const started = event as StreamEvent;
            if (started.type === 'model_call_started') {
              for (const key of replies.keys()) if (key.startsWith(`${started.call}.`)) replies.delete(key);
            }
            yield { kind: 'durable', offset, event: started };
          }
          continue;
        }
        const part = await decodeFromPayloadsAtIndex<LiveReply>(converter, 0, [payloadFromJson(message.reply)]);
        const { call, attempt } = part ?? {};
        if (!Number.isSafeInteger(call) || !Number.isSafeInteger(attempt)) return 'failed';
        const key = `${call}.${attempt}`;
        const first = Array.isArray(part?.blocks) && part.blocks.length === 0;
        const sofar = first ? new LiveReplySoFar({ call: call!, attempt: attempt! }) : replies.get(key);
        // A line of an attempt whose first line came before the call started again: the model that failed, told late.
        if (!sofar) continue;
        if (!sofar.add(part)) return 'failed';
        if (first) {
          replies.delete(key);
          replies.set(key, sofar);
          // An earlier attempt's reply is final or dropped by now: keep the last few only.
          if (replies.size > 4) replies.delete(replies.keys().next().value!);
        }
        const reply = sofar.reply();
        yield { kind: 'live', call: reply.call, attempt: reply.attempt, reply };
      }
    }
    return 'failed'; // the connection closed without `end`: the worker went away
  } catch {
    return 'failed';
  } finally {
    silence.pause();
    clearTimeout(timer);
    signal?.removeEventListener('abort', stop);
    abort.abort();
  }
}
