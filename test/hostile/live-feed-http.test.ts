// A conversation's live feed (streaming/worker/live-feed.ts) faces whoever can reach the worker's relay, takes what its
// workflow's sink hands it, and a reader follows whatever URL a heartbeat names: each side takes only what it
// expects. The relay answers only GET /feed/<a key it issued>?from=<offset>; the sink drops anything that is not an
// offset and a stream event; a reader refuses anything but a feed's URL and goes back to Temporal on a gap, a line
// that is not the feed's, or a feed with nothing to say.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { encodeToPayload, loadDataConverter } from '@temporalio/common/lib/internal-non-workflow';
import { waitUntil } from '../support/wait-until';
import type { WorkflowInfo } from '@temporalio/workflow';
import type { LiveBlockState } from '../../streaming/worker/live-channel';
import { LiveRelay, MAX_SUBSCRIBERS_PER_CALL, payloadToJson } from '../../streaming/worker/live-relay';
import { FEED_QUIET_MS, type FeedItem, followFeed, isFeedUrl } from '../../streaming/client/live-feed-reader';
import type { StreamEvent } from '../../streaming/stream-events';

const converter = loadDataConverter();
let relay: LiveRelay;
before(async () => {
  relay = await LiveRelay.start();
});
after(async () => {
  await relay.close();
});

let runs = 0;
/** A workflow run as the sink sees it, with the relay's sink functions for it. */
function run() {
  const info = { workflowId: `feed-${++runs}`, runId: `run-${runs}` } as WorkflowInfo;
  const { liveFeed } = relay.feedSinks(converter);
  return {
    info,
    publish: (offset: unknown, event: unknown) => liveFeed.published.fn(info, offset as number, event as StreamEvent),
    detach: () => liveFeed.detached.fn(info),
    /** The feed's URL as a model call's heartbeat names it (undefined: the worker has no feed for the run). */
    feedUrl: () => {
      const channel = relay.open({ call: 9, attempt: 1, blocks: new Map() }, converter, info);
      void channel.end();
      return channel.feedUrl;
    },
  };
}

const started = (turn: number): StreamEvent => ({ type: 'turn_started', turn, text: `message ${turn}` });

async function collect(items: AsyncGenerator<FeedItem, string, undefined>, count: number) {
  const got: FeedItem[] = [];
  for (;;) {
    const next = await items.next();
    if (next.done) return { got, outcome: next.value };
    got.push(next.value);
    if (got.length === count) {
      await items.return('failed');
      return { got, outcome: 'stopped' };
    }
  }
}

