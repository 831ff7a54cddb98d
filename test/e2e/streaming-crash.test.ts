// A worker SIGKILLed while a reply streams: the reader resumes from its offset and sees every event once, in order;
// the dead attempt's partial text is dropped, the retry on a fresh worker streams the reply again.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { ConversationClient } from '../../client/conversation-client';
import { StreamView } from '../../streaming/client/stream-view';
import type { StreamItem } from '../../streaming/stream-events';
import { startMessagesApi } from '../../testing/messages-api/server';
import type { MessagesApi } from '../../testing/messages-api/types';
import { namespace, temporalAddress, uniquePrompt } from '../support/harness';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';

const ANSWER = Array.from({ length: 40 }, (_, i) => `word${i + 1}`).join(' ') + '.';

let mock: MessagesApi;
let connection: Connection;
let temporal: Client;
let dir: string;
const workers: WorkerProcess[] = [];

before(async () => {
  mock = await startMessagesApi();
  connection = await Connection.connect({ address: temporalAddress });
  temporal = new Client({ connection, namespace });
  dir = mkdtempSync(join(tmpdir(), 'stream-crash-'));
});
after(async () => {
  for (const worker of workers) await worker.kill();
  await connection?.close();
  await mock?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a worker SIGKILLed mid-stream: the reader resumes from its offset, drops the dead attempt, and sees the retried reply once', async () => {
  const taskQueue = `stream-crash-${randomUUID()}`;
  const client = new ConversationClient({ client: temporal, taskQueue, tools: [] });
  const worker = { taskQueue, anthropicBaseUrl: mock.url, executionLog: join(dir, 'executions.jsonl') };
  const first = await startWorkerProcess(worker);
  workers.push(first);
  const prompt = uniquePrompt('Count to forty.');
  const reply = { content: [{ type: 'text' as const, text: ANSWER }], stop_reason: 'end_turn' as const };
  // The first attempt would take 40 × 150 ms; it is killed after a few words. The retry streams quickly.
  mock.script(prompt, [
    { reply, tokenDelayMs: 150 },
    { reply, tokenDelayMs: 5 },
  ]);
  const id = `stream-crash-${randomUUID().slice(0, 8)}`;
  const { turn, offset } = await client.submitMessage(id, prompt, {
    start: { timeouts: { modelHeartbeat: '2 seconds' } },
  });
  assert.equal(turn, 1);

  // Read until the first attempt has streamed some text, then kill its worker and stop reading.
  const before: StreamItem[] = [];
  for await (const item of client.events(id, { fromOffset: offset })) {
    before.push(item);
    const text = before.filter((i) => i.event.type === 'text').length;
    if (text >= 3) break;
  }
  await first.kill();
  assert.equal((await first.exited).signal, 'SIGKILL');
  const second = await startWorkerProcess(worker);
  workers.push(second);

  // A new reader, after the cursor of the last event seen.
  const rest: StreamItem[] = [];
  for await (const item of client.events(id, { after: before.at(-1)!.cursor })) {
    rest.push(item);
    if (item.event.type === 'turn_finished') break;
  }
  const all = [...before, ...rest];
  const durable = all.filter((i) => !i.live);
  assert.deepEqual(
    durable.map((i) => i.offset),
    durable.map((_, i) => offset + i),
    'every offset of the log once, in order',
  );
  // The dead attempt streamed a little, then the reader was told to drop it, and the retry streamed the whole reply.
  const drop = all.findIndex((i) => i.event.type === 'model_output_discarded');
  assert.deepEqual(all[drop]!.event, { type: 'model_output_discarded', call: 1, attempt: 1, reason: 'retried' });
  const attempt2 = all.findIndex((i) => i.event.type === 'text' && i.event.attempt === 2);
  assert.ok(drop < attempt2, 'the drop comes before the retry streams');
  const texts = rest.flatMap((i) => (i.event.type === 'text' && i.event.attempt === 2 ? [i.event.text] : []));
  assert.equal(texts.join(''), ANSWER, 'the retry: every character once');
  const view = new StreamView();
  for (const item of all) view.apply(item.event);
  assert.equal(view.text(), ANSWER, 'no word lost, none twice');
  const last = all.at(-1)!.event;
  assert.ok(last.type === 'turn_finished' && last.text === ANSWER);
  assert.equal(mock.requestsFor(prompt).length, 2, 'one killed call, one retry');
});
