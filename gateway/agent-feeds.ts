// A conversation's SSE events with its sub-agents' (`?agents=steps|all|none`, issue #33): the parent's shared feed
// (event-feeds.ts) merged with each child's, a child's shared too, as the client's reader merges them
// (streaming/client/sub-agent-streams.ts): tagged `agent: <child id>`, a child's event under the parent's cursor, so a
// reader that reconnects with Last-Event-ID resumes the parent exactly and follows the children still running there
// again from their start.
import type { Client } from '@temporalio/client';
import { formatCursor, type StreamCursor } from '../streaming/client/stream-cursor';
import {
  type AgentsMode,
  childExists,
  type FollowAgent,
  openAgents,
  withSubAgents,
} from '../streaming/client/sub-agent-streams';
import type { StreamItem } from '../streaming/stream-events';
import type { EventFeeds, FeedListener } from './event-feeds';

/** Sends `listener` the events of `id` after `cursor`, with its sub-agents' as `mode` says; returns how to stop. */
export function watchWithAgents(
  feeds: EventFeeds,
  client: Client,
  id: string,
  cursor: StreamCursor,
  mode: AgentsMode,
  listener: FeedListener,
): () => void {
  if (mode === 'none') return feeds.watch(id, cursor, listener);
  const stop = new AbortController();
  const follow: FollowAgent = (agentId, finished) =>
    (async function* () {
      if (!(await childExists(client, agentId, finished, stop.signal))) return;
      try {
        yield* withSubAgents(feedItems(feeds, agentId, { offset: -1 }, stop.signal), follow, { mode, cursor: '-1' });
      } catch {
        // A child's stream that cannot be read is left out; the parent's events still say how it ended.
      }
    })();
  void (async () => {
    let failure: unknown;
    try {
      const open = cursor.offset >= 0 ? await openAgents(client, id, cursor.offset) : [];
      const items = withSubAgents(feedItems(feeds, id, cursor, stop.signal), follow, {
        mode,
        cursor: formatCursor(cursor),
        open,
      });
      for await (const item of items) {
        if (stop.signal.aborted) break;
        listener.item(item);
      }
    } catch (err) {
      failure = err;
    }
    const stopped = stop.signal.aborted;
    stop.abort(); // the children's feeds too
    if (!stopped) listener.end(failure);
  })();
  return () => stop.abort();
}

/** A feed's events after `cursor` as an iterable, until it ends (or `signal` aborts); its failure is thrown. */
async function* feedItems(
  feeds: EventFeeds,
  id: string,
  cursor: StreamCursor,
  signal: AbortSignal,
): AsyncGenerator<StreamItem, void, undefined> {
  const queue: StreamItem[] = [];
  let ended: { error?: unknown } | undefined;
  let wake: (() => void) | undefined;
  const awake = () => wake?.();
  const unwatch = feeds.watch(id, cursor, {
    item: (item) => {
      queue.push(item);
      awake();
    },
    end: (error) => {
      ended = { error };
      awake();
    },
  });
  signal.addEventListener('abort', awake, { once: true });
  try {
    for (;;) {
      while (queue.length > 0) yield queue.shift()!;
      if (signal.aborted) return;
      if (ended) {
        if (ended.error !== undefined) throw ended.error;
        return;
      }
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    signal.removeEventListener('abort', awake);
    unwatch();
  }
}
