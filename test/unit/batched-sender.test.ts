// BatchedSender (activities/batched-sender.ts): how the fleet rate limiter's reservations and reports reach the limiter
// workflow — one message on its way at a time, what arrives meanwhile sent together in the next.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BatchedSender } from '../../activities/batched-sender';

/** A send that records its batches and is answered when the test says so. */
function controlledSend() {
  const batches: number[][] = [];
  const pending: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  const send = (items: number[]) => {
    batches.push(items);
    return new Promise<string[]>((resolve, reject) => {
      pending.push({ resolve: () => resolve(items.map((n) => `answer ${n}`)), reject });
    });
  };
  return { batches, pending, send };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('a batched sender', () => {
  test('sends an item at once when nothing is on its way, and what arrives meanwhile together next', async () => {
    const { batches, pending, send } = controlledSend();
    const sender = new BatchedSender(send, 100);
    const first = sender.add(1).result;
    const later = [2, 3, 4].map((n) => sender.add(n).result);
    assert.deepEqual(batches, [[1]]);
    pending[0]!.resolve();
    assert.equal(await first, 'answer 1');
    await settled();
    assert.deepEqual(batches, [[1], [2, 3, 4]], 'one message for the three that waited');
    pending[1]!.resolve();
    assert.deepEqual(await Promise.all(later), ['answer 2', 'answer 3', 'answer 4']);
  });

  test('a batch holds at most maxBatch items', async () => {
    const { batches, pending, send } = controlledSend();
    const sender = new BatchedSender(send, 2);
    const results = [1, 2, 3, 4, 5].map((n) => sender.add(n).result);
    for (let i = 0; i < 3; i++) {
      await settled();
      pending[i]!.resolve();
    }
    assert.equal((await Promise.all(results)).length, 5);
    assert.deepEqual(batches, [[1], [2, 3], [4, 5]]);
  });

  test('an item dropped before it is sent is not sent', async () => {
    const { batches, pending, send } = controlledSend();
    const sender = new BatchedSender(send, 100);
    void sender.add(1).result;
    const dropped = sender.add(2);
    void sender.add(3).result;
    dropped.drop();
    pending[0]!.resolve();
    await settled();
    assert.deepEqual(batches, [[1], [3]]);
  });

  test('a failed send rejects its own batch, and the next batch is still sent', async () => {
    const { batches, pending, send } = controlledSend();
    const sender = new BatchedSender(send, 100);
    const failed = sender.add(1).result;
    const next = sender.add(2).result;
    pending[0]!.reject(new Error('unavailable'));
    await assert.rejects(failed, /unavailable/);
    await settled();
    pending[1]!.resolve();
    assert.equal(await next, 'answer 2');
    assert.deepEqual(batches, [[1], [2]]);
  });
});
