// The soak's chaos: an action (kill a worker, kill the server) at random intervals, uniform between 0.5 and 1.5
// times the mean, until told to stop.
export interface Chaos {
  /** Stops after the action in progress; resolves once it has. */
  stop(): Promise<void>;
  readonly count: number;
}

export function every(meanMs: number, random: () => number, act: () => Promise<void>): Chaos {
  let stopped = false;
  let count = 0;
  let wake: (() => void) | undefined;
  const loop = (async () => {
    if (!meanMs) return;
    while (!stopped) {
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, meanMs * (0.5 + random()));
      });
      if (stopped) return;
      count++;
      await act();
    }
  })();
  return {
    async stop() {
      stopped = true;
      wake?.();
      await loop;
    },
    get count() {
      return count;
    },
  };
}
