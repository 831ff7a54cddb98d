// How a worker's process learns that its worker stopped: runUntilStopped (what runWorker serves with) resolves only
// when a shutdown signal asked for the stop; any other end of run() is a WorkerStoppedError, so the process exits
// non-zero and its supervisor restarts it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Worker } from '@temporalio/worker';
import { runUntilStopped, WorkerStoppedError } from '../../workers/run-until-stopped';

/** A worker whose run() ends after `ms`, in state STOPPED. */
function workerEndingAfter(ms: number): Pick<Worker, 'run' | 'getState'> {
  let state: ReturnType<Worker['getState']> = 'RUNNING';
  return {
    run: () =>
      new Promise<void>((resolve) =>
        setTimeout(() => {
          state = 'STOPPED';
          resolve();
        }, ms),
      ),
    getState: () => state,
  };
}

test('run() that ends by itself, unasked, is a WorkerStoppedError', async () => {
  await assert.rejects(runUntilStopped(workerEndingAfter(50), { graceMs: 1_000 }), WorkerStoppedError);
});

test('run() that ends after a shutdown signal resolves', async () => {
  // The Runtime's own SIGTERM handler is not installed here: this process must not die of the signal it sends itself.
  const keepAlive = () => undefined;
  process.on('SIGUSR2', keepAlive);
  try {
    const running = runUntilStopped(workerEndingAfter(300), { graceMs: 1_000 });
    process.kill(process.pid, 'SIGUSR2');
    await running;
  } finally {
    process.off('SIGUSR2', keepAlive);
  }
});
