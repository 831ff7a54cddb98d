// A streamed reply whose model fails as overloaded midway and is answered by a fallback model, read as the CLI's
// `chat` and the gateway's chat page read it (streamMessage, folded by StreamView). With `fallbackAfterAttempts: 1`
// the dead attempt and the fallback's are both attempt 1 of call 1: only the log's `model_call_started` for the
// fallback tells them apart. On every path a reader can take — the conversation's feed on the worker, the call's own
// relay, heartbeats through Temporal, the log alone — the dead model's text goes, the fallback's streams live, and
// what the reader shows at the end is exactly the turn's answer.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { StreamView } from '../../streaming/client/stream-view';
import type { StreamEvent, StreamItem } from '../../streaming/stream-events';
import type { ScriptStep } from '../../testing/messages-api/types';
import { type Harness, type HarnessOptions, startHarness, uniquePrompt } from '../support/harness';

const PRIMARY = 'claude-sonnet-5-5';
const FALLBACK = 'claude-opus-5-5';
const PARTIAL = 'PARTIAL words of the overloaded model that go on and on.';
const ANSWER = `Fallback answer${' tok'.repeat(40)}.`;

const harnesses: Harness[] = [];
after(async () => {
  for (const h of harnesses) await h.close();
});

async function harness(options: HarnessOptions): Promise<Harness> {
  const h = await startHarness(options);
  harnesses.push(h);
  return h;
}

/** The scripted turn: the first model streams PARTIAL slowly and fails as overloaded; the fallback streams ANSWER. */
function script(h: Harness): string {
  const prompt = uniquePrompt('Say something long.');
  const overloaded: ScriptStep = {
    fault: 'stream-error',
    errorType: 'overloaded_error',
    text: PARTIAL,
    tokenDelayMs: 100,
    usage: { input_tokens: 100, output_tokens: 1 },
  };
  h.mock.script(prompt, [
    overloaded,
    { reply: { content: [{ type: 'text', text: ANSWER }], stop_reason: 'end_turn' }, tokenDelayMs: 40 },
  ]);
  return prompt;
}

const START = { model: PRIMARY, fallbackModels: [FALLBACK], fallbackAfterAttempts: 1, closeAfterFirstReply: true };

async function streamTurn(h: Harness, path: string): Promise<{ id: string; items: StreamItem[] }> {
  const prompt = script(h);
  const id = `fallback-read-${path}-${randomUUID().slice(0, 8)}`;
  const items: StreamItem[] = [];
  for await (const item of h.conversations.streamMessage(id, prompt, { start: START })) items.push(item);
  assert.deepEqual(
    h.mock.requestsFor(prompt).map((r) => r.body.model),
    [PRIMARY, FALLBACK],
    'one attempt on the first model, then the fallback',
  );
  return { id, items };
}

type Text = Extract<StreamEvent, { type: 'text' }>;
const isText = (item: StreamItem): item is StreamItem & { event: Text } => item.event.type === 'text';

/**
 * What the reader shows, item after item: the dead model's words while it streams, then, from the fallback's start
 * on, only ever a beginning of the fallback's answer, and at the end exactly the turn's text.
 */
function assertShowsTheFallback(items: StreamItem[], { live }: { live: boolean }): void {
  const finished = items.at(-1)!.event;
  assert.ok(finished.type === 'turn_finished', `the turn finished: ${JSON.stringify(finished)}`);
  assert.equal(finished.text, ANSWER, 'the fallback answered the turn');

  const fallbackStart = items.findIndex((i) => i.event.type === 'model_call_started' && i.event.model === FALLBACK);
  assert.ok(fallbackStart > 0, 'the log says the call went to the fallback');
  const view = new StreamView();
  items.forEach((item, index) => {
    view.apply(item.event);
    const shown = view.text();
    if (index < fallbackStart) {
      assert.ok(PARTIAL.startsWith(shown), `before the switch the first model's words, not ${JSON.stringify(shown)}`);
    } else {
      assert.ok(ANSWER.startsWith(shown), `after the switch a beginning of the answer, not ${JSON.stringify(shown)}`);
    }
  });
  assert.equal(view.text(), finished.text, 'what the reader shows at the end is the turn’s text');

  if (!live) {
    assert.ok(
      items.every((i) => !i.live),
      'the log alone has nothing live',
    );
    return;
  }
  const before = items.slice(0, fallbackStart).filter((i) => i.live && isText(i));
  assert.ok(before.length > 0, 'the first model’s words were shown live before it failed');
  const finishedAt = items.findIndex((i) => i.event.type === 'model_call_finished');
  const fallbackLive = items.slice(fallbackStart, finishedAt).filter((i) => i.live && isText(i));
  assert.ok(fallbackLive.length >= 2, `the fallback’s answer streamed live (${fallbackLive.length} pieces)`);
  for (const { event } of fallbackLive as { event: Text }[]) {
    assert.equal(event.text, ANSWER.slice(event.at, event.at + event.text.length), 'each live piece is the answer’s');
  }
}

/** The conversation's events from `from`, up to the end of the turn. */
async function readTurn(h: Harness, id: string, from: { fromOffset?: number; after?: string }) {
  const items: StreamItem[] = [];
  for await (const item of h.conversations.events(id, from)) {
    items.push(item);
    if (item.event.type === 'turn_finished' || item.event.type === 'turn_failed') break;
  }
  return items;
}

describe('a streamed reply that fails over to a fallback model, as each reader path shows it', () => {
  test('from the conversation’s feed on the worker', async () => {
    const h = await harness({ liveRelay: {} });
    const feeds = h.relay!.feedSubscriptions;
    const { items } = await streamTurn(h, 'feed');
    assert.ok(h.relay!.feedSubscriptions > feeds, 'the reader followed the feed');
    assertShowsTheFallback(items, { live: true });
  });

  test('from each call’s own relay (no feed: the calls run on another worker than the workflow)', async () => {
    const h = await harness({ liveRelay: {}, liveFeed: false });
    const { items } = await streamTurn(h, 'relay');
    assert.equal(h.relay!.feedSubscriptions, 0);
    assert.ok(h.relay!.subscriptions >= 2, `the reader followed both calls’ relays (${h.relay!.subscriptions})`);
    assertShowsTheFallback(items, { live: true });
  });

  test('from heartbeats through Temporal (no relay); then from the log alone, late and from cursors', async () => {
    const h = await harness({});
    const { id, items } = await streamTurn(h, 'heartbeats');
    assertShowsTheFallback(items, { live: true });

    const late = await readTurn(h, id, { fromOffset: items[0]!.offset });
    assertShowsTheFallback(late, { live: false });

    // Resumed after a cursor in the dead model's words, and after one in the fallback's: nothing lost, nothing twice.
    const fallbackStart = items.findIndex((i) => i.event.type === 'model_call_started' && i.event.model === FALLBACK);
    const fallbackLive = items.flatMap((i, index) => (index > fallbackStart && i.live && isText(i) ? [index] : []));
    const cuts = [items.findIndex((i) => i.live && isText(i)), fallbackLive.at(-1) ?? -1];
    for (const cut of cuts) {
      assert.ok(cut >= 0);
      const resumed = await readTurn(h, id, { after: items[cut]!.cursor });
      const view = new StreamView();
      for (const item of [...items.slice(0, cut + 1), ...resumed]) view.apply(item.event);
      assert.equal(view.text(), ANSWER, `resumed after item ${cut}`);
    }
  });
});
