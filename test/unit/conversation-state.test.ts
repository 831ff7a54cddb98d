// The conversation's memory, without Temporal: turns, transcript, what a model call must carry, approvals, and
// what a run hands to the next.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { withDefaults } from '../../common/options';
import { isWellFormed } from '../../common/safe-text';
import {
  ConversationState,
  KEPT_OUTCOMES,
  MAX_PENDING_MESSAGES,
  MAX_REJECTION_CHARS,
} from '../../workflows/conversation-state';
import type { ConversationInput } from '../../common/conversation-input';

const usage = { inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 2, cacheCreationInputTokens: 1 };
const RUN_ID = 'run-1';
const stateOf = (input: ConversationInput) => new ConversationState(input, RUN_ID);
const fresh = (firstMessage?: string) =>
  stateOf({ options: withDefaults({ tools: ['get_weather'] }), ...(firstMessage && { firstMessage }) });

/** Asserts that `fn` throws the one failure validators reject with, with a message matching `pattern`. */
function assertRejected(fn: () => void, pattern: RegExp): void {
  assert.throws(
    fn,
    (err: unknown) => err instanceof ApplicationFailure && err.type === 'Rejected' && pattern.test(err.message),
  );
}

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
    state.appendReply(
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'get_weather', input: {} }] },
      'msg_1',
    );
    assert.equal(state.newMessages().length, 0);
    state.appendResults({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'sunny' }] });
    assert.deepEqual(
      state.newMessages().map((m) => m.role),
      ['user'],
    );
  });

  test('usage adds up per turn and per conversation', () => {
    const state = fresh('Hello');
    state.beginTurn();
    state.recordModelCall(usage);
    state.recordModelCall(usage);
    const result = state.finishTurn('Hi!', 'end_turn', 'awaiting_user');
    assert.deepEqual(result.usage, {
      inputTokens: 20,
      outputTokens: 10,
      cacheReadInputTokens: 4,
      cacheCreationInputTokens: 2,
    });
    assert.equal(result.modelCalls, 2);
    assert.deepEqual(state.outcomeOf(1), { kind: 'reply', result });
  });

  test('a turn not yet answered has no outcome; one the run hands over says so', () => {
    const state = fresh('Hello');
    state.beginTurn();
    assert.equal(state.outcomeOf(1), undefined);
    state.handOver();
    assert.deepEqual(state.outcomeOf(1), { kind: 'continued', turn: 1 });
  });

  test('a failed turn answers its caller, leaves the transcript as it was, and the conversation takes the next message', () => {
    const state = fresh('Hello');
    state.beginTurn();
    state.appendReply({ role: 'assistant', content: 'Hi' }, 'msg_1');
    state.finishTurn('Hi', 'end_turn', 'awaiting_user');
    state.enqueue('Use a tool');
    state.beginTurn();
    state.appendReply(
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'get_weather', input: {} }] },
      'msg_2',
    );
    state.appendResults({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'sunny' }] });
    state.failTurn({ type: 'ModelAuthentication', message: '401 authentication_error: invalid x-api-key' });
    assert.deepEqual(state.outcomeOf(2), {
      kind: 'failed',
      turn: 2,
      failure: { type: 'ModelAuthentication', message: '401 authentication_error: invalid x-api-key' },
    });
    assert.equal(state.status, 'awaiting_user');
    assert.deepEqual(
      state.transcript.map((m) => m.role),
      ['user', 'assistant'],
    );
    // The next call names the last good reply, so a worker cache that saw the failed turn is not used.
    assert.equal(state.lastReplyId, 'msg_1');
    state.validateMessage('Try again');
    state.enqueue('Try again');
    state.beginTurn();
    assert.deepEqual(state.newMessages(), [{ role: 'user', content: 'Try again' }]);
  });

  test('a failure of the whole conversation answers the current turn and every waiting one', () => {
    const state = fresh('Hello');
    state.enqueue('And another');
    state.beginTurn();
    state.failConversation({ type: 'UnknownTools', message: 'Unknown tools: x' });
    assert.deepEqual(state.outcomeOf(1), {
      kind: 'failed',
      turn: 1,
      failure: { type: 'UnknownTools', message: 'Unknown tools: x' },
    });
    assert.deepEqual(state.outcomeOf(2), {
      kind: 'failed',
      turn: 2,
      failure: { type: 'UnknownTools', message: 'Unknown tools: x' },
    });
    assert.equal(state.status, 'failed');
  });
});

