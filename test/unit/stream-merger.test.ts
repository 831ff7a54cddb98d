// How a reader's two sources become one sequence (streaming/client/stream-merger.ts): the live reply of the call in flight,
// then the same reply from the durable log, with nothing twice; a new attempt drops the old one's output; a reader
// resuming after a cursor gets exactly what follows. Pure.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseCursor } from '../../streaming/client/stream-cursor';
import { StreamMerger } from '../../streaming/client/stream-merger';
import { StreamView } from '../../streaming/client/stream-view';
import type { LiveReply, StreamEvent, StreamItem } from '../../streaming/stream-events';

const reply = (attempt: number, text: string, tool?: { input?: unknown }): LiveReply => ({
  call: 1,
  attempt,
  blocks: [
    { index: 0, kind: 'text', at: 0, text },
    ...(tool ? [{ index: 1, kind: 'tool' as const, id: 'toolu_1', name: 'get_ticker_symbol', ...tool }] : []),
  ],
});
const finalText: StreamEvent = { type: 'text', call: 1, attempt: 1, block: 0, at: 0, text: 'Let me check.' };
const texts = (items: StreamItem[]) => items.flatMap((i) => (i.event.type === 'text' ? [i.event.text] : []));

test('merger: live pieces, then the final reply from the log adds only what was not seen; a tool seen live is marked seen', () => {
  const m = new StreamMerger();
  const out = [
    ...m.durable(0, { type: 'model_call_started', call: 1 }),
    ...m.live(1, 1, reply(1, 'Let')),
    ...m.live(1, 1, reply(1, 'Let me ch')),
    ...m.live(1, 1, reply(1, 'Let me check.', {})),
    ...m.durable(1, finalText),
    ...m.durable(2, {
      type: 'tool_call_started',
      call: 1,
      attempt: 1,
      block: 1,
      id: 'toolu_1',
      name: 'get_ticker_symbol',
    }),
    ...m.durable(3, {
      type: 'tool_call_input',
      call: 1,
      attempt: 1,
      block: 1,
      id: 'toolu_1',
      name: 'get_ticker_symbol',
      input: { company_name: 'GM' },
    }),
  ];
  assert.deepEqual(texts(out), ['Let', ' me ch', 'eck.', '']);
  const tools = out.filter((i) => i.event.type.startsWith('tool_call'));
  assert.deepEqual(
    tools.map((i) => [i.event.type, i.live === true, i.seen === true]),
    [
      ['tool_call_started', true, false],
      ['tool_call_started', false, true],
      ['tool_call_input', false, false],
    ],
  );
  assert.deepEqual(parseCursor(out.at(-1)!.cursor), { offset: 3, live: { call: 1, attempt: 1, block: 1, end: 1 } });
});

test('merger: a new attempt drops what the earlier one showed, even before it has heartbeaten', () => {
  const m = new StreamMerger();
  m.durable(0, { type: 'model_call_started', call: 1 });
  const first = m.live(1, 1, reply(1, 'half an ans'));
  const stale = m.live(1, 2, reply(1, 'half an answer')); // attempt 2 runs; the details are still attempt 1's
  const second = m.live(1, 2, reply(2, 'The'));
  assert.deepEqual(texts(first), ['half an ans']);
  assert.deepEqual(
    stale.map((i) => i.event),
    [{ type: 'model_output_discarded', call: 1, attempt: 1, reason: 'retried' }],
  );
  assert.deepEqual(texts(second), ['The']);
  const view = new StreamView();
  for (const i of [...first, ...stale, ...second]) view.apply(i.event);
  assert.equal(view.text(), 'The');
});

test('merger: resuming after a live cursor gives exactly the rest; a long block seen only by its tail waits for the log', () => {
  const m = new StreamMerger(parseCursor('0~1.1.0.7'));
  assert.deepEqual(texts(m.live(1, 1, reply(1, 'Let me check.'))), ['check.']);
  const late = new StreamMerger(parseCursor('0'));
  const tail: LiveReply = { call: 1, attempt: 1, blocks: [{ index: 0, kind: 'text', at: 100, text: 'end' }] };
  assert.deepEqual(late.live(1, 1, tail), []);
  assert.deepEqual(texts(late.durable(1, finalText)), ['Let me check.']);
});

test('merger: the live reply of a call the log says ended is stale and ignored', () => {
  const m = new StreamMerger();
  m.durable(0, { type: 'model_call_started', call: 1 });
  m.durable(1, finalText);
  m.durable(2, {
    type: 'model_call_finished',
    call: 1,
    stopReason: 'end_turn',
    usage: { inputTokens: 1, outputTokens: 1, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
  });
  assert.deepEqual(m.live(1, 1, reply(1, 'Let me check. More')), []);
});

test('merger: live text of a call read before the log says it started is not given again', () => {
  const m = new StreamMerger();
  const early = m.live(1, 1, reply(1, 'Let me'));
  const started = m.durable(0, { type: 'model_call_started', call: 1 });
  const rest = [...m.live(1, 1, reply(1, 'Let me check.')), ...m.durable(1, finalText)];
  assert.deepEqual(texts([...early, ...started, ...rest]), ['Let me', ' check.', '']);
});
