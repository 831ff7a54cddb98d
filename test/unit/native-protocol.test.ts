// The native protocol: tool_use blocks in, tool_result blocks out — pure, no server.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ContentBlock } from '@anthropic-ai/sdk/resources/messages';
import { nativeProtocol } from '../../common/protocols/native';

const reply = (content: unknown[], stop_reason: 'tool_use' | 'end_turn' = 'tool_use') => ({
  content: content as ContentBlock[],
  stop_reason,
  stop_sequence: null,
});

test("every tool_use block becomes a call, in the model's order", () => {
  const reading = nativeProtocol.readReply(
    reply([
      { type: 'text', text: 'Let me look both up.', citations: null },
      { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris' } },
      { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { location: 'Tokyo' } },
    ]),
    1,
  );
  assert.deepEqual(
    reading.toolCalls.map((call) => [call.id, call.input]),
    [
      ['toolu_1', { location: 'Paris' }],
      ['toolu_2', { location: 'Tokyo' }],
    ],
  );
  assert.equal(reading.text, 'Let me look both up.');
});

test("the assistant message keeps the reply's blocks without response-only fields", () => {
  const reading = nativeProtocol.readReply(reply([{ type: 'text', text: 'Hi', citations: null }], 'end_turn'), 1);
  assert.deepEqual(reading.assistant, { role: 'assistant', content: [{ type: 'text', text: 'Hi' }] });
  assert.equal(reading.toolCalls.length, 0);
});

test('a tool_use whose input is not an object is marked malformed, not run', () => {
  const reading = nativeProtocol.readReply(
    reply([{ type: 'tool_use', id: 'toolu_9', name: 'get_weather', input: 'Paris' }]),
    1,
  );
  assert.match(reading.toolCalls[0]!.malformed!, /must be a JSON object/);
});

test('results answer every call in one user message, errors flagged with is_error', () => {
  const message = nativeProtocol.renderResults([
    { callId: 'toolu_1', name: 'get_ticker_symbol', isError: false, content: 'GM' },
    {
      callId: 'toolu_2',
      name: 'get_ticker_symbol',
      isError: true,
      content: 'TickerNotFound: no ticker for "Genral Motors"',
    },
  ]);
  assert.deepEqual(message, {
    role: 'user',
    content: [
      { type: 'tool_result', tool_use_id: 'toolu_1', content: 'GM' },
      {
        type: 'tool_result',
        tool_use_id: 'toolu_2',
        content: 'TickerNotFound: no ticker for "Genral Motors"',
        is_error: true,
      },
    ],
  });
});
