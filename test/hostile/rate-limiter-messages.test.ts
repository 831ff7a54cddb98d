// Entry point: the fleet rate limiter's update and signal (workflows/rate-limiter.ts), reached by any client of the
// namespace. A malformed reservation is refused by the validator (Rejected, nothing in the history); a malformed
// observation is dropped with a log line; the limiter's workflow tasks never fail and it goes on answering.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import {
  observeSignal,
  RATE_LIMITER_WORKFLOW,
  rateLimiterId,
  rateLimitStateQuery,
  reserveUpdate,
} from '../../common/rate-limiter-messages';
import { type Harness, startHarness } from '../support/harness';
import { failedWorkflowTasks } from '../support/hostile';

let h: Harness;
const id = rateLimiterId(`hostile-${randomUUID()}`);
before(async () => {
  h = await startHarness();
  await h.client.workflow.start(RATE_LIMITER_WORKFLOW, { workflowId: id, taskQueue: h.taskQueue, args: [] });
});
after(async () => {
  await h?.client.workflow
    .getHandle(id)
    .terminate('test over')
    .catch(() => undefined);
  await h?.close();
});

const GOOD = { key: 'call-1', model: 'claude-sonnet-4-5', cost: { requests: 1, inputTokens: 10, outputTokens: 100 } };

/** Batches of reservations: one bad reservation refuses its whole batch. */
const BAD_RESERVATIONS: Record<string, unknown> = {
  'not a list': GOOD,
  'an empty list': [],
  'a list of 201': Array.from({ length: 201 }, (_, i) => ({ ...GOOD, key: `k${i}` })),
  'a string': 'reserve me',
  null: null,
  'a negative cost': [GOOD, { ...GOOD, cost: { requests: -1 } }],
  'an infinite cost': [{ ...GOOD, cost: { inputTokens: 1e400 } }],
  'a key of a megabyte': [{ ...GOOD, key: 'k'.repeat(2 ** 20) }],
  'an empty model': [{ ...GOOD, model: '' }],
  'an unknown field': [{ ...GOOD, priority: 'first' }],
  'caps that are strings': [{ ...GOOD, caps: { requests: 'many' } }],
};

describe('reservations that are not', () => {
  for (const [what, request] of Object.entries(BAD_RESERVATIONS)) {
    test(`${what}: refused as Rejected by the validator`, async () => {
      const error = await h.client.workflow
        .getHandle(id)
        .executeUpdate(reserveUpdate, { args: [request as never] })
        .then(
          () => assert.fail('the reservation was accepted'),
          (err: unknown) => err,
        );
      assert.ok(error instanceof WorkflowUpdateFailedError, String(error));
      assert.ok(error.cause instanceof ApplicationFailure, String(error.cause));
      assert.equal(error.cause.type, 'Rejected');
      assert.match(error.cause.message, /Invalid reservation/);
    });
  }
});

describe('observations that are not', () => {
  test('garbage signals are dropped: the buckets learn nothing from them', async () => {
    const handle = h.client.workflow.getHandle(id);
    for (const seen of [null, 42, { model: 'm' }, [null, 42], [{ model: 'm', limits: { requests: -5 } }]]) {
      await handle.signal(observeSignal, seen as never);
    }
    await handle.signal(observeSignal, [
      { model: 'm', usage: { requests: 'x' } },
      { model: 'x'.repeat(2 ** 20) },
    ] as never);
    await handle.signal(observeSignal, [{ model: 'm', unreserved: 'yes', key: 'k' }] as never);
    const state = await handle.query(rateLimitStateQuery);
    assert.deepEqual(Object.keys(state.models), []);
  });
});

describe('after all of it', () => {
  test('no workflow task failed and a good reservation is answered at once', async () => {
    const answers = await h.client.workflow.getHandle(id).executeUpdate(reserveUpdate, { args: [[GOOD]] });
    assert.equal(answers.length, 1);
    assert.equal(answers[0]!.waitMs, 0);
    assert.equal(await failedWorkflowTasks(h, id), 0);
  });
});