describe('the relay serves a feed only as it issued it', () => {
  test('an unknown key, a malformed path, a bad or missing offset and another method are refused, saying nothing', async () => {
    const r = run();
    r.publish(0, { type: 'turn_started', turn: 1, text: 'secret words' });
    const url = r.feedUrl()!;
    assert.ok(isFeedUrl(url), url);
    const key = url.split('/feed/')[1]!;
    for (const path of [
      `/feed/${'0'.repeat(32)}?from=0`,
      `/feed/${key.toUpperCase()}?from=0`,
      `/feed/${key}/x?from=0`,
    ]) {
      const response = await fetch(`${relay.url}${path}`);
      assert.equal(response.status, 404, path);
      assert.doesNotMatch(await response.text(), /secret/);
    }
    for (const query of [
      '',
      '?from=',
      '?from=-1',
      '?from=1.5',
      '?from=01',
      '?from=x',
      '?from=0&y=1',
      `?from=${'9'.repeat(16)}`,
    ]) {
      const response = await fetch(`${url}${query}`);
      assert.equal(response.status, 400, query);
      assert.doesNotMatch(await response.text(), /secret/);
    }
    const post = await fetch(`${url}?from=0`, { method: 'POST', body: 'x' });
    assert.equal(post.status, 405);
    await post.text();
    r.detach();
  });

  test('the sink drops what is not an offset and a stream event: no feed, no event', async () => {
    const r = run();
    for (const [offset, event] of [
      [-1, started(1)],
      [1.5, started(1)],
      ['0', started(1)],
      [Number.MAX_SAFE_INTEGER + 1, started(1)],
      [0, null],
      [0, { type: 'made_up' }],
      [0, { ...started(1), extra: 'x' }],
      [0, { type: 'conversation_ended', status: 'nonsense' }],
    ] as const) {
      r.publish(offset, event);
    }
    assert.equal(r.feedUrl(), undefined, 'nothing valid came: the worker has no feed for the run');
    r.publish(0, started(1));
    const url = r.feedUrl();
    assert.ok(url);
    r.publish(1, { type: 'made_up' });
    r.publish(1, { type: 'model_call_started', call: 1 });
    const { got } = await collect(followFeed(url, 0, converter), 2);
    assert.deepEqual(
      got.map((item) => item.kind === 'durable' && item.event.type),
      ['turn_started', 'model_call_started'],
    );
    r.detach();
  });

  test(`a feed takes ${MAX_SUBSCRIBERS_PER_CALL} readers; the next is told to read from Temporal`, async () => {
    const r = run();
    r.publish(0, started(1));
    const url = r.feedUrl()!;
    const readers = await Promise.all(
      Array.from({ length: MAX_SUBSCRIBERS_PER_CALL }, async () => {
        const abort = new AbortController();
        const response = await fetch(`${url}?from=0`, { signal: abort.signal });
        assert.equal(response.status, 200);
        // Kept: fetch cancels the body of a response collected as garbage, which would free its place.
        return { abort, response };
      }),
    );
    const refused = await fetch(`${url}?from=0`);
    assert.equal(refused.status, 503);
    assert.match(await refused.text(), /too many readers/);
    for (const { abort } of readers) abort.abort();
    r.detach();
  });

  test('a feed whose run ended is gone; its readers were told', async () => {
    const r = run();
    r.publish(0, started(1));
    const url = r.feedUrl()!;
    const subscribed = relay.feedSubscriptions;
    const reading = collect(followFeed(url, 0, converter), 10);
    await waitUntil('the reader to follow the feed', () => relay.feedSubscriptions > subscribed, {
      timeoutMs: 10_000,
      everyMs: 10,
    });
    r.detach();
    const { got, outcome } = await reading;
    assert.equal(got.length, 1);
    assert.equal(outcome, 'ended');
    assert.equal((await fetch(`${url}?from=0`)).status, 404);
  });
});

