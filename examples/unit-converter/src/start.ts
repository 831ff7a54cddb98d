// Starts a conversation through the client and continues it: `node dist/src/start.js [MESSAGE …]`, one turn per
// message. The client imports no tool code: it asks the task queue's workers which tools they run.
import { randomUUID } from 'node:crypto';
import { ConversationClient, ConversationError } from 'claude-temporal-orchestrator/client';

const DEFAULT_MESSAGES = ['How many kilometres is a marathon of 26.2 miles?', 'And what is a nautical mile?'];

async function main(): Promise<void> {
  const messages = process.argv.length > 2 ? process.argv.slice(2) : DEFAULT_MESSAGES;
  const conversations = await ConversationClient.connect({
    address: process.env.TEMPORAL_ADDRESS ?? 'localhost:7233',
    namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
    taskQueue: process.env.TEMPORAL_TASK_QUEUE ?? 'claude-conversations',
  });
  const id = `units-${randomUUID()}`;
  try {
    console.log(`conversation ${id}; tools: ${(await conversations.tools()).join(', ')}`);
    for (const [index, text] of messages.entries()) {
      // The first message creates the conversation (update-with-start); the next ones continue it.
      const start = index === 0 ? { tools: ['convert_units', 'lookup_unit'] } : undefined;
      const reply = await conversations.sendMessage(id, text, { start });
      console.log(`user       ${text}`);
      console.log(`assistant  ${reply.text}  (turn ${reply.turn}: ${reply.toolCalls} tool call(s))`);
    }
    await conversations.end(id);
    const result = await conversations.waitForResult(id);
    console.log(`status     ${result.status} after ${result.turns} turn(s)`);
  } finally {
    await conversations.client.connection.close();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof ConversationError ? `${error.code}: ${error.message}` : error);
  process.exit(1);
});
