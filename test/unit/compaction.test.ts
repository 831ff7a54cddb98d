// The API's compaction blocks in the transcript: kept at the head of the reply by both protocols, standing for
// everything before them, and a failed compaction (null content) standing for nothing.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { BetaCompactionBlock } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { afterCompaction, compactionOf, type ReplyBlock } from '../../common/compaction';
import { readReply } from '../../common/protocols/read-reply';
import { protocolFor } from '../../common/protocols';
import { LEGACY_STOP_SEQUENCE } from '../../common/protocols/legacy-xml';

const block: BetaCompactionBlock = {
  type: 'compaction',
  content: 'The user asked for the weather in Paris; it is 14 °C.',
  encrypted_content: 'opaque',
  signature: 'sig',
};
const asParam = { type: 'compaction', content: block.content, encrypted_content: 'opaque', signature: 'sig' };
const reply = (content: ReplyBlock[], stop_reason: 'tool_use' | 'end_turn' | 'stop_sequence' = 'tool_use') => ({
  content,
  stop_reason,
  stop_sequence: stop_reason === 'stop_sequence' ? LEGACY_STOP_SEQUENCE : null,
});

describe('compaction blocks', () => {
  test('native: the block stays first in the assistant message, the tool calls are read as usual', () => {
    const reading = readReply(
      protocolFor('native'),
      reply([
        block,
        { type: 'text', text: 'Now Tokyo.', citations: null },
        { type: 'tool_use', id: 't1', name: 'get_weather', input: { location: 'Tokyo' }, caller: { type: 'direct' } },
      ]),
      7,
      [],
    );
    assert.deepEqual(reading.assistant, {
      role: 'assistant',
      content: [
        asParam,
        { type: 'text', text: 'Now Tokyo.' },
        { type: 'tool_use', id: 't1', name: 'get_weather', input: { location: 'Tokyo' } },
      ],
    });
    assert.deepEqual(
      reading.toolCalls.map((call) => call.name),
      ['get_weather'],
    );
    assert.equal(reading.text, 'Now Tokyo.');
  });

  test('legacy XML: the block stays first, the text after it is read as the protocol reads text', () => {
    const calls =
      '<function_calls>\n<invoke>\n<tool_name>get_weather</tool_name>\n<parameters>\n<location>Tokyo</location>\n</parameters>\n</invoke>\n';
    const reading = readReply(
      protocolFor('legacy-xml'),
      reply([block, { type: 'text', text: calls, citations: null }], 'stop_sequence'),
      3,
      [],
    );
    assert.deepEqual(reading.assistant, {
      role: 'assistant',
      content: [asParam, { type: 'text', text: calls + LEGACY_STOP_SEQUENCE }],
    });
    assert.deepEqual(reading.toolCalls, [
      { id: 'legacy-3-0', ref: '3-0', name: 'get_weather', input: { location: 'Tokyo' } },
    ]);
  });

  test('a reply that is the block alone (paused after compacting) is an assistant message of that block', () => {
    for (const name of ['native', 'legacy-xml'] as const) {
      const reading = readReply(protocolFor(name), reply([block], 'end_turn'), 1, []);
      assert.deepEqual(reading.assistant, { role: 'assistant', content: [asParam] });
      assert.deepEqual(reading.toolCalls, []);
    }
  });

  test('the model sees everything from the last compaction on', () => {
    const messages: MessageParam[] = [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: [asParam] as unknown as MessageParam['content'] },
      { role: 'user', content: 'And Tokyo?' },
      { role: 'assistant', content: [{ ...asParam, content: 'Later summary.' }] as unknown as MessageParam['content'] },
      { role: 'user', content: 'And London?' },
    ];
    assert.deepEqual(afterCompaction(messages), messages.slice(3));
    assert.deepEqual(afterCompaction(messages.slice(0, 1)), messages.slice(0, 1));
    assert.equal(compactionOf(messages[3])?.content, 'Later summary.');
  });

  test('a failed compaction (null content) stands for nothing: the messages before it stay', () => {
    const failed = { type: 'compaction', content: null } as unknown as MessageParam['content'][number];
    const messages: MessageParam[] = [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: [failed as never, { type: 'text', text: 'Sunny.' }] },
    ];
    assert.equal(compactionOf(messages[1]), undefined);
    assert.deepEqual(afterCompaction(messages), messages);
  });
});
