// The batch window (activities/batch-window.ts): calls within a window share one submission, a call waits at most its
// own window, different betas never share, a retry finds its batch, a failed submission is forgotten so the retry
// submits again, and a batch may be cancelled only once every member this process put in it was abandoned.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { BatchWindow, type BatchEntry } from '../../activities/batch-window';

function recorder(fail = false) {
  const created: { ids: string[]; betas: string[]; at: number }[] = [];
  const create = async (requests: BatchEntry[], betas: string[]) => {
    created.push({ ids: requests.map((r) => r.customId), betas, at: Date.now() });
    if (fail) throw new Error('the API said no');
    return `msgbatch_${created.length}`;
  };
  return { created, create };
}

const entry = (customId: string): BatchEntry => ({ customId, params: { model: 'm', max_tokens: 1, messages: [] } });

describe('the batch window', () => {
  test('calls that arrive within the window go out in one submission', async () => {
    const { created, create } = recorder();
    const window = new BatchWindow(create, 100);
    const first = window.submit(entry('a'), []);
    await sleep(30);
    const second = window.submit(entry('b'), []);
    assert.deepEqual(await Promise.all([first, second]), ['msgbatch_1', 'msgbatch_1']);
    assert.deepEqual(
      created.map((c) => c.ids),
      [['a', 'b']],
    );
    // The next call opens a new window.
    assert.equal(await window.submit(entry('c'), []), 'msgbatch_2');
    assert.equal(window.submissions, 2);
  });

  test('a call with a shorter window makes the group leave earlier', async () => {
    const { created, create } = recorder();
    const window = new BatchWindow(create, 5_000);
    const started = Date.now();
    const slow = window.submit(entry('slow'), []);
    const fast = window.submit(entry('fast'), [], 20);
    await Promise.all([slow, fast]);
    assert.ok(Date.now() - started < 2_000, 'the group waited for the longer window');
    assert.deepEqual(created[0]?.ids, ['slow', 'fast']);
  });

  test('calls with other betas go in another batch', async () => {
    const { created, create } = recorder();
    const window = new BatchWindow(create, 20);
    const [a, b] = await Promise.all([
      window.submit(entry('a'), []),
      window.submit(entry('b'), ['context-management-2025-06-27']),
    ]);
    assert.notEqual(a, b);
    assert.deepEqual(created.map((c) => c.betas).sort(), [[], ['context-management-2025-06-27']]);
  });

  test('a custom_id submitted already is not submitted again', async () => {
    const { created, create } = recorder();
    const window = new BatchWindow(create, 10);
    const first = await window.submit(entry('same'), []);
    assert.equal(await window.known('same'), first);
    assert.equal(await window.submit(entry('same'), []), first);
    assert.equal(created.length, 1);
  });

  test('a failed submission rejects every member and is forgotten, so a retry submits again', async () => {
    const failing = recorder(true);
    const window = new BatchWindow(failing.create, 10);
    const results = await Promise.allSettled([window.submit(entry('x'), []), window.submit(entry('y'), [])]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected'],
    );
    await sleep(0);
    assert.equal(window.known('x'), undefined);
  });

  test('a batch may be cancelled once every member this process submitted was abandoned, not before', async () => {
    const { create } = recorder();
    const window = new BatchWindow(create, 10);
    const [id] = await Promise.all([window.submit(entry('a'), []), window.submit(entry('b'), [])]);
    assert.equal(window.abandon(id, 'a'), false);
    assert.equal(window.abandon(id, 'b'), true);
    // A batch this process never submitted: who else is in it is unknown.
    assert.equal(window.abandon('msgbatch_other', 'a'), false);
  });
});
