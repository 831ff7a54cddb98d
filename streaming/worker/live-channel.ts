// One streaming attempt's reply on the live relay (live-relay.ts), published to whoever subscribed: readers of
// `/live/<key>`, and the feed of the call's conversation on this worker (live-feed.ts), which hears of the attempt first
// and goes on after it. Each subscriber is sent what it lacks of each block, at most every RELAY_FLUSH_MS, in lines
// shared by the readers at the same point of the reply (shared-lines.ts).
import type http from 'node:http';
import type { LoadedDataConverter } from '@temporalio/common';
import type { LiveReply } from '../stream-events';
import type { RelayReaders } from './relay-readers';
import { ALIVE_LINE, encodeLine, END_LINE, SharedLines, writeLine } from './shared-lines';

/** How long a line waits for more of the reply (tokens come a few at a time: one line carries several). */
export const RELAY_FLUSH_MS = 40;

/** A block of the reply as the activity follows it: a text so far, or a tool call (its input once whole). */
export type LiveBlockState =
  | { kind: 'text' | 'thinking'; text: string; redacted?: true }
  | { kind: 'tool'; id: string; name: string; input?: unknown };

interface Subscriber {
  /** A conversation's feed (live-feed.ts) that follows this call: its response goes on when the attempt ends. */
  feed: boolean;
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
  /** This flush's lines, encoded once for the readers at the same point of the reply. */
  private readonly lines = new SharedLines();
  /** The feed of the call's conversation on this worker that follows this channel too (live-feed.ts), if any. */
  feedUrl: string | undefined;

  constructor(
    readonly url: string,
    private readonly reply: { call: number; attempt: number; blocks: ReadonlyMap<number, LiveBlockState> },
    private readonly converter: LoadedDataConverter,
    private readonly readers: RelayReaders,
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
      this.lines.forget();
      for (const [res, subscriber] of this.subscribers) void this.send(res, subscriber);
    }, RELAY_FLUSH_MS);
  }

  /** The attempt is over: what is left, then `end`, to every subscriber. */
  async end(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.flushTimer);
    await Promise.all([...this.subscribers].map(([res, subscriber]) => this.send(res, subscriber)));
    for (const [res, subscriber] of this.subscribers) if (!subscriber.feed) this.readers.end(res, END_LINE);
    this.subscribers.clear();
    this.lines.forget();
    this.onEnd();
  }

  /**
   * `feed`: `res` is a conversation's feed, which hears first that this attempt streams (a line with no blocks: its
   * readers learn of it before the first token) and goes on after the attempt's end.
   */
  subscribe(res: http.ServerResponse, { feed = false } = {}): void {
    if (this.ended) {
      if (!feed) this.readers.end(res, END_LINE);
      return;
    }
    const subscriber: Subscriber = { feed, sent: new Map(), queue: Promise.resolve() };
    this.subscribers.set(res, subscriber);
    res.once('close', () => this.subscribers.delete(res));
    if (feed) {
      const { call, attempt } = this.reply;
      const line = this.lines.line('start', () => encodeLine(this.converter, 'reply', { call, attempt, blocks: [] }));
      subscriber.queue = writeLine(this.readers, res, line);
    }
    void this.send(res, subscriber);
  }

  /** `res` (a feed's reader, whose feed ended) hears no more of this attempt. */
  unsubscribe(res: http.ServerResponse): void {
    this.subscribers.delete(res);
  }

  /** What `res` has not been sent yet, as one line, after the lines before it. */
  private send(res: http.ServerResponse, subscriber: Subscriber): Promise<void> {
    subscriber.queue = subscriber.queue.then(() => this.sendNow(res, subscriber.sent));
    return subscriber.queue;
  }

  private async sendNow(res: http.ServerResponse, sent: Subscriber['sent']): Promise<void> {
    const before = sentKey(sent);
    const update = this.delta(sent);
    if (!update) return;
    // Readers that had the same and get the same share one line.
    const line = this.lines.line(`${before}>${sentKey(sent)}`, () => encodeLine(this.converter, 'reply', update));
    await writeLine(this.readers, res, line);
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
    for (const [res, subscriber] of this.subscribers) if (!subscriber.feed) this.readers.write(res, ALIVE_LINE);
  }
}

/** What a reader was sent of each block, as a key. */
function sentKey(sent: Subscriber['sent']): string {
  return [...sent]
    .sort(([a], [b]) => a - b)
    .map(([index, size]) => `${index}:${size}`)
    .join(',');
}
