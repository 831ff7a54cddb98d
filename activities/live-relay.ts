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
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import type { LoadedDataConverter, Payload } from '@temporalio/common';
import { encodeToPayload } from '@temporalio/common/lib/internal-non-workflow';
import type { LiveReply } from '../common/stream-events';

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
}

/** How long a line waits for more of the reply (tokens come a few at a time: one line carries several). */
export const RELAY_FLUSH_MS = 40;
/** A subscriber that hears nothing for this long sends `alive`, so a reader can tell a stopped worker from silence. */
export const RELAY_ALIVE_MS = 1_000;
/** Readers of one call, and of the whole relay. */
export const MAX_SUBSCRIBERS_PER_CALL = 64;
export const MAX_SUBSCRIBERS = 4_096;
/** A reader this far behind (bytes queued and not yet taken) is dropped: it reads the rest from Temporal. */
export const MAX_QUEUED_BYTES = 1 << 20;

const KEY_PATTERN = /^\/live\/([0-9a-f]{32})$/;

/** A block of the reply as the activity follows it: a text so far, or a tool call (its input once whole). */
export type LiveBlockState =
  | { kind: 'text' | 'thinking'; text: string; redacted?: true }
  | { kind: 'tool'; id: string; name: string; input?: unknown };

interface Subscriber {
  /** What it has been sent of each block: characters of a text, 1 (started) or 2 (with input) of a tool. */
  sent: Map<number, number>;
  /** Its lines are encoded one after the other (a codec may be asynchronous), so they leave in order. */
  queue: Promise<void>;
}

/** One streaming attempt's reply, published to whoever subscribed. */
export class LiveChannel {
  private readonly subscribers = new Map<http.ServerResponse, Subscriber>();
  private flushTimer: NodeJS.Timeout | undefined;
  private ended = false;

  constructor(
    readonly url: string,
    private readonly reply: { call: number; attempt: number; blocks: ReadonlyMap<number, LiveBlockState> },
    private readonly converter: LoadedDataConverter,
    private readonly onEnd: () => void,
  ) {}

  get subscriberCount(): number {
    return this.subscribers.size;
  }

  /** The reply changed: subscribers get what is new within RELAY_FLUSH_MS. */
  changed(): void {
    if (this.ended || this.subscribers.size === 0 || this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      for (const [res, subscriber] of this.subscribers) void this.send(res, subscriber);
    }, RELAY_FLUSH_MS);
  }

  /** The attempt is over: what is left, then `end`, to every subscriber. */
  async end(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.flushTimer);
    await Promise.all([...this.subscribers].map(([res, subscriber]) => this.send(res, subscriber)));
    for (const res of this.subscribers.keys()) res.end('{"end":true}\n');
    this.subscribers.clear();
    this.onEnd();
  }

  subscribe(res: http.ServerResponse): void {
    if (this.ended) {
      res.end('{"end":true}\n');
      return;
    }
    const subscriber: Subscriber = { sent: new Map(), queue: Promise.resolve() };
    this.subscribers.set(res, subscriber);
    res.once('close', () => this.subscribers.delete(res));
    void this.send(res, subscriber);
  }

  /** What `res` has not been sent yet, as one line, after the lines before it. */
  private send(res: http.ServerResponse, subscriber: Subscriber): Promise<void> {
    subscriber.queue = subscriber.queue.then(() => this.sendNow(res, subscriber.sent));
    return subscriber.queue;
  }

  private async sendNow(res: http.ServerResponse, sent: Subscriber['sent']): Promise<void> {
    const update = this.delta(sent);
    if (!update) return;
    let line: string;
    try {
      line = JSON.stringify({ reply: payloadToJson(await encodeToPayload(this.converter, update)) }) + '\n';
    } catch {
      res.destroy(); // cannot be encoded (a codec failed): the reader goes back to Temporal
      return;
    }
    if (res.destroyed) return;
    if (res.writableLength > MAX_QUEUED_BYTES) {
      res.destroy();
      return;
    }
    res.write(line);
  }

  /** The blocks (or their parts) `sent` lacks, marking them sent; undefined when there is nothing new. */
  private delta(sent: Subscriber['sent']): LiveReply | undefined {
    const blocks: LiveReply['blocks'] = [];
    for (const [index, block] of this.reply.blocks) {
      const had = sent.get(index) ?? 0;
      if (block.kind !== 'tool') {
        // A redacted thinking block has no text: it is sent once, as it starts.
        const size = block.redacted ? 1 : block.text.length;
        if (size <= had) continue;
        const text = block.text.slice(had);
        if (block.kind === 'text') blocks.push({ index, kind: 'text', at: had, text });
        else
          blocks.push({ index, kind: 'thinking', at: had, text, ...(block.redacted && { redacted: true as const }) });
        sent.set(index, size);
      } else {
        const now = block.input === undefined ? 1 : 2;
        if (now <= had) continue;
        blocks.push({ index, kind: 'tool', id: block.id, name: block.name, ...(now === 2 && { input: block.input }) });
        sent.set(index, now);
      }
    }
    if (blocks.length === 0) return undefined;
    return { call: this.reply.call, attempt: this.reply.attempt, blocks: blocks.sort((a, b) => a.index - b.index) };
  }

  /** Every subscriber that heard nothing for RELAY_ALIVE_MS hears that the worker is alive. */
  keepAlive(): void {
    for (const res of this.subscribers.keys()) res.write('{"alive":true}\n');
  }
}

