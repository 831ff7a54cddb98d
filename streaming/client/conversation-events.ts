// A conversation's events as a reader gets them: its sources (conversation-sources.ts) merged by StreamMerger into
// one sequence, every event once and in order, resumable after any item's cursor.
import type { Client } from '@temporalio/client';
import type { StreamItem } from '../stream-events';
import type { EventsOptions } from '../../client/call-options';
import { conversationSources } from './conversation-sources';
import { parseCursor, type StreamCursor } from './stream-cursor';
import { StreamMerger } from './stream-merger';

export type { EventsOptions };

export async function* conversationEvents(
  client: Client,
  id: string,
  options: EventsOptions = {},
): AsyncGenerator<StreamItem, void, undefined> {
  const start: StreamCursor = (options.after !== undefined && parseCursor(options.after)) || {
    offset: (options.fromOffset ?? 0) - 1,
  };
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
