// A worker's live relay never ends the worker, whatever its readers do. Here a conversation's feed is evicted (the
// relay keeps WORKER_LIVE_RELAY_MAX_FEEDS feeds; a 2nd conversation's feed takes the place of the 1st) while the 1st
// conversation's model call still streams to a reader of that feed whose response cannot be flushed yet (it was
// pipelined behind another response on the same connection). The evicted feed ends that response; the call's next
// token must not be written to it (Node reports a write after end as an `'error'` event, which ended the worker).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { ConversationClient } from '../../client/conversation-client';
import { startMessagesApi } from '../../testing/messages-api/server';
import type { MessagesApi } from '../../testing/messages-api/types';
import { namespace, temporalAddress, uniquePrompt } from '../support/harness';
import { modelHeartbeatOf } from '../support/model-heartbeat';
import { waitUntil } from '../support/wait-until';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';

let mock: MessagesApi;
let connection: Connection;
let temporal: Client;
let dir: string;
let worker: WorkerProcess | undefined;

before(async () => {
  mock = await startMessagesApi();
  connection = await Connection.connect({ address: temporalAddress });
  temporal = new Client({ connection, namespace });
  dir = mkdtempSync(join(tmpdir(), 'relay-survives-'));
});
after(async () => {
  await worker?.kill();
  await connection?.close();
  await mock?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The running model call's heartbeat once it names its relay and the conversation's feed. */
async function liveAddresses(id: string): Promise<{ relay: string; feed: string }> {
  return waitUntil(
    `a heartbeat of ${id} to name a relay and a feed`,
    async () => {
      const beat = await modelHeartbeatOf(temporal, id);
      return beat?.relay && beat.feed ? { relay: beat.relay, feed: beat.feed } : undefined;
    },
    { timeoutMs: 60_000 },
  );
}

test('a feed evicted while its conversation’s call streams to a reader that cannot flush yet: the worker lives on, the reader is told `end` and hears nothing after it', async () => {
  const taskQueue = `relay-survives-${randomUUID()}`;
  worker = await startWorkerProcess({
    taskQueue,
    anthropicBaseUrl: mock.url,
    executionLog: join(dir, 'executions.jsonl'),
    env: { WORKER_LIVE_RELAY_MAX_FEEDS: '1' },
  });
  const client = new ConversationClient({ client: temporal, taskQueue, tools: [] });
  const words = Array.from({ length: 50 }, (_, i) => `word${i + 1}`).join(' ');
  const first = uniquePrompt('Count slowly.');
  mock.script(first, [
    { reply: { content: [{ type: 'text', text: words }], stop_reason: 'end_turn' }, tokenDelayMs: 150 },
  ]);
  const idA = `relay-survives-a-${randomUUID().slice(0, 8)}`;
  await client.submitMessage(idA, first, { start: {} });
  const { relay, feed } = await liveAddresses(idA);

  // One connection, two requests: the call's reply, and behind it (pipelined) the conversation's feed, whose lines
  // wait in the worker until the first response is over.
  const { hostname, port } = new URL(relay);
  const socket = net.connect(Number(port), hostname);
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
  socket.on('error', () => undefined);
  socket.write(
    `GET ${new URL(relay).pathname} HTTP/1.1\r\nHost: x\r\n\r\nGET ${new URL(feed).pathname}?from=0 HTTP/1.1\r\nHost: x\r\n\r\n`,
  );
  for (const deadline = Date.now() + 30_000; !received.includes('"reply"'); await sleep(50)) {
    assert.ok(Date.now() < deadline, `the call's reply came: ${received.slice(0, 300)}`);
  }

  // A second conversation: its feed takes the only place, and the first conversation's feed ends.
  const second = uniquePrompt('Say hello.');
  mock.script(second, [{ reply: { content: [{ type: 'text', text: 'Hello.' }], stop_reason: 'end_turn' } }]);
  const idB = `relay-survives-b-${randomUUID().slice(0, 8)}`;
  await client.submitMessage(idB, second, { start: {} });

  const outcome = await Promise.race([
    worker.exited.then(({ code, signal }) => `the worker exited (${signal ?? code}):\n${worker!.tail()}`),
    Promise.all([client.awaitTurn(idA, 1), client.awaitTurn(idB, 1)]).then(() => 'both turns finished'),
  ]);
  assert.equal(outcome, 'both turns finished');
  assert.ok(worker.running, 'the worker still runs');

  // Both responses are over: the call's with `end`, then the feed's, which ends with `end` and nothing after it.
  for (const deadline = Date.now() + 30_000; (received.match(/\{"end":true\}/g) ?? []).length < 2; await sleep(50)) {
    assert.ok(Date.now() < deadline, `both responses ended: …${received.slice(-300)}`);
  }
  const feedResponse = received.slice(received.lastIndexOf('HTTP/1.1 200'));
  assert.match(feedResponse, /^HTTP\/1\.1 200[^]*\{"events":[^]*\{"end":true\}\n\r\n0\r\n\r\n$/);
  socket.destroy();
});
