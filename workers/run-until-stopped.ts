// `worker.run()`, with one promise it does not keep: when the SDK starts a shutdown by itself (its core failed to take
// a workflow task's completion, say) the worker stops polling for every conversation on its task queue but its
// graceful shutdown can wait for ever for a task that will never complete — the process stays up, taking no work, and
// no supervisor restarts it. This watches the worker's state: if it leaves RUNNING without a shutdown signal, `run()`
// gets the shutdown's grace time to end on its own, and then this rejects with WorkerStoppedError so the process can
// exit non-zero and be restarted. And when it was asked to stop, it has `forceMs` (from the signal) to end: an
// activity that ignores its cancellation (a tool that does not honour its abort signal) would keep it up for as long
// as the activity runs; past that this rejects with WorkerShutdownTimeoutError.
import type { Worker } from '@temporalio/worker';

/** The signals on which Temporal's Runtime shuts its workers down (its default `shutdownSignals`). */
const SHUTDOWN_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGQUIT', 'SIGUSR2'];
const WATCH_INTERVAL_MS = 500;

export class WorkerStoppedError extends Error {
  override name = 'WorkerStoppedError';
}

/** The worker was asked to stop and did not within its force time: activities still ran (ignoring cancellation). */
export class WorkerShutdownTimeoutError extends Error {
  override name = 'WorkerShutdownTimeoutError';
}

export async function runUntilStopped(
  worker: Pick<Worker, 'run' | 'getState'>,
  options: {
    graceMs: number;
    /** From a shutdown signal, how long the worker may take to end before this rejects. Default: no bound. */
    forceMs?: number;
    log?: (message: string) => void;
  },
): Promise<void> {
  let asked = false;
  let forced: NodeJS.Timeout | undefined;
  let rejectForced: (error: Error) => void = () => undefined;
  const tooLong = new Promise<never>((_, reject) => (rejectForced = reject));
  const onSignal = (signal: NodeJS.Signals) => {
    if (asked) return;
    asked = true;
    const { forceMs } = options;
    if (forceMs === undefined) return;
    forced = setTimeout(() => {
      const message =
        `The worker did not stop within ${forceMs} ms of ${signal} (grace time ${options.graceMs} ms): an activity ` +
        `still runs after its cancellation (a tool that does not honour its abort signal?); giving up, the process exits.`;
      options.log?.(message);
      rejectForced(new WorkerShutdownTimeoutError(message));
    }, forceMs);
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
    await Promise.race([worker.run(), unasked, tooLong]);
    // run() can also end by itself once the SDK gave up: a worker nobody asked to stop has not stopped cleanly.
    if (!asked) {
      throw new WorkerStoppedError(
        `The worker stopped taking work without being asked to (state ${worker.getState()}, see the error logged ` +
          'before); ending so the process can be restarted.',
      );
    }
  } finally {
    clearInterval(watch);
    clearTimeout(giveUp);
    clearTimeout(forced);
    for (const signal of SHUTDOWN_SIGNALS) process.off(signal, onSignal);
  }
}
