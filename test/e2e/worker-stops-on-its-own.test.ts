// A worker that stops taking work without being asked to must not linger as a process that looks alive. Reproduced
// with the SDK alone (test/support/workflows/echoing-validator.ts, the SDK's default converters): after the failed
// completion the SDK begins a graceful shutdown that never ends, and `worker.run()` never settles. runUntilStopped
// (what runWorker serves with) notices and rejects, so the process exits non-zero and a supervisor restarts it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { runUntilStopped, WorkerStoppedError } from '../../workers/run-until-stopped';
import { namespace, temporalAddress } from '../support/harness';

test('a worker the SDK stops on its own makes runUntilStopped reject with WorkerStoppedError', async () => {
  const taskQueue = `echoing-validator-${Date.now()}`;
  const connection = await NativeConnection.connect({ address: temporalAddress });
  const worker = await Worker.create({
    connection,
    namespace,
    taskQueue,
    workflowsPath: require.resolve('../support/workflows/echoing-validator'),
    shutdownGraceTime: '1 second',
  });
  const running = runUntilStopped(worker, { graceMs: 1_000 });
  const client = new Client({ connection: await Connection.connect({ address: temporalAddress }), namespace });
  try {
    const handle = await client.workflow.start('echoingValidator', { taskQueue, workflowId: taskQueue });
    void handle.executeUpdate('echo', { args: ['\ud800'] }).catch(() => undefined);
    await assert.rejects(running, (error: unknown) => {
      assert.ok(error instanceof WorkerStoppedError, String(error));
      assert.match(error.message, /stopped taking work without being asked to/);
      return true;
    });
    assert.notEqual(worker.getState(), 'RUNNING');
    await handle.terminate('test over');
  } finally {
    await client.connection.close();
  }
});