describe('messages the conversation refuses', () => {
  test('empty, oversized, not a string, or sent after the end: each with the one rejection type', () => {
    const state = fresh();
    assertRejected(() => state.validateMessage('   '), /empty/);
    assertRejected(() => state.validateMessage('x'.repeat(200_001)), /limit/);
    assertRejected(() => state.validateMessage(42), /string/);
    state.requestEnd();
    assertRejected(() => state.validateMessage('hi'), /ended/);
    const closed = fresh();
    closed.close('completed');
    assertRejected(() => closed.validateMessage('hi'), /ended \(completed\)/);
  });

  test('no more than a bounded number of messages wait for their turn', () => {
    const state = fresh();
    for (let i = 0; i < MAX_PENDING_MESSAGES; i++) state.enqueue(`message ${i}`);
    assertRejected(() => state.validateMessage('one more'), /already waiting/);
  });

  test('a message that would make the carried state too large is refused, counted in UTF-8 bytes', () => {
    const state = stateOf({ options: withDefaults({ limits: { maxCarriedBytes: 100_000 } }) });
    // 30,000 CJK characters are 30,000 UTF-16 units but 90,000 bytes.
    state.validateMessage('字'.repeat(20_000));
    assertRejected(() => state.validateMessage('字'.repeat(33_000)), /bytes, over its limit of 100000/);
  });
});

describe('awaiting a turn', () => {
  test('an unknown turn and a turn whose outcome is no longer kept are refused at once', () => {
    const state = fresh();
    assertRejected(() => state.validateAwaitTurn(1), /no turn 1/);
    assertRejected(() => state.validateAwaitTurn('1'), /A turn is a whole number from 1 on/);
    for (let turn = 1; turn <= KEPT_OUTCOMES + 1; turn++) {
      state.enqueue(`message ${turn}`);
      state.beginTurn();
      state.finishTurn(`answer ${turn}`, 'end_turn', 'awaiting_user');
    }
    assertRejected(() => state.validateAwaitTurn(1), /no longer kept/);
    state.validateAwaitTurn(2);
    state.enqueue('still waiting');
    state.validateAwaitTurn(KEPT_OUTCOMES + 2);
  });
});

