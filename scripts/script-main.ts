// How the project's command-line scripts start and end: main's number is the exit code, a usage error prints its
// message and exits 2, anything else its stack and 1; Ctrl-C (or SIGTERM) cleans up first and exits 130.

/** A bad command line: the message is all the user needs (no stack). */
export class UsageError extends Error {}

export function runMain(main: () => Promise<number>): void {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      const usage = error instanceof UsageError;
      process.stderr.write(
        `${usage ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exit(usage ? 2 : 1);
    },
  );
}

/** On SIGINT or SIGTERM: log it, run `cleanup` (once, however often it is called elsewhere), exit 130. */
export function cleanUpOnSignal(cleanup: () => Promise<void>, log: (line: string) => void): void {
  const onSignal = (signal: NodeJS.Signals): void => {
    log(`${signal}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}
