// `npm test`: node's test runner over test/**/*.test.ts, in four folders: test/unit (pure, no server: seconds),
// test/tooling (the testing kit, the rigs, and the static checks: tsc, ESLint, Prettier), test/e2e (a real Temporal
// dev server) and test/hostile. One dev server and one workflow bundle serve the whole run; they are set up only when a selected
// file is outside test/unit (`npm run test:unit` starts nothing).
//
//   tsx scripts/run-tests.ts                      all of test/**/*.test.ts
//   tsx scripts/run-tests.ts test/unit            a folder
//   tsx scripts/run-tests.ts dev-server crash     only files whose path contains "dev-server" or "crash"
//   tsx scripts/run-tests.ts test/x.test.ts       that file
//   tsx scripts/run-tests.ts --test-name-pattern=restart   (arguments starting with - go to node)
//
// Tests find what they need in the environment:
//   TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE   the server (reused as is if TEMPORAL_ADDRESS was already set and answers)
//   TEMPORAL_UI_URL, TEMPORAL_DB_FILE      its Web UI and SQLite file ('' when reusing a server we did not start)
//   TEMPORAL_CLI_PATH                      the Temporal CLI, to start more servers (crash tests)
//   WORKFLOW_BUNDLE_PATH                   pre-bundled workflows/index.ts: Worker.create({ workflowBundle: { codePath } })
//   WORKFLOW_BUNDLES_DIR                   its folder, where the other bundle variants are built once for the whole run
//                                          (test/support/shared-workflow-bundle.ts)
// TEST_CONCURRENCY sets --test-concurrency (default: one file per core, plus one when a server is needed). The server's own log goes to test-artifacts/temporal-dev-server.log.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { connectOrStartDevServer, type DevServer } from '../testing/dev-server';
import { ensureTemporalCli } from '../testing/temporal-cli';
import { writeBundle } from '../test/support/shared-workflow-bundle';
import { PREBUILT_BUNDLES } from '../workers/workflow-bundles';

const ROOT = path.resolve(__dirname, '..');
const TEST_DIR = path.join(ROOT, 'test');
const WORKFLOWS_INDEX = path.join(ROOT, 'workflows', 'index.ts');
/** Tests in this folder need no Temporal server, CLI or bundle. */
const PURE_DIR = path.join('test', 'unit') + path.sep;
const SERVER_LOG = path.join(ROOT, 'test-artifacts', 'temporal-dev-server.log');

// Silenced once the tests run, so that node's `# pass N` / `# fail N` summary stays the last thing printed.
let quiet = false;
const log = (line: string): void => {
  if (!quiet) process.stderr.write(`[run-tests] ${line}\n`);
};

/** test/**\/*.test.ts, sorted, as paths relative to the project root. */
export function findTestFiles(dir = TEST_DIR): string[] {
  const found: string[] = [];
  const walk = (current: string): void => {
    for (const entry of fs.readdirSync(current, { withFileTypes: true })) {
      const full = path.join(current, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && !entry.name.startsWith('.')) walk(full);
      } else if (entry.isFile() && entry.name.endsWith('.test.ts')) {
        found.push(path.relative(ROOT, full));
      }
    }
  };
  if (fs.existsSync(dir)) walk(dir);
  return found.sort();
}

/** Each filter is a file path (used as is) or a substring of the test file paths. */
export function selectTestFiles(filters: string[], all = findTestFiles()): string[] {
  if (filters.length === 0) return all;
  const selected = new Set<string>();
  for (const filter of filters) {
    const asPath = path.resolve(filter);
    if (fs.existsSync(asPath) && fs.statSync(asPath).isFile()) {
      selected.add(path.relative(ROOT, asPath));
      continue;
    }
    if (fs.existsSync(asPath) && fs.statSync(asPath).isDirectory()) {
      const inside = path.relative(ROOT, asPath) + path.sep;
      for (const file of all.filter((f) => f.startsWith(inside))) selected.add(file);
      continue;
    }
    const matches = all.filter((file) => file.includes(filter));
    if (matches.length === 0) {
      throw new Error(`No test file matches "${filter}" (looked in ${path.relative(ROOT, TEST_DIR)}/).`);
    }
    for (const file of matches) selected.add(file);
  }
  return [...selected].sort();
}

/**
 * The files that take longest (40–100 s each on two cores: packing and installing the package, type-checking and
 * linting, replaying the Dockerfile, killing workers and servers, waiting out a server timeout) start first, so that none of them is what
 * the run waits for at its end. The rest keep their order.
 */
const LONGEST = [
  'test/e2e/package-example.test.ts',
  'test/tooling/static-checks.test.ts',
  'test/e2e/deployment.test.ts',
  'test/e2e/crash.test.ts',
  'test/e2e/no-worker-on-queue.test.ts',
  'test/e2e/faults.test.ts',
  'test/e2e/graceful-shutdown.test.ts',
];

export function longestFirst(files: string[]): string[] {
  const first = LONGEST.filter((file) => files.includes(file));
  return [...first, ...files.filter((file) => !first.includes(file))];
}

async function bundleWorkflows(outDir: string): Promise<string | undefined> {
  if (!fs.existsSync(WORKFLOWS_INDEX)) {
    log(
      `WARNING: ${path.relative(ROOT, WORKFLOWS_INDEX)} does not exist yet; not bundling workflows ` +
        `(WORKFLOW_BUNDLE_PATH stays unset).`,
    );
    return undefined;
  }
  const started = Date.now();
  // With the converters of a worker without encryption, as the shipped `default` bundle; the folder's other variants
  // are built by the first test process that needs one (test/support/shared-workflow-bundle.ts).
  await fsp.mkdir(outDir, { recursive: true });
  const file = await writeBundle(PREBUILT_BUNDLES.default, path.join(outDir, PREBUILT_BUNDLES.default.file));
  const size = (await fsp.stat(file)).size;
  log(`Bundled workflows in ${Date.now() - started} ms (${Math.round(size / 1024)} KiB): ${file}`);
  return file;
}

