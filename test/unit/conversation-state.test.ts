// The conversation's memory, without Temporal: turns, transcript, what a model call must carry, approvals, and
// what a run hands to the next.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { withDefaults } from '../../common/options';
import { isWellFormed } from '../../common/safe-text';
import { ConversationState, KEPT_OUTCOMES, MAX_PENDING_MESSAGES } from '../../workflows/conversation-state';
import { MAX_REJECTION_CHARS } from '../../workflows/rejection';
import type { ConversationInput } from '../../common/conversation-input';
import { PRICES } from '../support/test-prices';

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
    state.appendReply({
      message: { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'get_weather', input: {} }] },
      replyId: 'msg_1',
    });
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
    const result = state.finishTurn({ text: 'Hi!', stopReason: 'end_turn', status: 'awaiting_user' });
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
    state.appendReply({ message: { role: 'assistant', content: 'Hi' }, replyId: 'msg_1' });
    state.finishTurn({ text: 'Hi', stopReason: 'end_turn', status: 'awaiting_user' });
    state.enqueue('Use a tool');
    state.beginTurn();
    state.appendReply({
      message: { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'get_weather', input: {} }] },
      replyId: 'msg_2',
    });
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
      state.finishTurn({ text: `answer ${turn}`, stopReason: 'end_turn', status: 'awaiting_user' });
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
    state.appendReply({ message: { role: 'assistant', content: 'thinking' }, replyId: 'msg_1' });
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
    state.appendReply({ message: { role: 'assistant', content: '字'.repeat(5_000) }, replyId: 'msg_1' });
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

