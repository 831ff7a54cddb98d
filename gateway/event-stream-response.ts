// GET /api/conversations/:id/events as server-sent events: `id: <cursor>`, `event: <type>`, `data: { offset, live?,
// seen?, event }` from the conversation's shared feed (event-feeds.ts). A reader that reconnects sends Last-Event-ID
// and resumes after it. What a slow reader has not taken waits in order up to a cap; past it the stream is ended
// instead of buffered without bound, and the reader resumes like after any drop.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseCursor, type StreamCursor } from '../streaming/client/stream-cursor';
import type { StreamItem } from '../streaming/stream-events';
import type { AgentsMode } from '../streaming/client/sub-agent-streams';
import { watchWithAgents } from './agent-feeds';
import type { EventFeeds } from './event-feeds';
import { describeError, HttpError } from './http-answers';
import { agentsModeSchema, offsetSchema } from './request-schemas';
import { parse } from './request-reading';

/** A comment line this often keeps proxies from closing an idle event stream. */
const KEEP_ALIVE_MS = 15_000;
/** A stream ended for falling behind has this long to flush what it was given before its connection is dropped. */
const STALLED_STREAM_GRACE_MS = 5_000;

/** Where the reader starts: after its Last-Event-ID (a reader reconnecting), else at `?from=N` (default 0). */
export function requestedCursor(req: IncomingMessage, url: URL): StreamCursor {
  // Last-Event-ID is the cursor of the last event the reader has; `from` the first offset it wants.
  const lastEventId = req.headers['last-event-id'];
  if (typeof lastEventId === 'string' && lastEventId.trim() !== '') {
    const parsed = parseCursor(lastEventId);
    if (!parsed) throw new HttpError(400, 'invalid_request', 'Invalid Last-Event-ID: not an event id of this stream.');
    return parsed;
  }
  const from = url.searchParams.has('from') ? parse(offsetSchema, url.searchParams.get('from'), 'from') : 0;
  return { offset: from - 1 };
}

/** `?agents=steps|all|none` (default steps): the sub-agents' events the stream carries too (agent-feeds.ts). */
export function requestedAgents(url: URL): AgentsMode {
  return url.searchParams.has('agents') ? parse(agentsModeSchema, url.searchParams.get('agents'), 'agents') : 'steps';
}

export interface EventStream {
  feeds: EventFeeds;
  id: string;
  cursor: StreamCursor;
  /** The sub-agents' events too: default steps. */
  agents?: AgentsMode;
  /** Bytes that may wait for a reader that does not keep up before the stream is ended. */
  maxBufferBytes: number;
  /** Called once, when the connection closes. */
  closed(): void;
}

/** Answers `res` with the conversation's events after `cursor`, until the conversation ends or the reader leaves. */
export function sendEventStream(
  res: ServerResponse,
  { feeds, id, cursor, agents = 'steps', maxBufferBytes, closed }: EventStream,
): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  // What the response has not taken yet because the reader is behind: sent on 'drain', in order, up to a cap.
  const waiting: string[] = [];
  let waitingBytes = 0;
  let ended = false;
  const send = (text: string): void => {
    if (ended) return;
    if (waiting.length > 0 || res.writableNeedDrain) {
      waiting.push(text);
      waitingBytes += Buffer.byteLength(text);
      if (waitingBytes > maxBufferBytes) fellBehind();
      return;
    }
    res.write(text);
  };
  const flush = (): void => {
    while (waiting.length > 0 && !ended && !res.writableNeedDrain) {
      const text = waiting.shift()!;
      waitingBytes -= Buffer.byteLength(text);
      res.write(text);
    }
  };
  // The reader falls too far behind: what waits is dropped and the stream ends after what it was given (whole
  // events), so the reader resumes after the last event it got. One that reads nothing at all is cut off.
  const fellBehind = (): void => {
    console.warn(
      `gateway: an event stream fell behind by more than ${maxBufferBytes} bytes; ended (the reader resumes with Last-Event-ID)`,
    );
    finish();
    waiting.length = 0;
    waitingBytes = 0;
    res.end();
    setTimeout(() => res.destroy(), STALLED_STREAM_GRACE_MS).unref();
  };
  let stop = (): void => {};
  const keepAlive = setInterval(() => send(': keep-alive\n\n'), KEEP_ALIVE_MS);
  const finish = (): void => {
    if (ended) return;
    ended = true;
    clearInterval(keepAlive);
    stop();
  };
  res.on('drain', flush);
  res.once('close', () => {
    finish();
    closed();
  });
  send('retry: 1000\n\n');
  stop = watchWithAgents(feeds, feeds.client, id, cursor, agents, {
    item: ({ cursor: eventId, ...item }: StreamItem) => {
      send(`id: ${eventId}\nevent: ${item.event.type}\ndata: ${JSON.stringify(item)}\n\n`);
    },
    end: (error) => {
      if (error) {
        const { status, code, message } = describeError(error);
        send(`event: error\ndata: ${JSON.stringify({ status, code, message })}\n\n`);
      }
      if (ended) return;
      // After what still waits for the reader.
      const close = (): void => {
        if (ended) return;
        if (waiting.length > 0) return void res.once('drain', close);
        finish();
        res.end();
      };
      close();
    },
  });
  if (ended) stop();
}
