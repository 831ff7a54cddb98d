// The conversation's event log as the workflow keeps it (streaming/workflow/conversation-stream.ts): offsets that go on across
// runs, two turns kept, pages bounded in events and bytes, a hand-over within its byte budget that the next run's input
// schema accepts, and a run that starts from the log version 0.1.0 carried. Pure: the workflow's own code, no server.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { streamSchemas } from '../../streaming/stream-event-schema';

const { carriedStreamSchema, streamEventSchema } = streamSchemas();
import { STREAM_PAGE_BYTES, STREAM_PAGE_EVENTS, type StreamEvent } from '../../streaming/stream-events';
import { jsonBytes } from '../../common/utf8-length';
import { conversationInputSchema } from '../../common/workflow-messages';
import { ConversationStream, MAX_CARRIED_STREAM_BYTES } from '../../streaming/workflow/conversation-stream';

const usage = { inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };

/** One turn as the workflow writes it: its start, one model call with a text reply, its end. */
function turn(log: ConversationStream, n: number, text = `reply ${n}`): void {
  log.turnStarted(n, `message ${n}`);
  log.publish({ type: 'model_call_started', call: n });
  log.publish({ type: 'text', call: n, attempt: 1, block: 0, at: 0, text });
  log.publish({ type: 'model_call_finished', call: n, stopReason: 'end_turn', usage, costUsd: null });
  log.publish({ type: 'turn_finished', turn: n, status: 'awaiting_user', text, stopReason: 'end_turn', usage });
  log.turnEnded();
}

test('log: offsets go on for ever; the current and the previous turn are kept; a reader behind resumes at the oldest kept', () => {
  const log = new ConversationStream();
  for (let n = 1; n <= 3; n++) turn(log, n);
  assert.equal(log.offset(), 15);
  const page = log.read(0); // turn 1 (offsets 0–4) was dropped when turn 3 ended
  assert.deepEqual(
    page.events.map(({ offset }) => offset),
    [5, 6, 7, 8, 9, 10, 11, 12, 13, 14],
  );
  assert.deepEqual(page.events[0]!.event, { type: 'turn_started', turn: 2, text: 'message 2' });
  assert.deepEqual([page.next, page.more], [15, false]);
  assert.deepEqual(log.read(99), { events: [], next: 99, more: false }, 'asking past the end finds nothing');
  assert.equal(log.hasEventsFrom(15), false);
  assert.equal(log.hasEventsFrom(14), true);
  assert.equal(log.hasEventsFrom(0), true, 'a reader behind has the oldest kept events to read');
});

test('log: a page holds at most STREAM_PAGE_EVENTS events and STREAM_PAGE_BYTES of them, one larger event alone', () => {
  const log = new ConversationStream();
  log.turnStarted(1, 'hi');
  for (let call = 1; call <= STREAM_PAGE_EVENTS + 10; call++) log.publish({ type: 'model_call_started', call });
  const first = log.read(0);
  assert.deepEqual([first.events.length, first.next, first.more], [STREAM_PAGE_EVENTS, STREAM_PAGE_EVENTS, true]);

  const big = new ConversationStream();
  const text = 'x'.repeat(STREAM_PAGE_BYTES * 0.4);
  big.turnStarted(1, 'hi');
  for (let block = 0; block < 4; block++) big.publish({ type: 'text', call: 1, attempt: 1, block, at: 0, text });
  const pages = [big.read(0)];
  while (pages.at(-1)!.more) pages.push(big.read(pages.at(-1)!.next));
  assert.deepEqual(
    pages.map((page) => page.events.length),
    [3, 2],
  );
  for (const page of pages) assert.ok(jsonBytes(page.events) <= STREAM_PAGE_BYTES + 100);
  const huge = new ConversationStream();
  huge.turnStarted(1, 'x'.repeat(STREAM_PAGE_BYTES * 1.5));
  assert.equal(huge.read(0).events.length, 1, 'an event larger than a page comes alone');
});

