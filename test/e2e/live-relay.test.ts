// Streamed replies through the worker's live relay: readers follow a model call's reply on the worker that runs it,
// and the Temporal server carries only a heartbeat a second. A reader that cannot reach the relay still gets every
// word, from Temporal; an attempt that fails midway is dropped as without the relay; with payload encryption the
// relay carries ciphertext. (A worker SIGKILLed mid-stream, its relay with it: streaming-crash.test.ts.)
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { LiveRelay } from '../../streaming/worker/live-relay';
import { encryptingDataConverter } from '../../codec/data-converter';
import { parseKeyRing } from '../../codec/keys';
import type { StreamEvent, StreamItem } from '../../streaming/stream-events';
import { STOCK_QUESTION, STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import { type Harness, namespace, startHarness, uniquePrompt } from '../support/harness';
import { modelHeartbeatOf } from '../support/model-heartbeat';
import { waitUntil } from '../support/wait-until';

const harnesses: Harness[] = [];
after(async () => {
  for (const h of harnesses) await h.close();
});

async function harness(options: Parameters<typeof startHarness>[0]): Promise<Harness> {
  const h = await startHarness(options);
  harnesses.push(h);
  return h;
}

async function collect(items: AsyncIterable<StreamItem>, each?: (item: StreamItem) => Promise<void>) {
  const out: StreamItem[] = [];
  for await (const item of items) {
    out.push(item);
    await each?.(item);
  }
  return out;
}

const textOf = (items: StreamItem[]) =>
  items.flatMap((i) => (i.event.type === 'text' ? [(i.event as Extract<StreamEvent, { type: 'text' }>).text] : []));

async function transcriptText(h: Harness, id: string): Promise<string> {
  return (await h.conversations.getTranscript(id))
    .filter((m) => m.role === 'assistant')
    .map((m) =>
      typeof m.content === 'string' ? m.content : m.content.map((b) => (b.type === 'text' ? b.text : '')).join(''),
    )
    .join('');
}

describe('streamed replies through the worker’s live relay', () => {
  let h: Harness;
  before(async () => {
    h = await harness({ liveRelay: {} });
  });

  test('the stock-price chain streams from the relay: each call’s heartbeat names it and the conversation’s feed, the reader takes the turn from the feed, every word arrives once, live', async () => {
    const prompt = uniquePrompt(STOCK_QUESTION);
    h.mock.script(prompt, [
      { demo: true, tokenDelayMs: 40 },
      { demo: true, tokenDelayMs: 40 },
      { demo: true, tokenDelayMs: 40 },
    ]);
    const id = `relay-chain-${Date.now()}`;
    const followedBefore = h.relay!.subscriptions;
    const feedsBefore = h.relay!.feedSubscriptions;
    const named: string[] = [];
    const feeds: string[] = [];
    const items = await collect(
      h.conversations.streamMessage(id, prompt, { start: { tools: STOCK_TOOLS } }),
      async (item) => {
        if (item.live && item.event.type === 'text' && named.length < 1) {
          const beat = await modelHeartbeatOf(h.client, id);
          if (beat?.relay) named.push(beat.relay);
          if (beat?.feed) feeds.push(beat.feed);
        }
      },
    );

    assert.equal(named.length, 1, 'a streaming call’s heartbeat names its relay');
    assert.ok(named[0]!.startsWith(`${h.relay!.url}/live/`), named[0]);
    assert.ok(
      feeds[0]?.startsWith(`${h.relay!.url}/feed/`),
      `the heartbeat names the conversation’s feed: ${feeds[0]}`,
    );
    assert.equal(
      h.relay!.feedSubscriptions - feedsBefore,
      1,
      'the reader followed the conversation’s feed on the relay, once for the whole turn',
    );
    assert.equal(
      h.relay!.subscriptions - followedBefore,
      1,
      'and took the three calls’ replies from it, not from each call’s own address',
    );
    const live = items.filter((i) => i.live && i.event.type === 'text');
    assert.ok(live.length >= 6, `text arrives in many pieces (${live.length})`);
    assert.equal(textOf(items).join(''), await transcriptText(h, id), 'each character once, in order');
    const last = items.at(-1)!.event;
    assert.ok(last.type === 'turn_finished' && /38\.50/.test(last.text));
  });

  test('a call that fails midway: the reader drops what its attempt streamed and follows the retry on the relay', async () => {
    const prompt = uniquePrompt('Say hello.');
    const partial = 'This half-written answer is abandoned';
    h.mock.script(prompt, [
      { fault: 'stream-error', text: partial, tokenDelayMs: 60 },
      {
        reply: { content: [{ type: 'text', text: 'Hello, here is the answer.' }], stop_reason: 'end_turn' },
        tokenDelayMs: 20,
      },
    ]);
    const id = `relay-retry-${Date.now()}`;
    const items = await collect(h.conversations.streamMessage(id, prompt, { start: {} }));
    const first = items.filter((i) => i.event.type === 'text' && i.event.attempt === 1);
    assert.ok(first.length > 0 && first.every((i) => i.live), 'the first attempt streamed live');
    const drop = items.findIndex((i) => i.event.type === 'model_output_discarded');
    assert.deepEqual(items[drop]!.event, { type: 'model_output_discarded', call: 1, attempt: 1, reason: 'retried' });
    const after = textOf(items.slice(drop)).join('');
    assert.equal(after, 'Hello, here is the answer.');
    assert.equal(
      await transcriptText(h, id),
      'Hello, here is the answer.',
      'the transcript never had the partial text',
    );
  });
});

test('a reader that cannot reach the relay gets every word from Temporal', async () => {
  // The relay runs, but its address as readers are told is a port nobody listens on.
  const closed = await LiveRelay.start();
  const nowhere = closed.url;
  await closed.close();
  const h = await harness({ liveRelay: { advertisedUrl: nowhere } });
  const prompt = uniquePrompt(STOCK_QUESTION);
  h.mock.script(prompt, [
    { demo: true, tokenDelayMs: 40 },
    { demo: true, tokenDelayMs: 40 },
    { demo: true, tokenDelayMs: 40 },
  ]);
  const id = `relay-unreachable-${Date.now()}`;
  const items = await collect(h.conversations.streamMessage(id, prompt, { start: { tools: STOCK_TOOLS } }));
  assert.equal(h.relay!.subscriptions, 0, 'nobody reached the relay');
  assert.equal(textOf(items).join(''), await transcriptText(h, id), 'each character once, in order');
  assert.equal(items.filter((i) => i.event.type === 'turn_finished').length, 1);
});

test('with payload encryption the relay carries ciphertext, and readers with the key read it', async () => {
  const KEY = Buffer.alloc(32, 7).toString('base64');
  const h = await harness({ liveRelay: {}, dataConverter: encryptingDataConverter(parseKeyRing(`k1:${KEY}`)) });
  const secret = 'The vault code is swordfish-4711 and nobody else may read it';
  const prompt = uniquePrompt('Tell me the code.');
  h.mock.script(prompt, [
    // ~3 s of tokens: the reader has time to look up the relay and connect while the reply streams, even at load.
    { reply: { content: [{ type: 'text', text: secret }], stop_reason: 'end_turn' }, tokenDelayMs: 250 },
  ]);
  const id = `relay-encrypted-${Date.now()}`;
  let raw = '';
  const items = await collect(h.conversations.streamMessage(id, prompt, { start: {} }), async (item) => {
    if (raw || !item.live) return;
    // What anyone who can reach the relay and knows the call's address would read.
    const beat = await modelHeartbeatOf(h.client, id);
    if (!beat?.relay) return;
    const response = await fetch(beat.relay);
    const reader = response.body!.getReader();
    const deadline = Date.now() + 5_000;
    while (!raw.includes('"reply"') && Date.now() < deadline) {
      const { done, value } = await reader.read();
      if (done) break;
      raw += Buffer.from(value).toString('utf8');
    }
    await reader.cancel();
  });
  const line = raw.split('\n').find((l) => l.includes('"reply"'));
  assert.ok(line, `the relay sent a reply line: ${raw.slice(0, 200)}`);
  const { reply } = JSON.parse(line) as { reply: { metadata: Record<string, string>; data: string } };
  assert.equal(Buffer.from(reply.metadata.encoding!, 'base64').toString(), 'binary/encrypted');
  assert.ok(!Buffer.from(reply.data, 'base64').toString('latin1').includes('swordfish'), 'no plain text on the wire');
  assert.equal(textOf(items).join(''), secret, 'the reader with the key got every word');
});

test('a reader that stops reading while a long reply streams is dropped by the relay; when it reads again it resumes from its offset through the log, every event once', async () => {
  // The worker keeps replies up to 2 MB (Temporal's limit), not 1.5 MB: this one is 1.5 MB.
  const h = await harness({ liveRelay: { stalledReaderMs: 1_000 }, maxModelReplyBytes: 2_000_000 });
  // 1.5 MB of text (live, then as the log's events): more than the kernel's socket buffers take for a reader that
  // reads nothing. It comes after 30 s, once the reader (a process that starts slowly on a busy machine) follows the
  // conversation's feed and was paused.
  const prompt = uniquePrompt('Write at length.');
  h.mock.script(prompt, [
    { reply: { content: [{ type: 'text', text: 'word '.repeat(300_000) }], stop_reason: 'end_turn' }, delayMs: 30_000 },
  ]);
  const id = `relay-stalled-${Date.now()}`;
  const { offset } = await h.conversations.submitMessage(id, prompt, { start: {} });
  const feedsBefore = h.relay!.feedSubscriptions;
  const reader = spawn(
    process.execPath,
    ['--import', 'tsx', 'test/support/stream-reader-process.ts', id, String(offset)],
    {
      cwd: path.resolve(__dirname, '..', '..'),
      env: { ...process.env, TEMPORAL_NAMESPACE: namespace, TEMPORAL_TASK_QUEUE: h.taskQueue },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  let errors = '';
  reader.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  reader.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => reader.once('close', resolve));
  try {
    await waitUntil('the reader to follow the feed', () => h.relay!.feedSubscriptions > feedsBefore, {
      timeoutMs: 60_000,
    });
    reader.kill('SIGSTOP');
    await waitUntil('the relay to drop the paused reader', () => h.relay!.droppedReaders > 0);
    reader.kill('SIGCONT');
    assert.equal(await exited, 0, errors);
  } finally {
    reader.kill('SIGKILL');
  }

  const items = output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as StreamItem);
  const durable = items.filter((i) => !i.live);
  assert.deepEqual(
    durable.map((i) => i.offset),
    durable.map((_, i) => offset + i),
    'each event of the log once, in order, from the reader’s offset',
  );
  assert.equal(textOf(items).join(''), await transcriptText(h, id), 'each character once, in order');
  assert.equal(items.at(-1)!.event.type, 'turn_finished');
});