export class LiveRelay {
  private readonly channels = new Map<string, LiveChannel>();
  private readonly aliveTimer: NodeJS.Timeout;
  private subscriberTotal = 0;
  /** Readers served since the relay started (for operators and tests: did readers take the relay?). */
  subscriptions = 0;

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {
    this.aliveTimer = setInterval(() => {
      for (const channel of this.channels.values()) channel.keepAlive();
    }, RELAY_ALIVE_MS);
    this.aliveTimer.unref();
  }

  static async start(options: LiveRelayOptions = {}): Promise<LiveRelay> {
    const host = options.host ?? '127.0.0.1';
    const server = http.createServer();
    server.keepAliveTimeout = 5_000;
    server.headersTimeout = 10_000;
    server.requestTimeout = 10_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const { port } = server.address() as AddressInfo;
    const url = (options.advertisedUrl ?? `http://${advertisedHost(host)}:${port}`).replace(/\/+$/, '');
    const relay = new LiveRelay(server, url);
    server.on('request', (req, res) => relay.serve(req, res));
    return relay;
  }

  /** A channel for one streaming attempt; it closes itself at `end()`. */
  open(reply: ConstructorParameters<typeof LiveChannel>[1], converter: LoadedDataConverter): LiveChannel {
    const key = randomBytes(16).toString('hex');
    const channel = new LiveChannel(`${this.url}/live/${key}`, reply, converter, () => this.channels.delete(key));
    this.channels.set(key, channel);
    return channel;
  }

  /** Stops listening and ends every reader's response (they go back to Temporal). */
  async close(): Promise<void> {
    clearInterval(this.aliveTimer);
    await Promise.all([...this.channels.values()].map((channel) => channel.end()));
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private serve(req: http.IncomingMessage, res: http.ServerResponse): void {
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('cache-control', 'no-store');
    if (req.method !== 'GET') return refuse(res, 405, 'only GET', { allow: 'GET' });
    const key = KEY_PATTERN.exec((req.url ?? '').split('?')[0]!)?.[1];
    const channel = key === undefined ? undefined : this.channels.get(key);
    if (!channel) return refuse(res, 404, 'no such reply streams here');
    if (channel.subscriberCount >= MAX_SUBSCRIBERS_PER_CALL || this.subscriberTotal >= MAX_SUBSCRIBERS) {
      return refuse(res, 503, 'too many readers: read from Temporal');
    }
    this.subscriberTotal++;
    this.subscriptions++;
    res.once('close', () => this.subscriberTotal--);
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    res.flushHeaders();
    channel.subscribe(res);
  }
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

/** A payload as JSON: its metadata and data base64, like Temporal's own JSON form of a Payload. */
export function payloadToJson(payload: Payload): { metadata: Record<string, string>; data: string } {
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(payload.metadata ?? {})) {
    if (value) metadata[key] = Buffer.from(value).toString('base64');
  }
  return { metadata, data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64') };
}
