// What a reader shows of a conversation's events (streaming/client/stream-view.ts): text and tool calls as they stream, minus
// what the stream said to drop. Pure.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StreamView } from '../../streaming/client/stream-view';
import type { StreamEvent } from '../../streaming/stream-events';

const text = (call: number, attempt: number, t: string, block = 0, at = 0): StreamEvent => ({
  type: 'text',
  call,
  attempt,
  block,
  at,
  text: t,
});

function viewOf(events: StreamEvent[]): StreamView {
  const view = new StreamView();
  for (const event of events) view.apply(event);
  return view;
}

test('stream view: text deltas of a call add up, calls in order, blocks in their index order', () => {
  const view = viewOf([
    text(1, 1, 'Hel'),
    text(1, 1, 'lo. ', 0, 3),
    text(2, 1, 'world', 1),
    text(2, 1, 'Dear ', 0),
    // The final reply, whole, after the live pieces: nothing twice.
    text(1, 1, 'Hello. '),
  ]);
  assert.equal(view.text(), 'Hello. Dear world');
});

test('stream view: a retried attempt drops what the failed one streamed, and late deltas of the dead one stay out', () => {
  const view = viewOf([
    text(1, 1, 'half an ans'),
    { type: 'model_output_discarded', call: 1, attempt: 1, reason: 'retried' },
    text(1, 2, 'The answer.'),
    text(1, 1, 'wer from a worker taken for dead', 0, 11),
  ]);
  assert.equal(view.text(), 'The answer.');
});

test('stream view: max_tokens drops every attempt of the call; the next call shows', () => {
  const view = viewOf([
    text(1, 1, 'cut off'),
    text(1, 2, 'cut off again'),
    { type: 'model_output_discarded', call: 1, reason: 'max_tokens' },
    text(2, 1, 'Whole reply.'),
  ]);
  assert.equal(view.text(), 'Whole reply.');
});

test('stream view: a tool call shows its name at once, then its input, then its result; replies sent whole (attempt 0) show too', () => {
  const view = viewOf([
    { type: 'tool_call_started', call: 1, attempt: 1, block: 1, id: 'toolu_1', name: 'get_ticker_symbol' },
    {
      type: 'tool_call_input',
      call: 1,
      attempt: 1,
      block: 1,
      id: 'toolu_1',
      name: 'get_ticker_symbol',
      input: { company_name: 'GM' },
    },
    { type: 'tool_result', id: 'toolu_1', name: 'get_ticker_symbol', isError: false, content: 'GM' },
    text(2, 0, 'Done.'),
  ]);
  assert.deepEqual(view.tools(), [
    {
      kind: 'tool',
      id: 'toolu_1',
      name: 'get_ticker_symbol',
      input: { company_name: 'GM' },
      result: { isError: false, content: 'GM' },
    },
  ]);
  assert.equal(view.text(), 'Done.');
});