test('log: the hand-over keeps what the log holds when it fits, else the current turn, else nothing; the next run takes it', () => {
  const carried = (budget: number) => {
    const log = new ConversationStream();
    turn(log, 1, 'a'.repeat(10_000));
    turn(log, 2, 'b'.repeat(10_000));
    log.turnStarted(3, 'now');
    return log.carry(budget);
  };
  const all = carried(MAX_CARRIED_STREAM_BYTES);
  assert.deepEqual([all.base, all.events.length], [0, 11]);
  const current = carried(1_000);
  assert.deepEqual([current.base, current.events.length], [10, 1]);
  const none = carried(10);
  assert.deepEqual(none, { base: 11, events: [] });
  for (const stream of [all, current, none]) {
    assert.ok(jsonBytes(stream) <= Math.max(jsonBytes(none), stream === all ? MAX_CARRIED_STREAM_BYTES : 1_000));
    // What the next run is started with passes its input schema, and goes on where this one stopped.
    const input = conversationInputSchema.parse({ stream: JSON.parse(JSON.stringify(stream)) });
    const next = new ConversationStream(input.stream);
    assert.equal(next.offset(), 11);
    assert.deepEqual(
      next.read(0).events.map(({ offset }) => offset)[0],
      stream.events.length ? stream.base : undefined,
    );
  }
});

test("log: a run continued from 0.1.0's carried log (the replay fixture's run 2) goes on at base_offset + count", () => {
  const fixture = join(__dirname, '..', 'fixtures', 'replay', '0.1.0', 'stream-reader-and-continue-as-new.run2.json');
  const history = historyFromJSON(JSON.parse(readFileSync(fixture, 'utf8')));
  const payload = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
  const raw = JSON.parse(Buffer.from(payload.data!).toString('utf8')) as {
    stream: { base_offset: number; log: unknown[] };
  };
  const input = conversationInputSchema.parse(raw);
  const log = new ConversationStream(input.stream);
  const next = raw.stream.base_offset + raw.stream.log.length;
  assert.ok(raw.stream.log.length > 0);
  assert.equal(log.offset(), next);
  assert.deepEqual(log.read(0), { events: [], next, more: false }, 'its base64 events are not decoded');
  log.publish({ type: 'model_call_started', call: 3 });
  assert.deepEqual(
    log.read(0).events.map(({ offset }) => offset),
    [next],
  );
  // Its next hand-over is this version's format.
  assert.ok(carriedStreamSchema.safeParse(log.carry(MAX_CARRIED_STREAM_BYTES)).success);
});

test('schema: each event the workflow writes passes; unknown types, missing or extra fields and wrong types do not', () => {
  const good: StreamEvent[] = [
    { type: 'turn_started', turn: 1, text: 'hi' },
    { type: 'model_call_started', call: 1 },
    { type: 'text', call: 1, attempt: 1, block: 0, at: 0, text: 'Hello' },
    { type: 'tool_call_started', call: 1, attempt: 1, block: 1, id: 'toolu_1', name: 'get_ticker_symbol' },
    { type: 'tool_call_input', call: 1, attempt: 1, block: 1, id: 'toolu_1', name: 'x', input: { a: [1] } },
    { type: 'model_output_discarded', call: 1, attempt: 2, reason: 'retried' },
    { type: 'model_output_discarded', call: 1, reason: 'max_tokens' },
    { type: 'model_call_finished', call: 1, stopReason: null, usage, costUsd: 0.1 },
    {
      type: 'approval_requested',
      approval: { callId: 'c', tool: 'buy_stock', input: {}, argumentsDigest: 'd', requestedAt: '2026-01-01' },
    },
    { type: 'approval_settled', callId: 'c', outcome: 'timed_out' },
    { type: 'tool_result', id: 'toolu_1', name: 'x', isError: false, content: 'GM', truncated: true },
    { type: 'turn_finished', turn: 1, status: 'completed', text: '{}', stopReason: 'end_turn', usage, output: {} },
    { type: 'turn_failed', turn: 1, failure: { type: 'ModelAuthentication', message: 'no' } },
    { type: 'conversation_ended', status: 'cancelled' },
  ];
  for (const event of good) assert.ok(streamEventSchema.safeParse(event).success, event.type);
  for (const event of [
    null,
    { type: 'nope' },
    { type: 'turn_started', turn: 1 },
    { type: 'turn_started', turn: 1, text: 'hi', extra: 1 },
    { type: 'turn_started', turn: -1, text: 'hi' },
    { type: 'conversation_ended', status: 'whatever' },
    { type: 'text', call: 1, attempt: 0, block: 0, at: 0, text: 'x' },
  ]) {
    assert.equal(streamEventSchema.safeParse(event).success, false, JSON.stringify(event));
  }
});
