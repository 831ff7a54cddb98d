// A reader of one conversation's turn in a process of its own, as a gateway or a CLI would be: it follows
// `client.events(id, { fromOffset })` and prints each item as a JSON line, then exits after `turn_finished`. Tests pause
// it (SIGSTOP) to be a reader that stops reading without closing anything.
//   node --import tsx test/support/stream-reader-process.ts <conversation id> <offset>
// Environment: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_TASK_QUEUE.
import { Client, Connection } from '@temporalio/client';
import { ConversationClient } from '../../client/conversation-client';

async function main(): Promise<void> {
  const [id, offset] = process.argv.slice(2);
  const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS! });
  const client = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default' });
  const conversations = new ConversationClient({ client, taskQueue: process.env.TEMPORAL_TASK_QUEUE!, tools: [] });
  for await (const item of conversations.events(id!, { fromOffset: Number(offset) })) {
    process.stdout.write(`${JSON.stringify(item)}\n`);
    if (item.event.type === 'turn_finished') break;
  }
  await connection.close();
}

main().then(
  () => process.stdout.write('', () => process.exit(0)), // once everything printed has gone out
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
