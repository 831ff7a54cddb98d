// The live relay faces whoever can reach the worker's port, and a reader follows whatever URL a heartbeat names:
// both sides take only what they expect. The relay answers only GET /live/<a key it issued>, caps its readers and
// drops one that stops reading; a reader refuses anything but a relay's URL, and stops (back to Temporal) on a line
// that is not the relay's, a reply of another attempt, a gap in the text, or silence.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { encodeToPayload, loadDataConverter } from '@temporalio/common/lib/internal-non-workflow';
import type { LiveBlockState } from '../../streaming/worker/live-channel';
import { waitUntil } from '../support/wait-until';
import {
  LiveRelay,
  MAX_QUEUED_BYTES,
  MAX_SUBSCRIBERS_PER_CALL,
  payloadToJson,
} from '../../streaming/worker/live-relay';
import { followRelay, isRelayUrl, LiveReplySoFar } from '../../streaming/client/live-relay-reader';
import type { LiveReply } from '../../streaming/stream-events';

const converter = loadDataConverter();
let relay: LiveRelay;
before(async () => {
  relay = await LiveRelay.start();
});
after(async () => {
  await relay.close();
});

function channel(text = '') {
  const blocks = new Map<number, LiveBlockState>([[0, { kind: 'text', text }]]);
  return { blocks, channel: relay.open({ call: 1, attempt: 1, blocks }, converter) };
}

async function drain<T>(gen: AsyncGenerator<T, string, undefined>): Promise<{ items: T[]; outcome: string }> {
  const items: T[] = [];
  for (;;) {
    const next = await gen.next();
    if (next.done) return { items, outcome: next.value };
    items.push(next.value);
  }
}

