// The orchestrator's own compaction: where the transcript is cut (never between a tool call and its results), what
// the summary call sends, and what a turn that fails after compacting goes back to.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import {
  compactedHead,
  isSummaryMessage,
  SUMMARY_REQUEST,
  summaryCut,
  summaryMessage,
  summaryRequestMessages,
  summaryText,
} from '../../common/orchestrator-summary';

let ids = 0;
/** A tool call and its results: an assistant message with `calls` tool_use blocks, a user message answering each. */
function exchange(calls: number): MessageParam[] {
  const idsOf = Array.from({ length: calls }, () => `t${++ids}`);
  return [
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Looking it up.' },
        ...idsOf.map((id) => ({ type: 'tool_use' as const, id, name: 'get_weather', input: { location: 'Paris' } })),
      ],
    },
    { role: 'user', content: idsOf.map((id) => ({ type: 'tool_result' as const, tool_use_id: id, content: 'sunny' })) },
  ];
}

/** Every tool_use id answered in the very next message, and every tool_result answering the message before. */
function pairsIntact(messages: readonly MessageParam[]): boolean {
  return messages.every((message, i) => {
    const blocks = Array.isArray(message.content) ? message.content : [];
    const uses = blocks.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));
    const next = messages[i + 1];
    const answered = new Set(
      next && Array.isArray(next.content)
        ? next.content.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : []))
        : [],
    );
    const previous = messages[i - 1];
    const offered = new Set(
      previous && Array.isArray(previous.content)
        ? previous.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []))
        : [],
    );
    const results = blocks.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : []));
    return uses.every((id) => answered.has(id)) && results.every((id) => offered.has(id));
  });
}

describe("the orchestrator's summary", () => {
  test('the cut never separates a tool call from its results, whatever the chain looks like', () => {
    // Chains of 1 to 30 exchanges of 1 to 3 parallel calls, ending with the results or with the next call's reply.
    let seed = 7;
    const random = (n: number) => (seed = (seed * 16807) % 2147483647) % n;
    for (let round = 0; round < 200; round++) {
      const messages: MessageParam[] = [{ role: 'user', content: 'Check the weather, one city at a time.' }];
      const exchanges = 1 + random(30);
      for (let i = 0; i < exchanges; i++) messages.push(...exchange(1 + random(3)));
      if (random(2) === 0) messages.push({ role: 'assistant', content: 'Done.' }, { role: 'user', content: 'Thanks!' });
      const cut = summaryCut(messages);
      if (cut === undefined) {
        assert.ok(messages.length < 4, `no cut in a transcript of ${messages.length} messages`);
        continue;
      }
      assert.equal(messages[cut]!.role, 'assistant');
      const after = [summaryMessage('…'), ...messages.slice(cut)];
      assert.ok(pairsIntact(after), `a pair split at ${cut}`);
      assert.ok(pairsIntact(summaryRequestMessages(messages.slice(0, cut))), `a pair split in the summarised part`);
      // The roles still alternate, starting with the summary (a user message).
      after.forEach((message, i) => assert.equal(message.role, i % 2 === 0 ? 'user' : 'assistant'));
    }
  });

  test('the most recent reply and what followed it stay as they are', () => {
    const messages: MessageParam[] = [{ role: 'user', content: 'Go.' }, ...exchange(1), ...exchange(2)];
    assert.equal(summaryCut(messages), 3);
    assert.equal(summaryCut(messages.slice(0, 3)), undefined, 'one exchange: nothing worth a summary');
  });

  test('the summary request goes into the last summarised message, after its tool results', () => {
    const messages: MessageParam[] = [{ role: 'user', content: 'Go.' }, ...exchange(1)];
    const request = summaryRequestMessages(messages);
    assert.equal(request.length, 3);
    const last = request[2]!.content as Array<{ type: string; text?: string }>;
    assert.deepEqual(
      last.map((b) => b.type),
      ['tool_result', 'text'],
    );
    assert.equal(last[1]!.text, SUMMARY_REQUEST);
    assert.equal(
      (summaryRequestMessages(messages, 'Only the cities.')[2]!.content as Array<{ text?: string }>)[1]!.text,
      'Only the cities.',
    );
    assert.throws(() => summaryRequestMessages(messages.slice(0, 2)), /summarises up to a user message/);
  });

  test('the summary is read from its tags, and stands first in the transcript as a user message', () => {
    assert.equal(summaryText('Sure.\n<summary>\nParis: sunny.\n</summary>'), 'Paris: sunny.');
    assert.equal(summaryText('Paris: sunny.'), 'Paris: sunny.');
    assert.equal(summaryText('<summary>Paris: sunny, and then'), 'Paris: sunny, and then');
    const message = summaryMessage('Paris: sunny.');
    assert.ok(isSummaryMessage(message));
    assert.ok(!isSummaryMessage({ role: 'user', content: 'Paris: sunny.' }));
  });

  test('a turn that failed after compacting goes back to the compaction alone', () => {
    const summary = summaryMessage('Paris: sunny.');
    const summarised: MessageParam[] = [
      { ...summary, content: [...(summary.content as []), { type: 'text', text: 'And Tokyo?' }] },
      ...exchange(1),
    ];
    assert.deepEqual(compactedHead(summarised), [summary]);
    const compaction = { type: 'compaction', content: 'Paris: sunny.', signature: 's' };
    const compacted = [
      { role: 'assistant', content: [compaction, { type: 'text', text: 'Tokyo next.' }] },
      { role: 'user', content: 'Go on.' },
    ] as unknown as MessageParam[];
    assert.deepEqual(compactedHead(compacted), [{ role: 'assistant', content: [compaction] }]);
    assert.deepEqual(compactedHead([{ role: 'user', content: 'Hello' }]), []);
  });
});
