// One reader per conversation, shared by every SSE client of the gateway that watches it: a conversation takes only a
// few long polls at once (each parked reader holds one; the others watch by describe and query), and a few browser tabs
// must not use them all, nor multiply the live-reply reads. A feed keeps the durable events it has read and the last live reply (a cache, not
// state: a restarted gateway reads them again from Temporal); each client merges them from its own cursor
// (StreamMerger), so it gets exactly what follows its Last-Event-ID. A client that asks for events older than the
// feed has gets a reader of its own. A feed with no client left stops after a short grace.
import type { Client } from '@temporalio/client';
import { conversationSources, type SourceItem } from '../streaming/client/conversation-sources';
import type { StreamCursor } from '../streaming/client/stream-cursor';
import { StreamMerger } from '../streaming/client/stream-merger';
import type { StreamItem } from '../streaming/stream-events';

/** Durable events a feed keeps for clients joining late. */
const KEPT_EVENTS = 5_000;
const IDLE_GRACE_MS = 5_000;

export interface FeedListener {
  item(item: StreamItem): void;
  /** The conversation ended, or reading it failed (`error`). */
  end(error?: unknown): void;
}

type Source = (item: SourceItem) => void;

class Feed {
  private readonly kept: Extract<SourceItem, { kind: 'durable' }>[] = [];
  private live: Extract<SourceItem, { kind: 'live' }> | undefined;
  private readonly clients = new Map<Source, FeedListener>();
  private readonly abort = new AbortController();
  private idleTimer: NodeJS.Timeout | undefined;
  private ended = false;

  constructor(
    client: Client,
    id: string,
    /** The first durable offset the feed reads: it can serve clients from here on. */
    readonly from: number,
    private readonly onStop: () => void,
  ) {
    void (async () => {
      let failure: unknown;
      try {
        for await (const item of conversationSources(client, id, { fromOffset: from, signal: this.abort.signal })) {
          if (item.kind === 'durable') {
            this.kept.push(item);
            if (this.kept.length > KEPT_EVENTS) this.kept.shift();
            const { event } = item;
            const ended = event.type === 'model_call_finished' || event.type === 'model_output_discarded';
            if (ended && this.live?.call === event.call) this.live = undefined;
          } else {
            this.live = item;
          }
          for (const deliver of this.clients.keys()) deliver(item);
        }
      } catch (err) {
        failure = err;
      }
      this.ended = true;
      for (const listener of this.clients.values()) listener.end(failure);
      this.stop();
    })();
  }

  /** Whether a client whose next durable offset is `offset` can be served (nothing it needs was dropped). */
  covers(offset: number): boolean {
    const oldest = this.kept.length === KEPT_EVENTS ? this.kept[0]!.offset : this.from;
    return !this.ended && offset >= oldest;
  }

  attach(cursor: StreamCursor, listener: FeedListener): () => void {
    clearTimeout(this.idleTimer);
    const merger = new StreamMerger(cursor);
    const deliver: Source = (item) => {
      if (item.kind === 'durable' && item.offset <= merger.cursor().offset) return;
      const out =
        item.kind === 'durable'
          ? merger.durable(item.offset, item.event)
          : merger.live(item.call, item.attempt, item.reply);
      for (const one of out) listener.item(one);
    };
    for (const item of this.kept) deliver(item);
    if (this.live) deliver(this.live);
    this.clients.set(deliver, listener);
    return () => {
      this.clients.delete(deliver);
      if (this.clients.size === 0) this.idleTimer = setTimeout(() => this.stop(), IDLE_GRACE_MS);
    };
  }

  stop(): void {
    clearTimeout(this.idleTimer);
    this.abort.abort();
    this.onStop();
  }
}

export class EventFeeds {
  private readonly feeds = new Map<string, Feed>();

  constructor(readonly client: Client) {}

  /** Sends `listener` the events of conversation `id` after `cursor` (a StreamItem's cursor); returns how to stop. */
  watch(id: string, cursor: StreamCursor, listener: FeedListener): () => void {
    const from = cursor.offset + 1;
    let feed = this.feeds.get(id);
    if (!feed || !feed.covers(from)) {
      const shared = !feed;
      const made: Feed = new Feed(this.client, id, from, () => {
        if (this.feeds.get(id) === made) this.feeds.delete(id);
      });
      if (shared) this.feeds.set(id, made);
      feed = made;
    }
    return feed.attach(cursor, listener);
  }

  close(): void {
    for (const feed of [...this.feeds.values()]) feed.stop();
  }
}
