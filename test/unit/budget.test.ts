// The budget decision before each model call: spent plus the next call's estimate against each limit, per turn and
// per conversation, in tokens and in USD; a USD limit with an unknown cost stops rather than guesses.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { billedTokens, checkBudget, estimateCallUsd, spentWith, type BudgetOptions } from '../../common/budget';
import { withDefaults } from '../../common/options';
import { PRICES } from '../support/test-prices';

const spent = (turnTokens: number, conversationTokens: number, turnUsd: number | null = 0, usd: number | null = 0) => ({
  turn: { tokens: turnTokens, usd: turnUsd },
  conversation: { tokens: conversationTokens, usd },
});
const next = (promptTokens: number, outputTokens: number, usd: number | null = 0) => ({
  promptTokens,
  outputTokens,
  usd,
});
const budget = (value: Omit<NonNullable<BudgetOptions>, 'estimate'>): BudgetOptions => ({
  estimate: 'last-call',
  ...value,
});

describe('tokens', () => {
  test('a call that fits is made; one that would go over is not, and the message says spent, next and limit', () => {
    const b = budget({ perTurn: { tokens: 3_000 } });
    assert.deepEqual(checkBudget(b, spent(1_000, 1_000), next(1_500, 400), 'm'), { ok: true });
    const verdict = checkBudget(b, spent(2_200, 2_200), next(1_100, 100), 'm');
    assert.equal(verdict.ok, false);
    assert.ok(!verdict.ok && verdict.scope === 'turn');
    assert.match(
      !verdict.ok ? verdict.message : '',
      /this turn has used 2200 tokens .* about 1200 more, over its limit of 3000 tokens/,
    );
  });

  test('the conversation limit counts every turn; a new turn starts its own count', () => {
    const b = budget({ perTurn: { tokens: 3_000 }, perConversation: { tokens: 5_000 } });
    assert.deepEqual(checkBudget(b, spent(0, 3_500), next(1_000, 100), 'm'), { ok: true });
    const verdict = checkBudget(b, spent(0, 4_500), next(1_000, 100), 'm');
    assert.ok(!verdict.ok && verdict.scope === 'conversation');
    assert.match(!verdict.ok ? verdict.message : '', /the conversation has used 4500 tokens/);
  });

  test('no budget, no check', () => {
    assert.deepEqual(checkBudget(undefined, spent(1e9, 1e9), next(1e9, 1e9), 'm'), { ok: true });
  });

  test('billed tokens are input, cache writes, cache reads and output', () => {
    assert.equal(
      billedTokens({ inputTokens: 1, cacheCreationInputTokens: 20, cacheReadInputTokens: 300, outputTokens: 4_000 }),
      4_321,
    );
  });
});

describe('USD', () => {
  test('spent plus the estimated cost against the limit', () => {
    const b = budget({ perConversation: { usd: 0.01 } });
    assert.deepEqual(checkBudget(b, spent(0, 0, 0, 0.005), next(0, 0, 0.004), 'm'), { ok: true });
    const verdict = checkBudget(b, spent(0, 0, 0, 0.008), next(0, 0, 0.004), 'm');
    assert.match(
      !verdict.ok ? verdict.message : '',
      /has spent \$0\.0080 .* about \$0\.0040 more, over its limit of \$0\.0100/,
    );
  });

  test('an unknown cost cannot be kept under a USD limit: the call is not made', () => {
    const b = budget({ perTurn: { usd: 1 } });
    const verdict = checkBudget(b, spent(0, 0, 0, 0), next(10, 10, null), 'my-own-model');
    assert.ok(!verdict.ok);
    assert.match(!verdict.ok ? verdict.message : '', /cost of my-own-model is unknown/);
  });

  test('the estimate reads what the last prompt held from the cache and writes the rest', () => {
    const cached = estimateCallUsd(PRICES, { promptTokens: 10_000, outputTokens: 200 }, 9_000, true)!;
    assert.ok(Math.abs(cached - (9_000 * 0.3 + 1_000 * 3.75 + 200 * 15) / 1e6) < 1e-12);
    const uncached = estimateCallUsd(PRICES, { promptTokens: 10_000, outputTokens: 200 }, 9_000, false)!;
    assert.ok(Math.abs(uncached - (10_000 * 3 + 200 * 15) / 1e6) < 1e-12);
    assert.equal(estimateCallUsd(null, { promptTokens: 1, outputTokens: 1 }, 0, true), null);
  });
});

describe('requests other than the next model call', () => {
  test('a worst case is said as such, with what the request is', () => {
    const b = budget({ perTurn: { tokens: 8_000 } });
    const rung = { ...next(500, 16_384), what: 'a retry with max_tokens 16384', worstCase: true };
    const verdict = checkBudget(b, spent(6_120, 6_120), rung, 'm');
    assert.match(
      !verdict.ok ? verdict.message : '',
      /used 6120 tokens and a retry with max_tokens 16384 would take up to 16884 more, over its limit of 8000/,
    );
  });

  test('with nothing to add (count_tokens is free), only a budget already passed refuses', () => {
    const b = budget({ perTurn: { tokens: 1_500, usd: 0.01 } });
    assert.deepEqual(checkBudget(b, spent(1_500, 1_500, 0.01, 0.01), next(0, 0, 0), 'm'), { ok: true });
    const verdict = checkBudget(b, spent(2_100, 2_100), next(0, 0, 0), 'm');
    assert.equal(
      !verdict.ok && verdict.message,
      'Budget exhausted: this turn has used 2100 tokens, over its limit of 1500 tokens.',
    );
  });

  test("what a call's failed attempts billed is added to both scopes, priced", () => {
    const usage = { inputTokens: 1_000, outputTokens: 100, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 };
    const after = spentWith(spent(100, 500, 0.001, 0.002), usage, PRICES);
    assert.equal(after.turn.tokens, 1_200);
    assert.equal(after.conversation.tokens, 1_600);
    assert.ok(Math.abs(after.turn.usd! - (0.001 + 0.0045)) < 1e-12);
    assert.equal(spentWith(spent(0, 0), usage, null).turn.usd, null, 'no prices: the cost becomes unknown');
  });
});

describe('the option', () => {
  test('is validated: a limit needs tokens or usd, positive; the estimate is last-call unless count-tokens', () => {
    assert.equal(withDefaults({ budget: { perTurn: { tokens: 10 } } }).budget?.estimate, 'last-call');
    assert.throws(() => withDefaults({ budget: { perTurn: {} } }), /budget\.perTurn: set tokens, usd or both/);
    assert.throws(() => withDefaults({ budget: { perConversation: { usd: -1 } } }), /budget\.perConversation\.usd/);
    assert.throws(() => withDefaults({ budget: { estimate: 'guess' as never } }), /budget\.estimate/);
    assert.equal(withDefaults({}).budget, undefined);
  });
});
