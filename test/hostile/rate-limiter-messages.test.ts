// The limiter workflow (workflows/rate-limiter.ts) reached with a raw client: a reservation of the wrong shape is
// refused by the update's validator with a clear message, a malformed report is dropped, and the limiter goes on —
// no failed workflow task, its state untouched by either.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { RATE_LIMITER_WORKFLOW, rateLimitStateQuery } from '../../common/rate-limiter-messages';
import { type Harness, startHarness } from '../support/harness';
import { failedWorkflowTasks } from '../support/hostile';

let h: Harness;
const id = `claude-rate-limits:hostile-${Date.now()}`;
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

test('garbage reservations are refused by the validator, garbage reports dropped; the limiter serves on', async () => {
  const handle = h.client.workflow.getHandle(id);
  for (const args of [
    [undefined],
    ['reserve'],
    [{ key: 'k', model: 'm', cost: { requests: -1 } }],
    [{ key: 'k' }],
    [null],
  ] as [unknown][]) {
    const error = await handle.executeUpdate('reserve', { args }).then(
      () => assert.fail(`accepted: ${JSON.stringify(args)}`),
      (err: unknown) => err,
    );
    assert.ok(error instanceof WorkflowUpdateFailedError, String(error));
    assert.ok(error.cause instanceof ApplicationFailure);
    assert.match(error.cause.message, /Invalid reservation/);
  }
  for (const args of [[], ['x'], [{ model: 'm', limits: { requests: 'many' } }], [{ model: 'm', extra: 1 }]])
    await handle.signal('observe', ...(args as [unknown]));
  // A good reservation still answers, and no garbage reached the state.
  const answer = await handle.executeUpdate('reserve', { args: [{ key: 'ok', model: 'm', cost: { requests: 1 } }] });
  assert.deepEqual((answer as { waitMs: number }).waitMs, 0);
  const state = await handle.query(rateLimitStateQuery);
  assert.deepEqual(Object.keys(state.models), ['m']);
  assert.deepEqual(state.models['m']!.buckets, {});
  assert.equal(await failedWorkflowTasks(h, id), 0);
});
