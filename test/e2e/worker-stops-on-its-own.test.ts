// A worker that stops taking work without being asked to must not linger as a process that looks alive. Reproduced
// with the SDK alone (test/support/workflows/echoing-validator.ts, the SDK's default converters): after the failed
// completion the SDK begins a graceful shutdown that never ends, and `worker.run()` never settles. runUntilStopped
// (what runWorker serves with) notices and rejects, so the process exits non-zero and a supervisor restarts it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { namespace, temporalAddress } from '../support/harness';

test('a worker the SDK stops on its own ends its process with a non-zero exit code and WorkerStoppedError', async () => {
  const taskQueue = `echoing-validator-${Date.now()}`;
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', require.resolve('../support/workflows/echoing-validator-worker'), taskQueue],
    { env: { ...process.env, TEMPORAL_ADDRESS: temporalAddress, TEMPORAL_NAMESPACE: namespace } },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk));
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const client = new Client({ connection: await Connection.connect({ address: temporalAddress }), namespace });
  try {
    while (!output.includes('Worker ready')) {
      assert.equal(child.exitCode, null, `the worker exited before it was ready:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const handle = await client.workflow.start('echoingValidator', { taskQueue, workflowId: taskQueue });
    void handle.executeUpdate('echo', { args: ['\ud800'] }).catch(() => undefined);
    const [code] = await exited;
    assert.notEqual(code, 0, output);
    assert.match(output, /WorkerStoppedError: The worker stopped taking work without being asked to/);
    await handle.terminate('test over');
  } finally {
    child.kill('SIGKILL');
    await client.connection.close();
  }
});
