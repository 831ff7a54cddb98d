// The live relay: a small HTTP server in the worker from which readers take a streaming model call's reply as it is
// written, instead of polling its heartbeats through the Temporal server. Every heartbeat is a persistence write and
// every look a DescribeWorkflowExecution; at 100 streaming conversations those halved throughput. The relay costs the
// server nothing: the call's first heartbeat names its relay address, readers that can reach it follow it, and the
// heartbeats go on, fewer, carrying the reply so far for readers that cannot (Temporal stays the fallback, and the
// final reply in the history stays the record).
//
//   GET /live/<key>   application/x-ndjson, one JSON object per line:
//     {"reply": <payload>}   what the reply added since the last line (LiveReply, encoded by the worker's data
//                            converter: with payload encryption the relay carries ciphertext, like the heartbeats)
//     {"alive": true}        every RELAY_ALIVE_MS: the worker is still there (a reader that hears nothing goes back
//                            to Temporal: a stopped worker's call is retried elsewhere)
//     {"end": true}          the attempt is over (its outcome is in the history)
// The key is random (128 bits) and appears only in the call's heartbeat details, which only those who may read the
// conversation can see.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import type { LoadedDataConverter } from '@temporalio/common';
import type { InjectedSinks } from '@temporalio/worker';
import type { LiveFeedSinks } from '../live-feed-sinks';
import { streamSchemas } from '../stream-event-schema';
import type { StreamEvent } from '../stream-events';
import { LiveChannel } from './live-channel';
import { LiveFeed } from './live-feed';
import { DEFAULT_RELAY_BOUNDS, RelayReaders } from './relay-readers';

export { payloadToJson } from './shared-lines';

export interface LiveRelayOptions {
  /** Interface to listen on. Default 127.0.0.1: readers on this host only. '0.0.0.0' for readers elsewhere. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /**
   * The base URL readers reach the relay at, e.g. `http://worker-3:7300`. Default: http://<host>:<port>, with the
   * first non-internal IPv4 address of this machine when listening on every interface.
   */
  advertisedUrl?: string;
  /** What all its readers together may have waiting (written, not yet taken), in bytes. Default 16 MiB. */
  maxBufferedBytes?: number;
  /** How long a reader with bytes waiting may take none before it is dropped. Default 10 s. */
  stalledReaderMs?: number;
  /** Conversations' feeds it keeps at most (MAX_FEEDS). */
  maxFeeds?: number;
}

/** A subscriber that hears nothing for this long sends `alive`, so a reader can tell a stopped worker from silence. */
export const RELAY_ALIVE_MS = 1_000;
/** Readers of one call, and of the whole relay. */
export const MAX_SUBSCRIBERS_PER_CALL = 64;
export const MAX_SUBSCRIBERS = 4_096;
/** A reader this far behind (bytes queued and not yet taken) is dropped: it reads the rest from Temporal. */
export const MAX_QUEUED_BYTES = DEFAULT_RELAY_BOUNDS.maxReaderBytes;

const KEY_PATTERN = /^\/live\/([0-9a-f]{32})$/;

/** A workflow run, as a sink and an activity see it. */
export interface RunRef {
  workflowId: string;
  runId: string;
}

/** Feeds a relay keeps at most; beyond, the one unread for longest goes. One unread for FEED_IDLE_MS goes too. */
export const MAX_FEEDS = 1_024;
export const FEED_IDLE_MS = 10 * 60_000;

export class LiveRelay {
  private readonly channels = new Map<string, LiveChannel>();
  private readonly feeds = new Map<string, LiveFeed>();
  private readonly feedsByRun = new Map<string, LiveFeed>();
  private readonly aliveTimer: NodeJS.Timeout;
  private readonly readers: RelayReaders;
  private subscriberTotal = 0;
  /** Readers served since the relay started (for operators and tests: did readers take the relay?)… */
  subscriptions = 0;
  /** …of them, readers of a conversation's feed. */
  feedSubscriptions = 0;
  private readonly maxFeeds: number;

