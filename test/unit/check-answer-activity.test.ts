// The typed answer's check as the worker runs it (a local activity): the verdict it records, bounded in work the same
// on every machine, and an attempt that runs out of time on a starved worker, which is no verdict at all.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { ANSWER_CHECK_TIMED_OUT, createCheckAnswerActivity } from '../../activities/check-answer-activity';
import {
  ANSWER_CHECK_ACTIVITY_BUDGET,
  ANSWER_CHECK_BUDGET,
  checkAnswer,
  checkTextAnswer,
} from '../../common/structured-output';
import { TAGGED_UNION_SCHEMA as TAGGED, taggedItems as tagged } from '../support/tagged-union-schema';

// Verdicts, not time: an hour's limit, so a busy test machine cannot turn a check into a timed-out attempt.
const { checkTypedAnswer } = createCheckAnswerActivity(3_600_000);

const QUOTE = {
  type: 'object',
  properties: { symbol: { type: 'string' }, currency: { default: 'USD' } },
  required: ['symbol'],
};

describe('the verdict the history records', () => {
  test('an answer the check leaves as it is: accepted without its value (the reply in the history has it)', async () => {
    assert.deepEqual(await checkTypedAnswer({ schema: QUOTE, answer: { value: { symbol: 'GM', currency: 'EUR' } } }), {
      ok: true,
    });
    assert.deepEqual(
      await checkTypedAnswer({ schema: QUOTE, answer: { text: '{ "symbol": "GM", "currency": "EUR" }' } }),
      {
        ok: true,
      },
    );
  });

  test('an answer the check completes (a default): accepted with the completed value', async () => {
    assert.deepEqual(await checkTypedAnswer({ schema: QUOTE, answer: { value: { symbol: 'GM' } } }), {
      ok: true,
      value: { symbol: 'GM', currency: 'USD' },
    });
  });

  test('a wrong answer: the problems, as the check in workflow code tells them', async () => {
    const answer = { text: '{"symbol": 1}' };
    const recorded = await checkTypedAnswer({ schema: QUOTE, answer });
    assert.deepEqual(recorded, checkTextAnswer(QUOTE, answer.text));
    assert.match((recorded as { error: string }).error, /symbol: Invalid input: expected string/);
  });

  test(`a right answer over the workflow's budget (${ANSWER_CHECK_BUDGET}) and under the activity's (${ANSWER_CHECK_ACTIVITY_BUDGET}) is right`, async () => {
    const answer = tagged(20_000, 11); // 500,000 units
    assert.match((checkAnswer(TAGGED, answer) as { error: string }).error, /could not be checked within its budget/);
    assert.deepEqual(await checkTypedAnswer({ schema: TAGGED, answer: { value: answer } }), { ok: true });
  });

  test('an answer over the activity’s budget is wrong, whatever the machine: the budget counts work, not time', async () => {
    const recorded = await checkTypedAnswer({ schema: TAGGED, answer: { value: tagged(40_000, 'none') } });
    assert.deepEqual(recorded, {
      ok: false,
      error: 'the answer could not be checked within its budget; give a simpler, smaller answer',
    });
  });
});

describe('an attempt that runs out of time', () => {
  test('fails, to be tried again, and records no verdict', async () => {
    const starved = createCheckAnswerActivity(0);
    const failure = await starved.checkTypedAnswer({ schema: TAGGED, answer: { value: tagged(20_000, 11) } }).then(
      () => assert.fail('it gave a verdict'),
      (error: unknown) => error,
    );
    assert.ok(failure instanceof ApplicationFailure, String(failure));
    assert.equal(failure.type, ANSWER_CHECK_TIMED_OUT);
    assert.equal(failure.nonRetryable, false);
    assert.match(failure.message, /checking the answer took longer than 0 ms/);
  });

  test('a check that ends before the clock is read is not affected by it', async () => {
    const starved = createCheckAnswerActivity(0);
    assert.deepEqual(await starved.checkTypedAnswer({ schema: QUOTE, answer: { value: { symbol: 'GM' } } }), {
      ok: true,
      value: { symbol: 'GM', currency: 'USD' },
    });
  });
});
