// A worker process for test/e2e/worker-stops-on-its-own.test.ts: the echoing-validator workflow on the task queue
// named by its first argument, served with runUntilStopped and nothing else — as `await runWorker()` would, with no
// catch: a rejection ends the process with a non-zero exit code.
import { NativeConnection, Worker } from '@temporalio/worker';
import { runUntilStopped } from '../../../workers/run-until-stopped';

async function main(): Promise<void> {
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS ?? 'localhost:7233' });
  const worker = await Worker.create({
    connection,
    namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
    taskQueue: process.argv[2]!,
    workflowsPath: require.resolve('./echoing-validator'),
    shutdownGraceTime: '1 second',
  });
  console.log('Worker ready');
  await runUntilStopped(worker, { graceMs: 1_000 });
}

void main();