  /** Readers dropped for being behind (relay-readers.ts) since the relay started. */
  get droppedReaders(): number {
    return this.readers.dropped;
  }

  /** What waits for all readers now (written, not yet taken by the kernel), in bytes. */
  bufferedBytes(): number {
    return this.readers.buffered();
  }

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
    options: LiveRelayOptions,
  ) {
    this.readers = new RelayReaders({
      ...DEFAULT_RELAY_BOUNDS,
      ...(options.maxBufferedBytes !== undefined && { maxBufferedBytes: options.maxBufferedBytes }),
      ...(options.stalledReaderMs !== undefined && { stalledAfterMs: options.stalledReaderMs }),
    });
    this.maxFeeds = options.maxFeeds ?? MAX_FEEDS;
    this.aliveTimer = setInterval(() => {
      this.readers.sweep();
      for (const channel of this.channels.values()) channel.keepAlive();
      const idleSince = Date.now() - FEED_IDLE_MS;
      for (const feed of this.feeds.values()) {
        if (feed.subscriberCount === 0 && feed.lastUsed < idleSince) void feed.end();
        else feed.keepAlive();
      }
    }, RELAY_ALIVE_MS);
    this.aliveTimer.unref();
  }

  static async start(options: LiveRelayOptions = {}): Promise<LiveRelay> {
    const host = options.host ?? '127.0.0.1';
    const server = http.createServer();
    server.keepAliveTimeout = 5_000;
    server.headersTimeout = 10_000;
    server.requestTimeout = 10_000;
    server.listen(options.port ?? 0, host);
    await once(server, 'listening'); // rejects with the server's 'error' (a port in use) instead
    const { port } = server.address() as AddressInfo;
    const url = (options.advertisedUrl ?? `http://${advertisedHost(host)}:${port}`).replace(/\/+$/, '');
    const relay = new LiveRelay(server, url, options);
    server.on('request', (req, res) => relay.serve(req, res));
    return relay;
  }

  /**
   * A channel for one streaming attempt of `run`'s model call; it closes itself at `end()`. The run's feed on this
   * worker, if it has one, follows it (`feedUrl`).
   */
  open(reply: ConstructorParameters<typeof LiveChannel>[1], converter: LoadedDataConverter, run?: RunRef): LiveChannel {
    const key = randomBytes(16).toString('hex');
    const feed = run && this.feedsByRun.get(runKey(run));
    const channel = new LiveChannel(`${this.url}/live/${key}`, reply, converter, this.readers, () => {
      this.channels.delete(key);
      feed?.detach(channel);
    });
    this.channels.set(key, channel);
    if (feed) {
      channel.feedUrl = feed.url;
      feed.attach(channel);
    }
    return channel;
  }

  /**
   * The worker's end of the workflows' feed sink (streaming/live-feed-sinks.ts), encoding with `converter`. What the sink
   * receives is checked: a call that is not an offset and a stream event is dropped.
   */
  feedSinks(converter: LoadedDataConverter): InjectedSinks<LiveFeedSinks> {
    return {
      liveFeed: {
        published: {
          fn: (info, offset, event) => {
            if (!Number.isSafeInteger(offset) || offset < 0) return;
            const parsed = streamSchemas().streamEventSchema.safeParse(event);
            if (!parsed.success) return;
            this.feedOf(info, converter).published(offset, parsed.data as StreamEvent);
          },
          callDuringReplay: false,
        },
        detached: {
          fn: (info) => void this.feedsByRun.get(runKey(info))?.end(),
          callDuringReplay: false,
        },
      },
    };
  }

  /** `run`'s feed, opened at its first event on this worker. */
  private feedOf(run: RunRef, converter: LoadedDataConverter): LiveFeed {
    const id = runKey(run);
    const known = this.feedsByRun.get(id);
    if (known) return known;
    if (this.feeds.size >= this.maxFeeds) {
      let stalest: LiveFeed | undefined;
      for (const feed of this.feeds.values()) {
        if (feed.subscriberCount === 0 && (!stalest || feed.lastUsed < stalest.lastUsed)) stalest = feed;
      }
      void (stalest ?? this.feeds.values().next().value!).end();
    }
    const feed = new LiveFeed(this.url, converter, this.readers, () => {
      this.feeds.delete(feed.key);
      if (this.feedsByRun.get(id) === feed) this.feedsByRun.delete(id);
    });
    this.feeds.set(feed.key, feed);
    this.feedsByRun.set(id, feed);
    return feed;
  }

  /** Stops listening and ends every reader's response (they go back to Temporal). */
  async close(): Promise<void> {
    clearInterval(this.aliveTimer);
    await Promise.all([...this.channels.values()].map((channel) => channel.end()));
    await Promise.all([...this.feeds.values()].map((feed) => feed.end()));
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private serve(req: http.IncomingMessage, res: http.ServerResponse): void {
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('cache-control', 'no-store');
    if (req.method !== 'GET') return refuse(res, 405, 'only GET', { allow: 'GET' });
    if ((req.url ?? '').startsWith('/feed/')) return this.serveFeed(req, res);
    const key = KEY_PATTERN.exec((req.url ?? '').split('?')[0]!)?.[1];
    const channel = key === undefined ? undefined : this.channels.get(key);
    if (!channel) return refuse(res, 404, 'no such reply streams here');
    if (this.admit(res, channel.subscriberCount)) channel.subscribe(res);
  }

  private serveFeed(req: http.IncomingMessage, res: http.ServerResponse): void {
    const [path, query = ''] = (req.url ?? '').split('?', 2) as [string, string?];
    const key = FEED_PATTERN.exec(path)?.[1];
    const feed = key === undefined ? undefined : this.feeds.get(key);
    if (!feed) return refuse(res, 404, 'no such feed here');
    const from = FEED_QUERY.exec(query)?.[1];
    if (from === undefined) return refuse(res, 400, 'from: an offset (an integer ≥ 0) and nothing else');
    if (!this.admit(res, feed.subscriberCount)) return;
    this.feedSubscriptions++;
    feed.subscribe(res, Number(from));
  }

  /**
   * Takes `res` as a reader of a reply or feed that has `subscriberCount` already, its NDJSON headers sent; false when
   * it was refused (503) for too many readers there or on the whole relay.
   */
  private admit(res: http.ServerResponse, subscriberCount: number): boolean {
    if (subscriberCount >= MAX_SUBSCRIBERS_PER_CALL || this.subscriberTotal >= MAX_SUBSCRIBERS) {
      refuse(res, 503, 'too many readers: read from Temporal');
      return false;
    }
    this.subscriberTotal++;
    this.subscriptions++;
    res.once('close', () => this.subscriberTotal--);
    this.readers.admit(res);
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    res.flushHeaders();
    return true;
  }
}

const FEED_PATTERN = /^\/feed\/([0-9a-f]{32})$/;
/** `from=<offset>` alone: at most 15 digits, so it is a safe integer. */
const FEED_QUERY = /^from=(0|[1-9][0-9]{0,14})$/;

function runKey({ workflowId, runId }: RunRef): string {
  return `${runId}/${workflowId}`;
}

function refuse(res: http.ServerResponse, status: number, message: string, headers: http.OutgoingHttpHeaders = {}) {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers });
  res.end(`${message}\n`);
}

/** The address readers use for a relay listening on `host`: this machine's first external IPv4 for any interface. */
function advertisedHost(host: string): string {
  if (host !== '0.0.0.0' && host !== '::') return host.includes(':') ? `[${host}]` : host;
  for (const addresses of Object.values(os.networkInterfaces())) {
    const external = addresses?.find((address) => address.family === 'IPv4' && !address.internal);
    if (external) return external.address;
  }
  return '127.0.0.1';
}
