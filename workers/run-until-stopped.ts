// `worker.run()`, with one promise it does not keep: when the SDK starts a shutdown by itself (its core failed to take
// a workflow task's completion, say) the worker stops polling for every conversation on its task queue but its
// graceful shutdown can wait for ever for a task that will never complete — the process stays up, taking no work, and
// no supervisor restarts it. This watches the worker's state: if it leaves RUNNING without a shutdown signal, `run()`
// gets the shutdown's grace time to end on its own, and then this rejects with WorkerStoppedError so the process can
// exit non-zero and be restarted.
import type { Worker } from '@temporalio/worker';

/** The signals on which Temporal's Runtime shuts its workers down (its default `shutdownSignals`). */
const SHUTDOWN_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGQUIT', 'SIGUSR2'];
const WATCH_INTERVAL_MS = 500;

export class WorkerStoppedError extends Error {
  override name = 'WorkerStoppedError';
}

export async function runUntilStopped(
  worker: Pick<Worker, 'run' | 'getState'>,
  options: { graceMs: number; log?: (message: string) => void },
): Promise<void> {
  let asked = false;
  const onSignal = () => {
    asked = true;
  };
  for (const signal of SHUTDOWN_SIGNALS) process.on(signal, onSignal);
  let watch: NodeJS.Timeout | undefined;
  let giveUp: NodeJS.Timeout | undefined;
  const unasked = new Promise<never>((_, reject) => {
    watch = setInterval(() => {
      const state = worker.getState();
      if (asked || state === 'RUNNING' || state === 'INITIALIZED') return;
      clearInterval(watch);
      options.log?.(`The worker stopped taking work without being asked to (state ${state}); waiting for it to end.`);
      giveUp = setTimeout(
        () =>
          reject(
            new WorkerStoppedError(
              `The worker stopped taking work without being asked to (state ${worker.getState()}, see the error ` +
                `logged before) and did not end within ${options.graceMs} ms; giving up so the process can be restarted.`,
            ),
          ),
        options.graceMs + WATCH_INTERVAL_MS,
      );
    }, WATCH_INTERVAL_MS);
  });
  try {
    await Promise.race([worker.run(), unasked]);
  } finally {
    clearInterval(watch);
    clearTimeout(giveUp);
    for (const signal of SHUTDOWN_SIGNALS) process.off(signal, onSignal);
  }
}
