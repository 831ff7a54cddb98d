// Many test files in one test process (scripts/run-tests.ts writes the entry that calls this). Each file becomes a suite
// named by its path, in which its tests, hooks and suites run in order as they would in a process of their own;
// `concurrency` files run side by side. Why: a process that loads the harness (the Anthropic SDK, gRPC, Temporal's
// protos, tsx) spends ~3.3 CPU-s on that before its first test, and the run has ~80 such files on two cores.
// Reading a run: a file whose hook failed or ran out of time (its `before`, a suite's timeout) shows its tests as
// cancelled, and node's summary counts them under `# cancelled`, not `# fail`; the error is on the file's own line.
import path from 'node:path';
import { after, describe } from 'node:test';

/**
 * A file that has not finished by then fails (and the others go on) instead of holding the whole run. Not 15 min: in a
 * whole run on two cores deployment took 882 s and package-example's setup alone over 600 s (their npm and tsc start
 * beside each other's and static-checks').
 */
const FILE_TIMEOUT_MS = 25 * 60_000;
/** How long the process may stay up after its last test for what a file left open, before it exits anyway. */
const LINGER_MS = 10_000;

export function runTestFiles(root: string, files: string[], concurrency: number): void {
  describe(`${files.length} test files, ${concurrency} at a time`, { concurrency }, () => {
    after(() => {
      // node:test has set process.exitCode by now (1 when a test failed); an open handle must not hang the run.
      setTimeout(() => {
        const open = process.getActiveResourcesInfo().filter((kind) => kind !== 'TTYWrap' && kind !== 'Timeout');
        process.stderr.write(`Exiting ${LINGER_MS} ms after the last test with open handles: ${open.join(', ')}\n`);
        process.exit();
      }, LINGER_MS).unref();
    });
    for (const file of files) {
      // concurrency 1: a file's tests keep the order they were written in (nested suites inherit it).
      describe(file, { concurrency: 1, timeout: FILE_TIMEOUT_MS }, () => {
        // eslint-disable-next-line @typescript-eslint/no-require-imports -- the file registers its tests as it loads
        require(path.resolve(root, file));
      });
    }
  });
}
