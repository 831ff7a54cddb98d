// Cost and budget endings in the conversation's memory, without Temporal: cost per turn and per conversation, carried
// across continue-as-new, unknown without prices; a budget-stopped turn keeps its tool results.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { withDefaults } from '../../common/options';
import { ConversationState } from '../../workflows/conversation-state';
import { PRICES } from '../support/test-prices';

const usage = { inputTokens: 1_000, outputTokens: 100, cacheReadInputTokens: 10_000, cacheCreationInputTokens: 2_000 };
const CALL_USD = (1_000 * 3 + 100 * 15 + 10_000 * 0.3 + 2_000 * 3.75) / 1e6;
const near = (a: number | null, b: number) => assert.ok(a !== null && Math.abs(a - b) < 1e-12, `${a} ≠ ${b}`);

function priced(prices = PRICES, closeAfterFirstReply = false) {
  const state = new ConversationState(
    { options: withDefaults({ tools: ['get_weather'], closeAfterFirstReply }), firstMessage: 'Weather?' },
    'run-1',
  );
  state.setPrices(prices);
  return state;
}

function toolRound(state: ConversationState, n: number) {
  state.recordModelCall(usage);
  state.appendReply({
    message: { role: 'assistant', content: [{ type: 'tool_use', id: `t${n}`, name: 'get_weather', input: {} }] },
    replyId: `msg_${n}`,
  });
  state.appendResults({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${n}`, content: 'sunny' }] });
  state.recordToolCalls(1);
}

describe('cost', () => {
  test('each call is priced; the turn and the conversation add up, and the result and state say so', () => {
    const state = priced();
    state.beginTurn();
    toolRound(state, 1);
    state.recordModelCall(usage);
    const result = state.finishTurn({ text: 'Sunny.', stopReason: 'end_turn', status: 'awaiting_user' });
    near(result.costUsd, 2 * CALL_USD);
    near(state.snapshot().costUsd, 2 * CALL_USD);
    near(state.result().costUsd, 2 * CALL_USD);
  });

  test('without prices the cost is unknown (null), not 0', () => {
    const state = new ConversationState({ options: withDefaults({}), firstMessage: 'Hi' }, 'run-1');
    state.beginTurn();
    state.recordModelCall(usage);
    assert.equal(state.finishTurn({ text: 'Hi.', stopReason: 'end_turn', status: 'awaiting_user' }).costUsd, null);
    assert.equal(state.snapshot().costUsd, null);
  });

  test('the cost is carried to the next run, mid turn too', () => {
    const state = priced();
    state.beginTurn();
    toolRound(state, 1);
    const next = new ConversationState({ options: state.options, carried: state.toCarriedState() }, 'run-2');
    next.setPrices(PRICES);
    assert.deepEqual(next.lastCallUsage, usage, 'the next run estimates its first call from the last one');
    next.recordModelCall(usage);
    near(next.snapshot().costUsd, 2 * CALL_USD);
    near(next.finishTurn({ text: 'Sunny.', stopReason: 'end_turn', status: 'awaiting_user' }).costUsd, 2 * CALL_USD);
  });
});

describe('a budget-stopped turn', () => {
  test('a turn budget ends the turn with budget_exhausted and leaves the conversation open', () => {
    const state = priced();
    state.beginTurn();
    toolRound(state, 1);
    const result = state.finishTurnOverBudget('Budget exhausted: …', 'turn');
    assert.equal(result.status, 'budget_exhausted');
    assert.equal(state.status, 'awaiting_user');
    assert.equal(state.transcript.at(-1)!.role, 'user', 'the tool results are kept');
  });

  test('a conversation budget ends the conversation; so does a turn budget of a one-shot question', () => {
    const state = priced();
    state.beginTurn();
    state.finishTurnOverBudget('Budget exhausted: …', 'conversation');
    assert.equal(state.status, 'budget_exhausted');
    assert.equal(state.isOpen, false);
    const oneShot = priced(PRICES, true);
    oneShot.beginTurn();
    oneShot.finishTurnOverBudget('Budget exhausted: …', 'turn');
    assert.equal(oneShot.status, 'budget_exhausted');
  });

  test('the next message joins the kept tool results; if that turn fails they are put back', () => {
    const state = priced();
    state.beginTurn();
    toolRound(state, 1);
    state.finishTurnOverBudget('Budget exhausted: …', 'turn');
    state.enqueue('Go on.');
    state.beginTurn();
    const joined = state.transcript.at(-1)!;
    assert.deepEqual(
      (joined.content as { type: string }[]).map((b) => b.type),
      ['tool_result', 'text'],
    );
    state.failTurn({ type: 'ModelAuthentication', message: 'bad key' });
    assert.deepEqual(
      (state.transcript.at(-1)!.content as { type: string }[]).map((b) => b.type),
      ['tool_result'],
      'the tool call before them still has its result',
    );
  });
});
