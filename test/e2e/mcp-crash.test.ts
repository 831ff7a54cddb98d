// A worker SIGKILLed in the middle of an MCP tool call: the worker (`workers/main.ts`'s runWorker, configured by
// environment only: MCP_SERVERS) is a child process of its own and dies without a word. The call runs again on a
// fresh worker with the same idempotency key, and that worker, which never listed the tools, still offers the model
// exactly the recorded list (it reads it from the workflow).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { ConversationClient } from '../../client/conversation-client';
import { startMessagesApi } from '../../testing/messages-api/server';
import type { MessagesApi } from '../../testing/messages-api/types';
import { attemptsOf, namespace, readExecutions, temporalAddress, uniquePrompt } from '../support/harness';
import { waitUntil } from '../support/wait-until';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';

const MCP_SERVERS = JSON.stringify({
  everything: {
    command: process.execPath,
    args: [require.resolve('@modelcontextprotocol/server-everything/dist/index.js')],
    heartbeatTimeout: '3 seconds',
    retryInitialInterval: '500 ms',
  },
});

let mock: MessagesApi;
let connection: Connection;
let conversations: ConversationClient;
let client: Client;
const workers: WorkerProcess[] = [];
const dir = mkdtempSync(join(tmpdir(), 'mcp-crash-'));
const executionLog = join(dir, 'executions.jsonl');
const taskQueue = `mcp-crash-${randomUUID()}`;

before(async () => {
  mock = await startMessagesApi();
  connection = await Connection.connect({ address: temporalAddress });
  client = new Client({ connection, namespace });
  // No tool or server list given: the client asks a worker (the toolCatalog workflow) which servers it has.
  conversations = new ConversationClient({ client, taskQueue });
});
after(async () => {
  for (const worker of workers) await worker.kill();
  await connection?.close();
  await mock?.close();
  rmSync(dir, { recursive: true, force: true });
});

const startWorker = async () => {
  const worker = await startWorkerProcess({
    taskQueue,
    anthropicBaseUrl: mock.url,
    executionLog,
    env: { MCP_SERVERS },
  });
  workers.push(worker);
  return worker;
};

test('a worker SIGKILLed mid-call: the call runs again on another worker with the same idempotency key', async () => {
  const first = await startWorker();
  const prompt = uniquePrompt('Run the long operation while the worker dies');
  mock.script(prompt, [
    {
      reply: {
        content: [
          { type: 'tool_use', name: 'everything__trigger-long-running-operation', input: { duration: 3, steps: 3 } },
        ],
        stop_reason: 'tool_use',
      },
    },
    { reply: { content: [{ type: 'text', text: 'It finished on the second worker.' }], stop_reason: 'end_turn' } },
  ]);
  const id = `mcp-crash-${randomUUID().slice(0, 8)}`;
  await conversations.startConversation({ id, firstMessage: prompt, mcpServers: ['everything'] });

  // In flight: the first worker started the call, and the server is reporting progress on it.
  const tool = 'everything/trigger-long-running-operation';
  await waitUntil('the MCP call to get under way', async () => {
    const started = readExecutions(executionLog, id, tool).some((e) => e.event === 'start' && e.pid === first.pid);
    const pending = started ? ((await client.workflow.getHandle(id).describe()).raw.pendingActivities ?? []) : [];
    return pending.some((p) => (p.heartbeatDetails?.payloads?.length ?? 0) > 0);
  });
  await first.kill();
  const second = await startWorker();

  const reply = await conversations.awaitTurn(id, 1, { timeoutMs: 90_000 });
  assert.equal(reply.text, 'It finished on the second worker.');

  const runs = readExecutions(executionLog, id, tool);
  const starts = runs.filter((e) => e.event === 'start');
  assert.deepEqual(
    starts.map((e) => e.pid),
    [first.pid, second.pid],
  );
  assert.equal(new Set(starts.map((e) => e.idempotencyKey)).size, 1, 'one idempotency key for both attempts');
  assert.deepEqual(
    runs.filter((e) => e.event === 'finish').map((e) => e.pid),
    [second.pid],
  );
  const attempts = (await attemptsOf(client, id)).filter((a) => a.type === 'callMcpTool');
  assert.equal(attempts.at(-1)!.attempt, 2);
  assert.equal(attempts.at(-1)!.lastFailureType, 'timeout', 'the dead worker was noticed by its missing heartbeats');

  // The second worker never listed the tools; its model call offered the recorded list all the same.
  const [firstRequest, secondRequest] = mock.requestsFor(prompt);
  assert.deepEqual(secondRequest!.body.tools, firstRequest!.body.tools);
  assert.equal(secondRequest!.body.tools.length, 13);
  const [result] = secondRequest!.body.messages.at(-1).content;
  assert.match(result.content[0].text, /^Long running operation completed/);
});
