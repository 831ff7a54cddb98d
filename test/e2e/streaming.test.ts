// Replies that stream as they are written: what a reader of a conversation's events sees, live or late, across a
// retried model call and continue-as-new, and what it costs in history (nothing per token). (A worker SIGKILLed
// mid-stream: streaming-crash.test.ts.)
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { StreamEvent, StreamItem } from '../../streaming/stream-events';
import { StreamView } from '../../streaming/client/stream-view';
import { STOCK_QUESTION, STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import { type Harness, startHarness, uniquePrompt } from '../support/harness';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

async function collect(items: AsyncIterable<StreamItem>): Promise<StreamItem[]> {
  const out: StreamItem[] = [];
  for await (const item of items) out.push(item);
  return out;
}

const typesOf = (items: StreamItem[]) => items.map((i) => i.event.type);
const view = (items: StreamItem[]) => {
  const v = new StreamView();
  for (const item of items) v.apply(item.event);
  return v;
};
/** The assistant's words in the transcript, all replies joined: what the streamed text must add up to. */
const transcriptText = async (id: string) =>
  (await h.conversations.getTranscript(id))
    .filter((m) => m.role === 'assistant')
    .map((m) =>
      typeof m.content === 'string' ? m.content : m.content.map((b) => (b.type === 'text' ? b.text : '')).join(''),
    )
    .join('');

/** The durable log's events (not the live preview) come once each, offsets in order. */
function assertContiguous(items: StreamItem[], from: number): void {
  const durable = items.filter((i) => !i.live);
  assert.deepEqual(
    durable.map((i) => i.offset),
    durable.map((_, i) => from + i),
    'every offset once, in order',
  );
}

const signalsIn = async (id: string) =>
  ((await h.client.workflow.getHandle(id).fetchHistory()).events ?? []).filter(
    (e) => e.workflowExecutionSignaledEventAttributes,
  ).length;

describe('streaming a turn', () => {
  test('the stock-price chain streams text token by token, each tool call as it starts, its result, and the turn end', async () => {
    const prompt = uniquePrompt(STOCK_QUESTION);
    h.mock.script(prompt, [
      { demo: true, tokenDelayMs: 50 },
      { demo: true, tokenDelayMs: 50 },
      { demo: true, tokenDelayMs: 50 },
    ]);
    const id = `stream-chain-${Date.now()}`;
    const items = await collect(h.conversations.streamMessage(id, prompt, { start: { tools: STOCK_TOOLS } }));

    assert.equal(items[0]!.event.type, 'turn_started');
    assertContiguous(items, items[0]!.offset);
    const last = items.at(-1)!.event;
    assert.ok(last.type === 'turn_finished' && /38\.50/.test(last.text), 'ends with the reply');
    const types = typesOf(items);
    // Three model calls, each announced, streamed and finished; the two tools in the order the model asked for them.
    assert.equal(types.filter((t) => t === 'model_call_started').length, 3);
    assert.equal(types.filter((t) => t === 'model_call_finished').length, 3);
    const tools = items.flatMap((i) => (i.event.type === 'tool_call_started' && !i.seen ? [i.event.name] : []));
    assert.deepEqual(tools, STOCK_TOOLS);
    // A tool call's name comes before its input, its input before its result.
    for (const name of STOCK_TOOLS) {
      const at = (type: StreamEvent['type']) =>
        items.findIndex((i) => i.event.type === type && 'name' in i.event && i.event.name === name);
      assert.ok(at('tool_call_started') < at('tool_call_input') && at('tool_call_input') < at('tool_result'), name);
    }
    // Text came live, in several pieces, before each reply was final; the pieces add up to exactly what the
    // transcript holds, and the final reply repeats none of it.
    const live = items.filter((i) => i.live && i.event.type === 'text');
    assert.ok(live.length >= 3, `text arrives in more than one piece (${live.length})`);
    const texts = items.flatMap((i) => (i.event.type === 'text' ? [i.event.text] : []));
    assert.equal(texts.join(''), await transcriptText(id), 'each character once');
    const shown = view(items);
    assert.equal(shown.text(), await transcriptText(id));
    assert.equal(await signalsIn(id), 0, 'streaming adds no event to the history');
    assert.match(shown.tools()[1]!.result!.content, /38\.50/);
    assert.deepEqual(shown.tools()[0]!.input, { company_name: 'General Motors' });
  });

  test('a reader that comes late gets the same log and the same text; one that resumes after a cursor gets exactly the rest', async () => {
    const prompt = uniquePrompt(STOCK_QUESTION);
    // Paced as in the test above: slow enough for live text to reach the first reader on a busy machine too.
    h.mock.script(prompt, [
      { demo: true, tokenDelayMs: 50 },
      { demo: true, tokenDelayMs: 50 },
      { demo: true, tokenDelayMs: 50 },
    ]);
    const id = `stream-late-${Date.now()}`;
    const live = await collect(h.conversations.streamMessage(id, prompt, { start: { tools: STOCK_TOOLS } }));
    const first = live[0]!.offset;
    // The conversation stays open: read it again from the start of the turn, then after a cursor in the middle.
    const again = await collect(readUntilTurnEnd(id, { fromOffset: first }));
    assert.deepEqual(
      again.map((i) => [i.offset, i.event.type]),
      live.filter((i) => !i.live).map((i) => [i.offset, i.event.type]),
      'the same log',
    );
    assert.ok(again.every((i) => !i.live));
    assert.equal(view(again).text(), view(live).text());
    const cut = live.findIndex((i) => i.live && i.event.type === 'text');
    assert.ok(cut >= 0, 'some text came live');
    const resumed = await collect(readUntilTurnEnd(id, { after: live[cut]!.cursor }));
    const joined = [...live.slice(0, cut + 1), ...resumed];
    assert.equal(view(joined).text(), await transcriptText(id), 'nothing lost, nothing twice');
    assert.equal(resumed.filter((i) => !i.live)[0]!.offset, live[cut]!.offset + 1);
  });

  test("a model call that fails midway is retried: readers drop the failed attempt's partial text, the transcript never had it", async () => {
    const prompt = uniquePrompt('Say hello.');
    const partial = 'This half-written answer is abandoned';
    h.mock.script(prompt, [
      { fault: 'stream-error', text: partial, tokenDelayMs: 80 },
      { reply: { content: [{ type: 'text', text: 'Hello, here is the answer.' }], stop_reason: 'end_turn' } },
    ]);
    const id = `stream-retry-${Date.now()}`;
    const items = await collect(h.conversations.streamMessage(id, prompt, { start: {} }));

    const streamedPartial = items
      .filter((i) => i.event.type === 'text' && i.event.attempt === 1)
      .map((i) => (i.event as Extract<StreamEvent, { type: 'text' }>).text)
      .join('');
    assert.ok(streamedPartial.length > 0 && partial.startsWith(streamedPartial), 'the first attempt streamed');
    const drop = items.findIndex((i) => i.event.type === 'model_output_discarded');
    assert.ok(drop > 0, 'then readers were told to drop it');
    assert.deepEqual(items[drop]!.event, { type: 'model_output_discarded', call: 1, attempt: 1, reason: 'retried' });
    assert.ok(
      items.slice(drop).some((i) => i.event.type === 'text' && i.event.attempt === 2),
      'the second attempt streams after the drop',
    );
    assert.ok(
      items.slice(drop).every((i) => i.event.type !== 'text' || i.event.attempt === 2),
      'nothing of the first attempt after the drop',
    );
    assert.equal(view(items).text(), 'Hello, here is the answer.');
    assert.equal(await transcriptText(id), 'Hello, here is the answer.');
    assertContiguous(items, items[0]!.offset);
  });

  test('continue-as-new in the middle of a turn: a reader follows to the next runs and misses nothing', async () => {
    const prompt = uniquePrompt(STOCK_QUESTION);
    h.mock.script(prompt, [
      { demo: true, tokenDelayMs: 10 },
      { demo: true, tokenDelayMs: 10 },
      { demo: true, tokenDelayMs: 10 },
    ]);
    const id = `stream-can-${Date.now()}`;
    const items = await collect(
      h.conversations.streamMessage(id, prompt, { start: { tools: STOCK_TOOLS, continueAsNewAfterModelCalls: 1 } }),
    );
    assert.ok((await h.conversations.getState(id)).runs >= 3, 'the turn spanned three runs');
    assertContiguous(items, items[0]!.offset);
    assert.equal(typesOf(items).filter((t) => t === 'model_call_finished').length, 3);
    assert.equal(view(items).text(), await transcriptText(id));
    assert.equal(items.at(-1)!.event.type, 'turn_finished');
    // A late reader of the last run still finds the whole turn: the log went over with the runs.
    const late = await collect(readUntilTurnEnd(id, { fromOffset: items[0]!.offset }));
    assert.equal(view(late).text(), await transcriptText(id));
    assertContiguous(late, items[0]!.offset);
  });

  test('without streaming, readers get each reply whole once it is final, nothing live', async () => {
    const prompt = uniquePrompt(STOCK_QUESTION);
    const id = `stream-off-${Date.now()}`;
    const items = await collect(
      h.conversations.streamMessage(id, prompt, { start: { tools: STOCK_TOOLS, streaming: { enabled: false } } }),
    );
    assert.equal(view(items).text(), await transcriptText(id));
    assert.deepEqual(
      items.filter((i) => i.event.type === 'tool_call_input').map((i) => (i.event as { name: string }).name),
      STOCK_TOOLS,
    );
    assert.ok(items.every((i) => !i.live));
  });
});

/** The conversation's events from a place, up to the end of the turn they are in. */
async function* readUntilTurnEnd(
  id: string,
  from: { fromOffset?: number; after?: string },
): AsyncGenerator<StreamItem> {
  for await (const item of h.conversations.events(id, from)) {
    yield item;
    if (item.event.type === 'turn_finished' || item.event.type === 'turn_failed') return;
  }
}
