// The conversation's memory, without Temporal: turns, transcript, what a model call must carry, approvals.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { withDefaults } from '../workflows/api';
import { ConversationState } from '../workflows/conversation-state';

const usage = { inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 2, cacheCreationInputTokens: 1 };
const fresh = (firstMessage?: string) => new ConversationState({ options: withDefaults({ tools: ['get_weather'] }), ...(firstMessage && { firstMessage }) });

describe('turns', () => {
  test('a first message is queued as turn 1 and enters the transcript when its turn begins', () => {
    const state = fresh('Hello');
    assert.equal(state.status, 'running');
    assert.equal(state.transcript.length, 0);
    state.beginTurn();
    assert.deepEqual(state.transcript, [{ role: 'user', content: 'Hello' }]);
  });

  test('a model call carries only the messages added since the last reply', () => {
    const state = fresh('Hello');
    state.beginTurn();
    assert.equal(state.newMessages().length, 1);
    state.appendReply({ role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'get_weather', input: {} }] }, 'msg_1');
    assert.equal(state.newMessages().length, 0);
    state.appendResults({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'sunny' }] });
    assert.deepEqual(state.newMessages().map((m) => m.role), ['user']);
  });

  test('usage adds up per turn and per conversation', () => {
    const state = fresh('Hello');
    state.beginTurn();
    state.recordModelCall(usage);
    state.recordModelCall(usage);
    const result = state.finishTurn('Hi!', 'end_turn', 'awaiting_user');
    assert.deepEqual(result.usage, { inputTokens: 20, outputTokens: 10, cacheReadInputTokens: 4, cacheCreationInputTokens: 2 });
    assert.equal(result.modelCalls, 2);
    assert.deepEqual(state.outcomeOf(1), { kind: 'reply', result });
  });

  test('a turn not yet answered has no outcome; one the run hands over says so', () => {
    const state = fresh('Hello');
    state.beginTurn();
    assert.equal(state.outcomeOf(1), undefined);
    state.movingOn = true;
    assert.deepEqual(state.outcomeOf(1), { kind: 'continued', turn: 1 });
  });

  test('a failure answers every waiting turn with its type and message', () => {
    const state = fresh('Hello');
    state.enqueue('And another');
    state.beginTurn();
    state.failTurn('ModelInvalidRequest', '400 invalid_request_error: bad');
    assert.deepEqual(state.outcomeOf(2), { turn: 2, type: 'ModelInvalidRequest', message: '400 invalid_request_error: bad' });
    assert.equal(state.status, 'failed');
  });
});

describe('messages the conversation refuses', () => {
  test('empty, oversized, not a string, or sent after the end', () => {
    const state = fresh();
    assert.throws(() => state.validateMessage('   '), /empty/);
    assert.throws(() => state.validateMessage('x'.repeat(200_001)), /limit/);
    assert.throws(() => state.validateMessage(42), /string/);
    state.status = 'completed';
    assert.throws(() => state.validateMessage('hi'), /ended \(completed\)/);
  });
});

describe('approvals', () => {
  test('an approval must name the pending call and its exact arguments', () => {
    const state = fresh('Buy');
    state.beginTurn();
    state.requestApproval({ callId: 'c1', tool: 'buy_stock', input: { symbol: 'GM', quantity: 1 }, argumentsDigest: 'abc', requestedAt: 'now' });
    assert.equal(state.status, 'awaiting_approval');
    assert.throws(() => state.validateDecision({ callId: 'c2', argumentsDigest: 'abc', approve: true }), /No tool call c2/);
    assert.throws(() => state.validateDecision({ callId: 'c1', argumentsDigest: 'zzz', approve: true }), /digest mismatch/);
    state.validateDecision({ callId: 'c1', argumentsDigest: 'abc', approve: true });
    state.decide({ callId: 'c1', argumentsDigest: 'abc', approve: true });
    assert.throws(() => state.validateDecision({ callId: 'c1', argumentsDigest: 'abc', approve: true }), /No tool call c1 is waiting/);
    state.settleApproval('c1');
    assert.equal(state.status, 'running');
  });
});

describe('continue-as-new', () => {
  test('a carried state resumes the same conversation, the in-flight turn included', () => {
    const state = fresh('Hello');
    state.enqueue('Next');
    state.beginTurn();
    state.recordModelCall(usage);
    state.appendReply({ role: 'assistant', content: 'thinking' }, 'msg_1');
    const next = new ConversationState({ options: state.options, carried: state.carry() });
    assert.equal(next.runs, 2);
    assert.deepEqual(next.transcript, state.transcript);
    assert.equal(next.active?.turn, 1);
    assert.equal(next.hasPendingMessage, true);
    assert.equal(next.sentUpTo, next.transcript.length, 'a new run re-reads the transcript once');
    assert.equal(next.modelCalls, 1);
  });
});

describe('limits', () => {
  test('a transcript over its size limit is flagged, also when carried into a new run', () => {
    const options = withDefaults({ limits: { maxTranscriptChars: 1000 } });
    const state = new ConversationState({ options, firstMessage: 'x'.repeat(600) });
    state.beginTurn();
    assert.equal(state.transcriptTooLarge, false);
    state.appendReply({ role: 'assistant', content: 'y'.repeat(600) }, 'msg_1');
    assert.equal(state.transcriptTooLarge, true);
    assert.equal(new ConversationState({ options, carried: state.carry() }).transcriptTooLarge, true);
  });
});
