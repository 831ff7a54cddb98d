// The conversation's memory once its context was compacted: the transcript, what the next model call carries and
// what the next run is handed shrink; a turn that fails afterwards keeps the compaction; the accounting is carried.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { afterCompaction } from '../../common/compaction';
import { withDefaults } from '../../common/options';
import { summaryMessage } from '../../common/orchestrator-summary';
import { ConversationState } from '../../workflows/conversation-state';

const BIG = 'x'.repeat(20_000);
const compaction = { type: 'compaction', content: 'The user wants the weather; Paris is sunny.', signature: 's' };

function chainState(steps: number): ConversationState {
  const state = new ConversationState(
    { options: withDefaults({ tools: ['get_weather'] }), firstMessage: 'Weather in Paris, please.' },
    'run-1',
  );
  state.beginTurn();
  for (let i = 0; i < steps; i++) {
    state.appendReply({
      message: { role: 'assistant', content: [{ type: 'tool_use', id: `t${i}`, name: 'get_weather', input: {} }] },
      replyId: `msg_${i}`,
    });
    state.appendResults({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: BIG }] });
  }
  return state;
}

/** What the workflow does when a reply opens with the API's compaction block. */
function appendCompactedReply(state: ConversationState, id: string): void {
  const reply = {
    role: 'assistant',
    content: [compaction, { type: 'tool_use', id: `c-${id}`, name: 'get_weather', input: {} }],
  } as unknown as MessageParam;
  state.appendReply({ message: reply, replyId: id });
  state.compactHead(state.transcript.length - 1, []);
}

describe('after the API compacted the context', () => {
  test('the transcript, the next call and the next run start at the compacted reply', () => {
    const state = chainState(10);
    const before = state.carriedBytes();
    appendCompactedReply(state, 'msg_c');
    assert.equal(state.transcript.length, 1);
    assert.deepEqual(state.transcript, afterCompaction(state.transcript));
    assert.ok(state.carriedBytes() < before / 10, `${state.carriedBytes()} bytes carried, from ${before}`);
    assert.deepEqual(state.newMessages(), [], 'the worker remembered the compacted reply');
    state.appendResults({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c-msg_c', content: 'sunny' }] });
    assert.equal(state.newMessages().length, 1);

    const carried = state.toCarriedState();
    assert.equal(carried.transcript.length, 2);
    assert.equal((carried.transcript[0]!.content as Array<{ type: string }>)[0]!.type, 'compaction');
    const next = new ConversationState({ options: state.options, carried }, 'run-2');
    assert.equal(next.currentTurn?.transcriptStart, 0);
    assert.equal(next.sentUpTo, 2, 'the next run reads the compacted transcript once, by query');
  });

  test('a turn that fails after compacting goes back to the compaction block alone, and the next turn follows it', () => {
    const state = chainState(3);
    appendCompactedReply(state, 'msg_c');
    state.appendResults({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c-msg_c', content: 'sunny' }] });
    state.failTurn({ type: 'ModelAuthentication', message: 'The key was revoked.' });
    assert.deepEqual(state.transcript, [{ role: 'assistant', content: [compaction] }]);
    assert.equal(state.sentUpTo, 0, 'the next call carries the transcript whole (it is one message)');
    state.enqueue('Try again?');
    state.beginTurn();
    assert.deepEqual(
      state.transcript.map((m) => m.role),
      ['assistant', 'user'],
    );
  });
});

describe("after the orchestrator's own summary", () => {
  test('the summary replaces the older messages; the latest reply and its results stay, and the cache position follows', () => {
    const state = chainState(6);
    const cut = state.transcript.length - 2; // the last reply
    state.compactHead(cut, [summaryMessage('Paris: sunny, six times.')]);
    assert.equal(state.transcript.length, 3);
    assert.deepEqual(
      state.transcript.map((m) => m.role),
      ['user', 'assistant', 'user'],
    );
    assert.equal(state.sentUpTo, 2, 'the worker holds the summary and the last reply');
    assert.equal(state.newMessages().length, 1, 'the results still to be sent');
    assert.equal(state.currentTurn?.transcriptStart, 0);
  });

  test('a turn that fails after it keeps the summary, and the next message joins it', () => {
    const state = chainState(4);
    state.compactHead(state.transcript.length - 2, [summaryMessage('Paris: sunny.')]);
    state.failTurn({ type: 'ModelAuthentication', message: 'The key was revoked.' });
    assert.deepEqual(state.transcript, [summaryMessage('Paris: sunny.')]);
    state.enqueue('And Tokyo?');
    state.beginTurn();
    assert.equal(state.transcript.length, 1, 'one user message: the summary, then the question');
    const blocks = state.transcript[0]!.content as Array<{ type: string; text: string }>;
    assert.equal(blocks.at(-1)!.text, 'And Tokyo?');
    assert.equal(state.sentUpTo, 0);
  });
});

describe('context accounting', () => {
  test('per call before and after, the peak, compactions; carried to the next run and shown in the state', () => {
    const state = chainState(1);
    state.recordCallContext(
      { inputTokens: 60_000, inputTokensBefore: 90_000, clearedToolUses: 4, clearedInputTokens: 30_000 },
      200,
    );
    state.recordCompaction({
      afterCall: 12,
      by: 'api',
      inputTokensBefore: 151_000,
      messages: 24,
      summary: 'y'.repeat(1_000),
    });
    state.recordCallContext(
      { inputTokens: 3_000, inputTokensBefore: 151_000, clearedToolUses: 0, clearedInputTokens: 0 },
      100,
    );
    const { context } = state.snapshot();
    assert.equal(context.inputTokens, 3_000);
    assert.equal(context.inputTokensBefore, 151_000);
    assert.equal(context.peakInputTokens, 151_000);
    assert.equal(context.compactions, 1);
    assert.equal(context.compactedMessages, 24);
    assert.equal(context.clearedToolUses, 4);
    assert.equal(context.lastCompaction?.summary.length, 300, 'the summary is kept short');
    const next = new ConversationState({ options: state.options, carried: state.toCarriedState() }, 'run-2');
    assert.deepEqual(next.snapshot().context, context);
  });
});
