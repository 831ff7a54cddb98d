// A conversation's events as a reader gets them: its sources (conversation-sources.ts) merged by StreamMerger into
// one sequence, every event once and in order, resumable after any item's cursor; with its sub-agents' events as
// `agents` asks (sub-agent-streams.ts).
import type { Client } from '@temporalio/client';
import type { StreamItem } from '../stream-events';
import type { EventsOptions } from '../../client/call-options';
import { conversationSources } from './conversation-sources';
import { formatCursor, parseCursor, type StreamCursor } from './stream-cursor';
import { StreamMerger } from './stream-merger';
import { childExists, openAgents, withSubAgents } from './sub-agent-streams';

export type { EventsOptions };

export async function* conversationEvents(
  client: Client,
  id: string,
  options: EventsOptions = {},
): AsyncGenerator<StreamItem, void, undefined> {
  const start: StreamCursor = (options.after !== undefined && parseCursor(options.after)) || {
    offset: (options.fromOffset ?? 0) - 1,
  };
  const mode = options.agents ?? 'steps';
  if (mode === 'none') return yield* ownEvents(client, id, start, options);
  // The children's readers stop with this one: linked to the caller's signal, aborted when this generator ends.
  const stop = new AbortController();
  const abort = () => stop.abort();
  options.signal?.addEventListener('abort', abort, { once: true });
  const signal = stop.signal;
  const shared = { ...(options.liveIntervalMs !== undefined && { liveIntervalMs: options.liveIntervalMs }) };
  const follow = (agentId: string, finished: () => boolean) =>
    (async function* () {
      if (!(await childExists(client, agentId, finished, signal))) return;
      try {
        yield* conversationEvents(client, agentId, { ...shared, agents: mode, signal });
      } catch {
        // A child's stream that cannot be read is left out; the parent's events still say how it ended.
      }
    })();
  try {
    const open = start.offset >= 0 ? await openAgents(client, id, start.offset) : [];
    yield* withSubAgents(ownEvents(client, id, start, { ...options, signal }), follow, {
      mode,
      cursor: formatCursor(start),
      open,
    });
  } finally {
    options.signal?.removeEventListener('abort', abort);
    stop.abort();
  }
}

/** The conversation's own events, after `start`. */
async function* ownEvents(
  client: Client,
  id: string,
  start: StreamCursor,
  options: EventsOptions,
): AsyncGenerator<StreamItem, void, undefined> {
  const merger = new StreamMerger(start);
  for await (const source of conversationSources(client, id, { ...options, fromOffset: start.offset + 1 })) {
    const items =
      source.kind === 'durable'
        ? merger.durable(source.offset, source.event)
        : merger.live(source.call, source.attempt, source.reply);
    for (const item of items) {
      yield item;
      if (item.event.type === 'conversation_ended') return;
    }
  }
}