describe('the relay answers only what it issued', () => {
  test('an unknown key, a malformed path and another method are refused, and say nothing of any reply', async () => {
    const { channel: open } = channel('secret words');
    const key = open.url.split('/live/')[1]!;
    for (const path of [
      `/live/${'0'.repeat(32)}`,
      `/live/${key.toUpperCase()}`,
      `/live/${key}/x`,
      `/${key}`,
      '/live/',
    ]) {
      const response = await fetch(`${relay.url}${path}`);
      assert.equal(response.status, 404, path);
      assert.doesNotMatch(await response.text(), /secret/);
    }
    const post = await fetch(open.url, { method: 'POST', body: 'x' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET');
    await post.text();
    await open.end();
  });

  test(`a call takes ${MAX_SUBSCRIBERS_PER_CALL} readers; the next is told to read from Temporal`, async () => {
    const { channel: open } = channel('hello');
    const readers = await Promise.all(
      Array.from({ length: MAX_SUBSCRIBERS_PER_CALL }, async () => {
        const abort = new AbortController();
        const response = await fetch(open.url, { signal: abort.signal });
        assert.equal(response.status, 200);
        // Kept: fetch cancels the body of a response collected as garbage, which would free its place.
        return { abort, response };
      }),
    );
    const refused = await fetch(open.url);
    assert.equal(refused.status, 503);
    assert.match(await refused.text(), /too many readers/);
    for (const { abort } of readers) abort.abort();
    await open.end();
  });

  test('a reader that stops reading is dropped once more than 1 MiB waits for it', async () => {
    const { blocks, channel: open } = channel('');
    const { port } = new URL(relay.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(`GET ${new URL(open.url).pathname} HTTP/1.1\r\nHost: x\r\n\r\n`);
    socket.pause(); // reads nothing more
    await waitUntil('the reader to subscribe', () => open.subscriberCount === 1, { timeoutMs: 5_000, everyMs: 20 });
    const block = blocks.get(0) as { text: string };
    for (let i = 0; i < 40 && open.subscriberCount > 0; i++) {
      block.text += 'x'.repeat(MAX_QUEUED_BYTES / 4);
      open.changed();
      await new Promise((resolve) => setTimeout(resolve, 60));
    }
    assert.equal(open.subscriberCount, 0, 'dropped');
    socket.destroy();
    await open.end();
  });

  test('a reader that comes after the end is told the attempt is over', async () => {
    const { channel: open } = channel('done');
    const url = open.url;
    await open.end();
    assert.equal((await fetch(url)).status, 404);
  });
});

describe('what the relay holds for its readers is bounded, whatever they read', () => {
  /**
   * A reader that asks for `first`, then for `second` on the same connection (HTTP pipelining): the second response
   * waits in the relay's memory until the first is over, as behind a reader that stopped reading (without the
   * megabytes the kernel's buffers take first on loopback). Collects what the connection receives.
   */
  function pipelined(on: LiveRelay, first: string, second: string) {
    const socket = net.connect(Number(new URL(on.url).port), '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    socket.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const path = (url: string) => new URL(url).pathname;
    socket.write(`GET ${path(first)} HTTP/1.1\r\nHost: x\r\n\r\nGET ${path(second)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    return { socket, closed, received: () => received };
  }

  async function boundedRelay(options: Parameters<typeof LiveRelay.start>[0]) {
    const bounded = await LiveRelay.start(options);
    const open = (text = '') => {
      const blocks = new Map<number, LiveBlockState>([[0, { kind: 'text', text }]]);
      return { blocks, channel: bounded.open({ call: 1, attempt: 1, blocks }, converter) };
    };
    return { bounded, open };
  }

  test('`alive` lines count: a reader whose lines only wait is dropped once what waits passes the relay’s bound', async () => {
    const { bounded, open } = await boundedRelay({ maxBufferedBytes: 300, stalledReaderMs: 600_000 });
    try {
      const { channel: first } = open();
      const { channel: second } = open();
      const reader = pipelined(bounded, first.url, second.url);
      await waitUntil('the second reader to subscribe', () => second.subscriberCount === 1, {
        timeoutMs: 5_000,
        everyMs: 20,
      });
      // Nothing but `alive`, once a second, waits behind the first response (its head is about 200 bytes).
      await waitUntil('the relay to drop the reader behind', () => bounded.droppedReaders === 1, {
        timeoutMs: 20_000,
        everyMs: 20,
      });
      assert.ok(bounded.bufferedBytes() <= 300, 'what waits stays within the bound');
      await first.end();
      await reader.closed;
      assert.doesNotMatch(reader.received(), /x-ndjson[^]*x-ndjson/, 'the dropped response was never sent');
      await second.end();
    } finally {
      await bounded.close();
    }
  });

  test('a reader with bytes waiting that takes none for the stall time is dropped: its connection closes', async () => {
    const { bounded, open } = await boundedRelay({ stalledReaderMs: 500 });
    try {
      const { channel: first } = open();
      const { channel: second, blocks } = open();
      const reader = pipelined(bounded, first.url, second.url);
      await waitUntil('the second reader to subscribe', () => second.subscriberCount === 1, {
        timeoutMs: 5_000,
        everyMs: 20,
      });
      (blocks.get(0) as { text: string }).text += 'words that wait';
      second.changed();
      const started = Date.now();
      await waitUntil('the relay to drop the reader behind', () => bounded.droppedReaders === 1, {
        timeoutMs: 10_000,
        everyMs: 20,
      });
      assert.ok(Date.now() - started >= 500, 'not before the stall time');
      await first.end();
      await reader.closed;
      assert.doesNotMatch(reader.received(), /words that wait/);
      await second.end();
    } finally {
      await bounded.close();
    }
  });

  test('all readers together: past the relay’s bound the readers furthest behind are dropped, a reader that keeps up gets every word', async () => {
    const bound = 256 << 10;
    const { bounded, open } = await boundedRelay({ maxBufferedBytes: bound, stalledReaderMs: 600_000 });
    try {
      const { channel: first } = open();
      const { channel: reply, blocks } = open();
      const behind = Array.from({ length: 5 }, () => pipelined(bounded, first.url, reply.url));
      const keepingUp = drain(followRelay(reply.url, { call: 1, attempt: 1 }, converter));
      await waitUntil('the six readers to subscribe', () => reply.subscriberCount === 6, {
        timeoutMs: 5_000,
        everyMs: 20,
      });
      const block = blocks.get(0) as { text: string };
      let most = 0;
      for (let i = 0; i < 4; i++) {
        block.text += String(i).repeat(40_000); // each reader behind gets a line of about 54 KB
        reply.changed();
        await new Promise((resolve) => setTimeout(resolve, 100));
        most = Math.max(most, bounded.bufferedBytes());
      }
      assert.ok(most <= bound + 60_000, `what waited for all readers stayed within the bound and a line: ${most}`);
      await first.end();
      await reply.end();
      const { items, outcome } = await keepingUp;
      assert.equal(outcome, 'ended');
      const last = items.at(-1)!.blocks[0] as { at: number; text: string };
      assert.equal(last.at + last.text.length, block.text.length, 'the reader keeping up got it all');
      assert.equal(last.text, block.text.slice(last.at));
      // Each reader behind is either served to the end or cut off.
      let closed = 0;
      for (const r of behind) void r.closed.then(() => closed++);
      const ended = (r: (typeof behind)[number]) => (r.received().match(/\{"end":true\}/g) ?? []).length === 2;
      await waitUntil('every reader behind to be let go', () => closed + behind.filter(ended).length >= behind.length, {
        timeoutMs: 10_000,
        everyMs: 20,
      });
      const served = behind.filter((r) => /"reply"/.test(r.received())).length;
      assert.ok(served <= 1, `of 5 readers behind, those holding most were dropped (${served} served)`);
      assert.ok(bounded.droppedReaders >= 4);
      for (const r of behind) r.socket.destroy();
    } finally {
      await bounded.close();
    }
  });
});

describe('a reader follows only a relay that behaves', () => {
  test('only http(s) URLs of the relay’s shape are followed', async () => {
    assert.ok(isRelayUrl(`http://10.0.0.7:7300/live/${'a'.repeat(32)}`));
    for (const url of [
      `file:///etc/passwd`,
      `http://x/live/${'a'.repeat(31)}`,
      `http://x/live/${'a'.repeat(32)}?y`,
      `http://x/other/${'a'.repeat(32)}`,
      `http://user@x/live/${'a'.repeat(32)} `,
      42,
      undefined,
    ]) {
      assert.ok(!isRelayUrl(url), String(url));
    }
    const { outcome } = await drain(followRelay('file:///etc/passwd', { call: 1, attempt: 1 }, converter));
    assert.equal(outcome, 'failed');
  });

  /** A server that answers the relay's path with `lines`, then stays silent (or ends, with `end`). */
  async function fakeRelay(lines: string[], options: { end?: boolean; type?: string } = {}) {
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': options.type ?? 'application/x-ndjson' });
      for (const line of lines) res.write(`${line}\n`);
      if (options.end) res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/live/${'b'.repeat(32)}`;
    return {
      url,
      close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
    };
  }

  const line = async (reply: unknown) => {
    return JSON.stringify({ reply: payloadToJson(await encodeToPayload(converter, reply)) });
  };

  test('garbage, a reply of another attempt, or a gap in the text ends the following', async () => {
    const good = await line({ call: 1, attempt: 1, blocks: [{ index: 0, kind: 'text', at: 0, text: 'Hel' }] });
    const cases: [string, string[]][] = [
      ['not JSON', [good, '{oops']],
      ['not a payload', [good, '{"reply":{"data":5}}']],
      ['another attempt', [good, await line({ call: 1, attempt: 2, blocks: [] })]],
      ['a gap', [good, await line({ call: 1, attempt: 1, blocks: [{ index: 0, kind: 'text', at: 9, text: 'x' }] })]],
      [
        'a block changing kind',
        [good, await line({ call: 1, attempt: 1, blocks: [{ index: 0, kind: 'tool', id: 't', name: 'n' }] })],
      ],
    ];
    for (const [name, lines] of cases) {
      const fake = await fakeRelay(lines);
      const { items, outcome } = await drain(followRelay(fake.url, { call: 1, attempt: 1 }, converter));
      await fake.close();
      assert.equal(outcome, 'failed', name);
      assert.deepEqual(
        items.map((r) => r.blocks),
        [[{ index: 0, kind: 'text', at: 0, text: 'Hel' }]],
        `${name}: what came before it stands`,
      );
    }
  });

  test('a page that is not the relay’s, or a relay that goes silent, ends the following', async () => {
    const html = await fakeRelay(['<html>'], { type: 'text/html' });
    assert.equal((await drain(followRelay(html.url, { call: 1, attempt: 1 }, converter))).outcome, 'failed');
    await html.close();
    const silent = await fakeRelay([]);
    const started = Date.now();
    assert.equal((await drain(followRelay(silent.url, { call: 1, attempt: 1 }, converter))).outcome, 'failed');
    assert.ok(Date.now() - started < 10_000, 'gave up on its own');
    await silent.close();
    const cut = await fakeRelay(['{"alive":true}'], { end: true });
    assert.equal(
      (await drain(followRelay(cut.url, { call: 1, attempt: 1 }, converter))).outcome,
      'failed',
      'no end line',
    );
    await cut.close();
  });

  test('what the relay sends is put together like a heartbeat: the tail of a long text, thinking and tools in place', () => {
    const sofar = new LiveReplySoFar({ call: 2, attempt: 1 });
    const part = (blocks: LiveReply['blocks']): LiveReply => ({ call: 2, attempt: 1, blocks });
    assert.ok(sofar.add(part([{ index: 0, kind: 'thinking', at: 0, text: 'hmm' }])));
    assert.ok(sofar.add(part([{ index: 1, kind: 'text', at: 0, text: 'a'.repeat(5_000) }])));
    assert.ok(sofar.add(part([{ index: 1, kind: 'text', at: 5_000, text: 'b'.repeat(5_000) }])));
    assert.ok(sofar.add(part([{ index: 2, kind: 'tool', id: 'toolu_1', name: 'get', input: { q: 1 } }])));
    const { blocks } = sofar.reply();
    assert.deepEqual(blocks[0], { index: 0, kind: 'thinking', at: 0, text: 'hmm' });
    const text = blocks[1] as { at: number; text: string };
    assert.equal(text.at, 2_000);
    assert.equal(text.text, 'a'.repeat(3_000) + 'b'.repeat(5_000));
    assert.deepEqual(blocks[2], { index: 2, kind: 'tool', id: 'toolu_1', name: 'get', input: { q: 1 } });
    assert.ok(!sofar.add(part([{ index: -1, kind: 'text', at: 0, text: '' }])), 'a negative index');
    assert.ok(!sofar.add({ call: 3, attempt: 1, blocks: [] }), 'another call');
  });
});