describe('a reader takes from a feed only events in order', () => {
  test('from an offset on, each once; a gap (events written on another worker) sends it back to Temporal', async () => {
    const r = run();
    for (let offset = 0; offset < 3; offset++) r.publish(offset, started(offset + 1));
    r.publish(1, started(99)); // a workflow task run again writes the same offsets again: not repeated
    const url = r.feedUrl()!;
    const items = followFeed(url, 1, converter);
    const first = await items.next();
    const second = await items.next();
    assert.deepEqual(
      [first.value, second.value].map((item) => (item as FeedItem & { kind: 'durable' }).offset),
      [1, 2],
    );
    r.publish(5, started(6)); // 3 and 4 were written elsewhere
    const { got, outcome } = await collect(items, 10);
    assert.deepEqual(got, []);
    assert.equal(outcome, 'failed');
    r.detach();
  });

  test('a model call of the run streaming on this worker comes through the feed, attempt first', async () => {
    const r = run();
    r.publish(0, { type: 'model_call_started', call: 1 });
    const url = r.feedUrl()!;
    const subscribed = relay.feedSubscriptions;
    const reading = collect(followFeed(url, 0, converter), 3);
    await waitUntil('the reader to follow the feed', () => relay.feedSubscriptions > subscribed, {
      timeoutMs: 10_000,
      everyMs: 10,
    });
    const blocks = new Map<number, LiveBlockState>([[0, { kind: 'text', text: 'Hel' }]]);
    const channel = relay.open({ call: 1, attempt: 1, blocks }, converter, r.info);
    channel.changed();
    const { got } = await reading;
    await channel.end();
    assert.deepEqual(got[0], { kind: 'durable', offset: 0, event: { type: 'model_call_started', call: 1 } });
    assert.deepEqual(got[1], { kind: 'live', call: 1, attempt: 1, reply: { call: 1, attempt: 1, blocks: [] } });
    assert.deepEqual(got[2], {
      kind: 'live',
      call: 1,
      attempt: 1,
      reply: { call: 1, attempt: 1, blocks: [{ index: 0, kind: 'text', at: 0, text: 'Hel' }] },
    });
    r.detach();
  });

  test('only http(s) URLs of the feed’s shape are followed', async () => {
    assert.ok(isFeedUrl(`http://10.0.0.7:7300/feed/${'a'.repeat(32)}`));
    for (const url of [
      'file:///etc/passwd',
      `http://x/feed/${'a'.repeat(31)}`,
      `http://x/feed/${'a'.repeat(32)}?from=0`,
      `http://x/live/${'a'.repeat(32)}`,
      42,
      undefined,
    ]) {
      assert.ok(!isFeedUrl(url), String(url));
    }
    assert.equal((await collect(followFeed('file:///etc/passwd', 0, converter), 1)).outcome, 'failed');
  });

  /** A server that answers the feed's path with `lines`, then stays silent. */
  async function fakeFeed(lines: string[]) {
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      for (const line of lines) res.write(`${line}\n`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/feed/${'b'.repeat(32)}`;
    return {
      url,
      close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
    };
  }
  const events = async (page: unknown) =>
    JSON.stringify({ events: payloadToJson(await encodeToPayload(converter, page)) });

  test('a call that went to a fallback model streams attempt 1 again: the failed model’s late line is not taken for it', async () => {
    const reply = async (at: number | undefined, text = '') =>
      JSON.stringify({
        reply: payloadToJson(
          await encodeToPayload(converter, {
            call: 1,
            attempt: 1,
            blocks: at === undefined ? [] : [{ index: 0, kind: 'text', at, text }],
          }),
        ),
      });
    const fake = await fakeFeed([
      await events({ events: [{ offset: 0, event: { type: 'model_call_started', call: 1 } }] }),
      await reply(undefined),
      await reply(0, 'Overloaded '),
      await events({
        events: [
          { offset: 1, event: { type: 'model_output_discarded', call: 1, reason: 'failed' } },
          { offset: 2, event: { type: 'model_call_started', call: 1, model: 'claude-opus-5-5' } },
        ],
      }),
      await reply(11, 'late'),
      await reply(undefined),
      await reply(0, 'Fallback'),
    ]);
    const { got, outcome } = await collect(followFeed(fake.url, 0, converter), 7);
    assert.equal(outcome, 'stopped', 'the reader stayed on the feed');
    const texts = got.map((item) =>
      item.kind === 'durable' ? item.event.type : item.reply.blocks.map((b) => ('text' in b ? b.text : '')).join(''),
    );
    assert.deepEqual(texts, [
      'model_call_started',
      '',
      'Overloaded ',
      'model_output_discarded',
      'model_call_started',
      '',
      'Fallback',
    ]);
    await fake.close();
  });

  for (const [name, line] of [
    ['a line that is not JSON', async () => 'not json'],
    ['events that are not a list', async () => events({ events: 'x' })],
    ['an event without an offset', async () => events({ events: [{ event: started(1) }] })],
    ['an event without a type', async () => events({ events: [{ offset: 0, event: { text: 'x' } }] })],
    [
      'a reply of no attempt',
      async () => JSON.stringify({ reply: payloadToJson(await encodeToPayload(converter, { blocks: [] })) }),
    ],
    ['a payload that is not one', async () => JSON.stringify({ events: { data: 42 } })],
  ] as const) {
    test(`${name}: the reader stops and reads from Temporal`, async () => {
      const fake = await fakeFeed([await line()]);
      const { got, outcome } = await collect(followFeed(fake.url, 0, converter), 5);
      assert.deepEqual(got, []);
      assert.equal(outcome, 'failed');
      await fake.close();
    });
  }

  test('a feed with nothing new (only `alive`) is left after a while', async () => {
    const fake = await fakeFeed([await events({ events: [{ offset: 0, event: started(1) }] }), '{"alive":true}']);
    const begun = Date.now();
    const { got, outcome } = await collect(followFeed(fake.url, 0, converter), 5);
    assert.equal(got.length, 1);
    assert.equal(outcome, 'failed');
    assert.ok(Date.now() - begun < FEED_QUIET_MS.max, 'left after its first quiet spell, well before the longest');
    await fake.close();
  });
});