describe('what only the named methods change', () => {
  const reply = (text: string) => ({ role: 'assistant' as const, content: text });

  test('fields the workflow reads cannot be written from outside: the assignment is refused, the value stays', () => {
    const state = fresh('Hello');
    const attempts: Array<() => void> = [
      // @ts-expect-error prices change only through setPrices
      () => (state.prices = PRICES),
      // @ts-expect-error the context changes only through recordCallContext and recordCompaction
      () => (state.context = { ...state.context, inputTokens: 1 }),
      // @ts-expect-error the anchor changes only through recordThreadUse and takeThreadContinuation
      () => (state.thread = { id: 'msg_x', fingerprint: 'f' }),
      // @ts-expect-error threads end only through recordThreadUse
      () => (state.threadsUnsupported = true),
      // @ts-expect-error counted only by recordModelCall
      () => (state.modelCalls = 7),
      // @ts-expect-error the patch markers come with the constructor
      () => (state.keepUncut = () => true),
      // @ts-expect-error the patch markers come with the constructor
      () => (state.closesServerToolCalls = () => false),
    ];
    for (const attempt of attempts) {
      try {
        attempt();
      } catch {
        // strict mode throws on a getter without a setter; either way nothing may change
      }
    }
    assert.equal(state.prices, null);
    assert.equal(state.context.inputTokens, 0);
    assert.equal(state.thread, undefined);
    assert.equal(state.threadsUnsupported, false);
    assert.equal(state.modelCalls, 0);
    assert.equal(state.keepUncut(), false);
    assert.equal(state.closesServerToolCalls(), true);
  });

  test('setPrices: calls are costed at the prices set, unknown (null) before', () => {
    const unpriced = fresh('Hello');
    unpriced.beginTurn();
    unpriced.recordModelCall(usage);
    assert.equal(unpriced.costUsd, null);
    const state = fresh('Hello');
    state.setPrices(PRICES);
    assert.equal(state.prices, PRICES);
    state.beginTurn();
    assert.ok(state.recordModelCall(usage)! > 0);
    assert.equal(state.costUsd, state.spent().conversation.usd);
  });

  test('setFallbackPrices and hasFallbackPrices: a fallback model is priced at its own prices, once resolved', () => {
    const state = fresh('Hello');
    const opus = { ...PRICES, input: 15 };
    assert.equal(state.hasFallbackPrices('claude-opus-5-5'), false);
    state.setFallbackPrices('claude-opus-5-5', opus);
    state.setFallbackPrices('unpriced-model', null);
    assert.equal(state.hasFallbackPrices('claude-opus-5-5'), true);
    assert.equal(state.hasFallbackPrices('unpriced-model'), true, 'an unknown price is resolved too');
    assert.equal(state.pricesOf('claude-opus-5-5'), opus);
    assert.equal(state.pricesOf('unpriced-model'), null);
  });

  test('recordCallContext and recordCompaction: the context accounting the snapshot shows', () => {
    const state = fresh('Hello');
    state.recordCallContext(
      { inputTokens: 500, inputTokensBefore: 900, clearedToolUses: 2, clearedInputTokens: 400 },
      20,
    );
    state.recordCompaction({ afterCall: 3, by: 'api', inputTokensBefore: 1_000, messages: 4, summary: 'short' });
    const { context } = state.snapshot();
    assert.equal(context.inputTokens, 500);
    assert.equal(context.outputTokens, 20);
    assert.equal(context.clearedToolUses, 2);
    assert.equal(context.peakInputTokens, 1_000);
    assert.equal(context.compactions, 1);
    assert.equal(context.lastCompaction?.summary, 'short');
    assert.deepEqual(state.toCarriedState().context, context);
  });

  test('setContainer: the container goes back with each call until it expires, and to the next run', () => {
    const state = fresh('Hello');
    assert.equal(state.liveContainer(), undefined);
    state.setContainer({ id: 'container_1', expiresAt: new Date(Date.now() + 60_000).toISOString() });
    assert.equal(state.liveContainer(), 'container_1');
    assert.equal(state.toCarriedState().container?.id, 'container_1');
    state.setContainer({ id: 'container_2', expiresAt: new Date(Date.now() - 1).toISOString() });
    assert.equal(state.liveContainer(), undefined, 'expired');
  });

  test('recordThreadUse: a reply leaves an anchor; one that went unthreaded leaves none and ends threads', () => {
    const state = fresh('Hello');
    state.beginTurn();
    state.recordThreadUse({ id: 'msg_1', stop_reason: 'end_turn', thread: { mode: 'created', fingerprint: 'f' } });
    assert.deepEqual(state.thread, { id: 'msg_1', fingerprint: 'f' });
    assert.equal(state.threadsUnsupported, false);
    state.recordThreadUse({ id: 'msg_2', stop_reason: 'end_turn', thread: { mode: 'unthreaded' } });
    assert.equal(state.thread, undefined);
    assert.equal(state.threadsUnsupported, true);
  });

  test('takeThreadContinuation: the first call of a step continues from the last reply, once', () => {
    const state = fresh('Hello');
    state.beginTurn();
    state.recordThreadUse({ id: 'msg_1', stop_reason: 'tool_use', thread: { mode: 'created', fingerprint: 'f' } });
    state.appendReply({ message: reply('Looking.'), replyId: 'msg_1' });
    state.appendResults({ role: 'user', content: 'results' });
    assert.equal(state.takeThreadContinuation({ firstOfStep: false, joinsPausedTurn: false }), undefined, 'a rung');
    assert.deepEqual(state.thread?.id, 'msg_1', 'a call that may not continue leaves the anchor');
    assert.deepEqual(state.takeThreadContinuation({ firstOfStep: true, joinsPausedTurn: false }), {
      id: 'msg_1',
      fingerprint: 'f',
      from: 2,
    });
    assert.equal(state.thread, undefined, 'a reply is continued once');
    assert.equal(state.takeThreadContinuation({ firstOfStep: true, joinsPausedTurn: false }), undefined);
  });

  test('the patch markers: by default texts are cut and open server tool calls close; a replayed run says otherwise', () => {
    const long = { role: 'user' as const, content: [{ type: 'text' as const, text: 'x'.repeat(300_000) }] };
    const cut = fresh('Hello');
    cut.appendResults(long);
    assert.ok(JSON.stringify(cut.transcript).length < 300_000);
    assert.equal(cut.closesServerToolCalls(), true);
    const uncut = new ConversationState({ options: withDefaults({}), firstMessage: 'Hello' }, RUN_ID, {
      keepUncut: () => true,
      closesServerToolCalls: () => false,
    });
    uncut.appendResults(long);
    assert.deepEqual(uncut.transcript.at(-1), long);
    assert.equal(uncut.closesServerToolCalls(), false);
  });

  test('finishTurn: no stop reason unless given, and the typed answer when there is one', () => {
    const state = fresh('Hello');
    state.beginTurn();
    const stopped = state.finishTurn({ text: 'Stopped.', status: 'limit_reached' });
    assert.equal(stopped.stopReason, null);
    assert.equal('output' in stopped, false);
    assert.equal(state.status, 'limit_reached');
    const typed = fresh('Hello');
    typed.beginTurn();
    const answered = typed.finishTurn({
      text: 'null',
      stopReason: 'end_turn',
      status: 'awaiting_user',
      answer: { output: null },
    });
    assert.equal(answered.stopReason, 'end_turn');
    assert.equal('output' in answered && answered.output, null, 'a null answer is an answer');
  });

  test('appendReply: a reply joins the paused turn only when it says so', () => {
    const state = fresh('Hello');
    state.beginTurn();
    state.appendReply({ message: reply('Searching'), replyId: 'msg_1', stopReason: 'pause_turn' });
    state.appendReply({ message: reply('Found.'), replyId: 'msg_2', joinsPausedTurn: true });
    assert.equal(state.transcript.length, 2);
    assert.deepEqual(state.transcript[1], {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Searching' },
        { type: 'text', text: 'Found.' },
      ],
    });
    assert.equal(state.lastReplyId, 'msg_2');
    state.appendReply({ message: reply('More.'), replyId: 'msg_3' });
    assert.equal(state.transcript.length, 3, 'follows it, unless told to join');
  });

  test('recordAnswerAttempt: counts the attempts; forceAnswer holds only until an attempt without it', () => {
    const state = stateOf({
      options: withDefaults({ output: { schema: { type: 'object' }, mode: 'tool' } }),
      firstMessage: 'Hello',
    });
    state.beginTurn();
    assert.equal(state.recordAnswerAttempt({ forceAnswer: true }), 1);
    assert.equal(state.currentTurn?.forceAnswer, true);
    assert.equal(state.recordAnswerAttempt({ forceAnswer: false }), 2);
    assert.equal(state.currentTurn?.forceAnswer, undefined);
  });

  test("stopAtToolCallLimit: counts the turn's calls so far; past the limit the turn ends limit_reached", () => {
    const state = stateOf({ options: withDefaults({ limits: { maxToolCallsPerTurn: 3 } }), firstMessage: 'Hello' });
    state.beginTurn();
    state.recordToolCalls(2);
    assert.equal(state.wouldPassToolCallLimit(1), false);
    assert.equal(state.stopAtToolCallLimit(1, 'tool_use'), false, 'at the limit: the calls run');
    assert.equal(state.status, 'running');
    assert.equal(state.stopAtToolCallLimit(2, 'tool_use'), true);
    assert.equal(state.status, 'limit_reached');
    const outcome = state.lastOutcome;
    assert.equal(
      outcome?.kind === 'reply' && outcome.result.text,
      'Stopped: the model asked for more than 3 tool calls in one turn.',
    );
  });
});
