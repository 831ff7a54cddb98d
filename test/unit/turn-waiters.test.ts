// How many callers may wait on a conversation's turns at once, without Temporal: the validator's side (admit) and the
// handler's (enter, leave).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../../common/failure-types';
import { MAX_POLLS_IN_FLIGHT } from '../../streaming/stream-events';
import { MAX_TURN_WAITERS, TurnWaiters } from '../../workflows/turn-waiters';

const isBusy = (err: unknown) => err instanceof ApplicationFailure && err.type === FailureType.Busy && err.nonRetryable;

test(`${MAX_TURN_WAITERS} callers are admitted, the next is refused as busy until one of them leaves`, () => {
  const waiters = new TurnWaiters();
  const leaves = [];
  for (let i = 0; i < MAX_TURN_WAITERS; i++) {
    waiters.admit();
    leaves.push(waiters.enter());
  }
  assert.throws(() => waiters.admit(), isBusy);
  leaves.pop()!();
  waiters.admit();
  leaves.push(waiters.enter());
  assert.throws(() => waiters.admit(), isBusy);
});

test('the cap leaves room under Temporal’s default of 10 updates in flight, with the long polls counted', () => {
  assert.ok(MAX_POLLS_IN_FLIGHT + MAX_TURN_WAITERS <= 10 - 2, 'two slots stay for an approval and a submitMessage');
});
