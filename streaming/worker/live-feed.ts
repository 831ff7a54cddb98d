// A conversation's live feed on the worker running it: the events its workflow appends to its log, told to the worker
// through a sink (streaming/live-feed-sinks.ts) as they are written, and the live replies of its model calls that run on this
// worker — one stream a reader follows through a whole turn, instead of polling Temporal (describe to find each call,
// queries for the log) between the calls. Served by the live relay (live-relay.ts):
//
//   GET /feed/<key>?from=<offset>   application/x-ndjson, one JSON object per line:
//     {"events": <payload>}   log events in order ({ events: { offset, event }[] }, encoded by the worker's data
//                             converter), from `from` on — from the oldest this worker kept when it lacks `from`: the
//                             reader then sees the gap and reads the log from Temporal
//     {"reply": <payload>}    what a model call's reply added (as on /live/<key>); an attempt's first line has no
//                             blocks and says which attempt now streams
//     {"alive": true}         every second
//     {"end": true}           this run takes no more readers (it ended or continued as new)
// The feed is a shortcut, never the record: sinks are not called during replay and a workflow may move to another
// worker; a reader that sees a gap, or nothing for a while, goes back to Temporal. The key is random (128 bits) and is
// named only by the heartbeats of the run's model calls on this worker.
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import type { LoadedDataConverter } from '@temporalio/common';
import type { StreamEvent } from '../stream-events';
import type { LiveChannel } from './live-channel';
import type { RelayReaders } from './relay-readers';
import { ALIVE_LINE, encodeLine, END_LINE, SharedLines, writeLine } from './shared-lines';

/** What one feed keeps for readers that subscribe late (a turn's events, usually): the oldest go first. */
export const MAX_FEED_EVENTS = 256;
export const MAX_FEED_BYTES = 256 << 10;

interface FeedSubscriber {
  /** The offset this reader needs next. */
  next: number;
  /** Its lines are encoded one after the other, so they leave in order. */
  queue: Promise<void>;
}

/** One workflow run's feed on this worker. */
export class LiveFeed {
  readonly key = randomBytes(16).toString('hex');
  readonly url: string;
  private events: { offset: number; event: StreamEvent; chars: number }[] = [];
  private chars = 0;
  /** The offset the next published event should have (undefined before the first). */
  private expected: number | undefined;
  private readonly subscribers = new Map<http.ServerResponse, FeedSubscriber>();
  /** The run's model calls streaming on this worker now. */
  private readonly channels = new Set<LiveChannel>();
  private ended = false;
  /** Pages of events, encoded once for the readers at the same offset. */
  private readonly lines = new SharedLines();
  /** When it was last written to or read (idle feeds are dropped). */
  lastUsed = Date.now();

  constructor(
    baseUrl: string,
    private readonly converter: LoadedDataConverter,
    private readonly readers: RelayReaders,
    private readonly onEnd: () => void,
  ) {
    this.url = `${baseUrl}/feed/${this.key}`;
  }

  get subscriberCount(): number {
    return this.subscribers.size;
  }

  /** The workflow appended `event` at `offset` (checked by the sink). */
  published(offset: number, event: StreamEvent): void {
    if (this.ended) return;
    this.lastUsed = Date.now();
    // A workflow task run again (it failed or timed out after its sink calls) writes the same events again.
    if (this.expected !== undefined && offset < this.expected) return;
    // Events were written elsewhere meanwhile (the run moved to another worker and back): keep only what follows.
    if (this.expected !== undefined && offset > this.expected) this.drop(this.events.length);
    const chars = JSON.stringify(event).length;
    this.events.push({ offset, event, chars });
    this.chars += chars;
    this.expected = offset + 1;
    let excess = 0;
    while (
      excess < this.events.length - 1 &&
      (this.events.length - excess > MAX_FEED_EVENTS || this.chars > MAX_FEED_BYTES)
    ) {
      this.chars -= this.events[excess]!.chars;
      excess++;
    }
    if (excess > 0) this.drop(excess, false);
    this.lines.forget();
    for (const [res, subscriber] of this.subscribers) this.send(res, subscriber);
  }

  subscribe(res: http.ServerResponse, from: number): void {
    if (this.ended) {
      this.readers.end(res, END_LINE);
      return;
    }
    this.lastUsed = Date.now();
    const subscriber: FeedSubscriber = { next: from, queue: Promise.resolve() };
    this.subscribers.set(res, subscriber);
    res.once('close', () => this.subscribers.delete(res));
    this.send(res, subscriber);
    for (const channel of this.channels) channel.subscribe(res, { feed: true });
  }

  /** A model call of the run started streaming on this worker: the feed's readers follow it too. */
  attach(channel: LiveChannel): void {
    if (this.ended) return;
    this.channels.add(channel);
    for (const res of this.subscribers.keys()) channel.subscribe(res, { feed: true });
  }

  detach(channel: LiveChannel): void {
    this.channels.delete(channel);
  }

  keepAlive(): void {
    for (const res of this.subscribers.keys()) this.readers.write(res, ALIVE_LINE);
  }

  /**
   * The run takes no more readers: what is queued, then `end`. Its readers are forgotten everywhere, its calls'
   * channels too (a call may stream on after its feed was evicted).
   */
  async end(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    await Promise.all([...this.subscribers.values()].map((subscriber) => subscriber.queue));
    for (const res of this.subscribers.keys()) {
      for (const channel of this.channels) channel.unsubscribe(res);
      this.readers.end(res, END_LINE);
    }
    this.subscribers.clear();
    this.channels.clear();
    this.onEnd();
  }

  private drop(count: number, recount = true): void {
    this.events.splice(0, count);
    if (recount) this.chars = this.events.reduce((sum, e) => sum + e.chars, 0);
  }

  /** The kept events from the subscriber's next offset on (from the oldest kept when it lacks it), as one line. */
  private send(res: http.ServerResponse, subscriber: FeedSubscriber): void {
    subscriber.queue = subscriber.queue.then(async () => {
      const events = this.events.filter((e) => e.offset >= subscriber.next);
      if (events.length === 0 || !this.readers.isOpen(res)) return;
      subscriber.next = events.at(-1)!.offset + 1;
      // Offsets are never reused in a run: the first and the last name the page.
      const line = this.lines.line(`${events[0]!.offset}-${subscriber.next}`, () =>
        encodeLine(this.converter, 'events', { events: events.map(({ offset, event }) => ({ offset, event })) }),
      );
      await writeLine(this.readers, res, line);
    });
  }
}
