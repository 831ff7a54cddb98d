// A conversation's own durable events (its sub-agents' not followed), from the first, as a reader gets them (its live
// preview left out), up to its end.
import type { ConversationClient } from '../../client/conversation-client';
import type { StreamEvent } from '../../streaming/stream-events';

export async function durableEventsOf(conversations: ConversationClient, id: string): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const { event, live } of conversations.events(id, { fromOffset: 0, agents: 'none' })) {
    if (!live) events.push(event);
    if (event.type === 'conversation_ended') break;
  }
  return events;
}