function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (os.constants.signals[signal] ?? 1);
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const nodeFlags = args.filter((arg) => arg.startsWith('-'));
  const files = selectTestFiles(args.filter((arg) => !arg.startsWith('-')));
  if (files.length === 0) {
    log('No test files found (test/**/*.test.ts).');
    return 1;
  }
  const needsServer = files.some((file) => !file.startsWith(PURE_DIR));
  // Every file works on task queues (and ids) of its own, so files run side by side, one more than there are cores:
  // e2e files spend much of their time waiting on the server, a worker process or a timeout.
  const cores = os.availableParallelism();
  const concurrency = Number(process.env.TEST_CONCURRENCY ?? (needsServer ? cores + 1 : cores));
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error('TEST_CONCURRENCY must be a positive integer');

  let server: DevServer | undefined;
  let child: ChildProcess | undefined;
  let tmpDir: string | undefined;
  let serverLog: fs.WriteStream | undefined;
  let cleanedUp: Promise<void> | undefined;
  const cleanup = (): Promise<void> =>
    (cleanedUp ??= (async () => {
      await server?.stop().catch((error: unknown) => {
        quiet = false;
        log(`Failed to stop the dev server: ${String(error)}`);
      });
      serverLog?.end();
      if (tmpDir) await fsp.rm(tmpDir, { recursive: true, force: true });
    })());
  let interrupted: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (interrupted) return;
    interrupted = signal;
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill(signal); // the test runner reports and exits; main() then cleans up as usual
    } else {
      void cleanup().finally(() => process.exit(signalExitCode(signal)));
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    const started = Date.now();
    const env: NodeJS.ProcessEnv = { ...process.env };
    if (needsServer) await startTemporal(env);
    if (interrupted) return signalExitCode(interrupted);

    // TAP, so the run ends with node's `# pass N` / `# fail N` summary whether or not stdout is a terminal.
    const reporter = nodeFlags.some((flag) => flag.startsWith('--test-reporter')) ? [] : ['--test-reporter=tap'];
    // tsx's CommonJS hook only (the project and its tests are CommonJS): without its ESM loader thread each test
    // process starts ~0.35 s of CPU sooner (3.3 instead of 3.7 s to load the e2e harness, 5 runs each).
    const nodeArgs = [
      '--require',
      'tsx/cjs',
      '--test',
      `--test-concurrency=${concurrency}`,
      ...reporter,
      ...nodeFlags,
      ...longestFirst(files),
    ];
    log(`Ready in ${Date.now() - started} ms: ${files.length} test files. node ${nodeArgs.join(' ')}`);
    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
      quiet = true;
      const testRunner = spawn(process.execPath, nodeArgs, { cwd: ROOT, env, stdio: 'inherit' });
      child = testRunner;
      testRunner.once('error', reject);
      testRunner.once('exit', (code, signal) => resolve({ code, signal }));
    });
    if (exit.signal) return signalExitCode(exit.signal);
    if (interrupted && exit.code === 0) return signalExitCode(interrupted);
    return exit.code ?? 1;
  } finally {
    await cleanup();
  }

  /** The Temporal CLI, a dev server and the workflow bundle, for tests that need them; where they are goes into `env`. */
  async function startTemporal(env: NodeJS.ProcessEnv): Promise<void> {
    tmpDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'cto-tests-'));
    const cliPath = await ensureTemporalCli(log);
    await fsp.mkdir(path.dirname(SERVER_LOG), { recursive: true });
    const out = fs.createWriteStream(SERVER_LOG);
    serverLog = out;
    // Both take a few seconds, so do them side by side; allSettled, so a failed bundle never orphans a server.
    const [serverResult, bundleResult] = await Promise.allSettled([
      connectOrStartDevServer({ cliPath, log, serverOutput: (line) => void (out.writable && out.write(`${line}\n`)) }),
      bundleWorkflows(path.join(tmpDir, 'workflow-bundles')),
    ]);
    if (serverResult.status === 'fulfilled') server = serverResult.value;
    if (serverResult.status === 'rejected') throw serverResult.reason;
    if (bundleResult.status === 'rejected') throw bundleResult.reason;
    const devServer = serverResult.value;
    Object.assign(env, {
      TEMPORAL_ADDRESS: devServer.address,
      TEMPORAL_NAMESPACE: devServer.namespace,
      TEMPORAL_UI_URL: devServer.uiUrl,
      TEMPORAL_CLI_PATH: cliPath,
      TEMPORAL_DB_FILE: devServer.dbFile,
    });
    if (bundleResult.value) {
      env.WORKFLOW_BUNDLE_PATH = bundleResult.value;
      env.WORKFLOW_BUNDLES_DIR = path.dirname(bundleResult.value);
    } else {
      delete env.WORKFLOW_BUNDLE_PATH;
      delete env.WORKFLOW_BUNDLES_DIR;
    }
    log(`Temporal dev server ${devServer.address} (UI ${devServer.uiUrl || 'n/a'})`);
  }
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      quiet = false;
      log(error instanceof Error ? (error.stack ?? error.message) : String(error));
      process.exit(1);
    },
  );
}