describe('approvals', () => {
  const approvalPending = () => {
    const state = fresh('Buy');
    state.beginTurn();
    state.requestApproval({
      callId: 'c1',
      tool: 'buy_stock',
      input: { symbol: 'GM', quantity: 1 },
      argumentsDigest: 'abc',
      requestedAt: 'now',
    });
    return state;
  };

  test('an approval must name the pending call and its exact arguments', () => {
    const state = approvalPending();
    assert.equal(state.status, 'awaiting_approval');
    assertRejected(
      () => state.validateDecision({ callId: 'c2', argumentsDigest: 'abc', approve: true }),
      /No tool call c2/,
    );
    assertRejected(
      () => state.validateDecision({ callId: 'c1', argumentsDigest: 'zzz', approve: true }),
      /digest mismatch/,
    );
    state.validateDecision({ callId: 'c1', argumentsDigest: 'abc', approve: true });
    state.decide({ callId: 'c1', argumentsDigest: 'abc', approve: true });
    assertRejected(
      () => state.validateDecision({ callId: 'c1', argumentsDigest: 'abc', approve: true }),
      /No tool call c1 is waiting/,
    );
    state.settleApproval('c1');
    assert.equal(state.status, 'running');
  });

  test('a decision whose approve is not a boolean is refused: "false" never approves', () => {
    const state = approvalPending();
    for (const approve of ['false', 'true', 1, 0, null, undefined, {}]) {
      assertRejected(() => state.validateDecision({ callId: 'c1', argumentsDigest: 'abc', approve }), /approve/);
    }
    assertRejected(() => state.validateDecision(null), /Invalid approval decision/);
    assertRejected(
      () => state.validateDecision({ callId: 'c1', argumentsDigest: 'abc', approve: true, extra: 1 }),
      /extra/,
    );
    assert.equal(state.decisionOf('c1'), undefined);
  });

  test('a refusal never carries what was sent back whole: unknown keys with lone surrogates or 1 MiB are cut and made well-formed', () => {
    const state = approvalPending();
    for (const key of ['k\ud800', 'k'.repeat(2 ** 20)]) {
      assert.throws(
        () => state.validateDecision({ callId: 'c1', argumentsDigest: 'abc', approve: true, [key]: 1 }),
        (err: unknown) =>
          err instanceof ApplicationFailure &&
          err.type === 'Rejected' &&
          isWellFormed(err.message) &&
          err.message.length <= MAX_REJECTION_CHARS,
      );
    }
  });
});

describe('continue-as-new', () => {
  test('a carried state resumes the same conversation, the turn in progress included', () => {
    const state = fresh('Hello');
    state.enqueue('Next');
    state.beginTurn();
    state.recordModelCall(usage);
    state.appendReply({ role: 'assistant', content: 'thinking' }, 'msg_1');
    const next = new ConversationState({ options: state.options, carried: state.toCarriedState() }, 'run-2');
    assert.equal(next.runs, 2);
    assert.deepEqual(next.transcript, state.transcript);
    assert.equal(next.currentTurn?.turn, 1);
    assert.equal(next.hasPendingMessage, true);
    assert.equal(next.sentUpTo, next.transcript.length, 'a new run re-reads the transcript once');
    assert.equal(next.modelCalls, 1);
    assert.equal(next.firstRunId, RUN_ID, 'idempotency keys keep the first run id');
  });

  test('end() asked for before continue-as-new still holds in the next run', () => {
    const state = fresh('Hello');
    state.requestEnd();
    const next = new ConversationState({ options: state.options, carried: state.toCarriedState() }, 'run-2');
    assert.equal(next.endRequested, true);
    assertRejected(() => next.validateMessage('more'), /ended/);
  });
});

describe('limits', () => {
  test('a conversation too large to carry is flagged, in UTF-8 bytes, also when carried into a new run', () => {
    const options = withDefaults({ limits: { maxCarriedBytes: 20_000 } });
    const state = stateOf({ options, firstMessage: 'x'.repeat(3_000) });
    state.beginTurn();
    assert.equal(state.tooLargeToCarry, false);
    // 5,000 characters of CJK text: 15,000 bytes, which the character count would have missed.
    state.appendReply({ role: 'assistant', content: '字'.repeat(5_000) }, 'msg_1');
    assert.equal(state.tooLargeToCarry, true);
    assert.ok(state.carriedBytes() >= 18_000);
    assert.equal(new ConversationState({ options, carried: state.toCarriedState() }, 'run-2').tooLargeToCarry, true);
  });

  test('what is carried counts the system prompt and queued messages too', () => {
    const options = withDefaults({ system: 'é'.repeat(5_000), limits: { maxCarriedBytes: 20_000 } });
    const state = stateOf({ options });
    const before = state.carriedBytes();
    assert.ok(before > 10_000, `the 10,000-byte system prompt is counted (${before})`);
    state.enqueue('ü'.repeat(2_000));
    assert.ok(state.carriedBytes() >= before + 4_000);
  });
});
