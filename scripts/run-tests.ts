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
// Test files share processes (test/support/test-file-group.ts), so that each process loads the SDKs once:
//   test/unit                 one process, file after file (pure and quick);
//   OWN_PROCESS               one process each (they change what a whole process shares);
//   the rest                  TEST_GROUPS processes (default: two per core), each running
//                             TEST_FILES_PER_PROCESS (default 1) of its files at a time.
// TEST_GROUPS=0 gives every file a process of its own, node's default, with TEST_CONCURRENCY of them at a time (default:
// one per core, plus one). The server's own log goes to test-artifacts/temporal-dev-server.log.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { connectOrStartDevServer, type DevServer } from '../testing/dev-server';
import { ensureTemporalCli } from '../testing/temporal-cli';
import { writeBundle } from '../test/support/shared-workflow-bundle';
import { PREBUILT_BUNDLES } from '../workers/workflow-bundles';
import { describeFailure, tapCounts, tapFailures } from './tap-failures';

const ROOT = path.resolve(__dirname, '..');
const TEST_DIR = path.join(ROOT, 'test');
const FIXTURES_DIR = path.join(TEST_DIR, 'fixtures');
const WORKFLOWS_INDEX = path.join(ROOT, 'workflows', 'index.ts');
/** Tests in this folder need no Temporal server, CLI or bundle. */
const PURE_DIR = path.join('test', 'unit') + path.sep;
/** The runner's own sample test files (test/tooling/run-tests-rerun.test.ts): they need nothing either. */
const FIXTURE_TESTS = path.join('test', 'fixtures') + path.sep;
const SERVER_LOG = path.join(ROOT, 'test-artifacts', 'temporal-dev-server.log');
/** The last run's whole TAP output. */
const TAP_LOG = path.join(ROOT, 'test-artifacts', 'test-run.tap');

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
        // test/fixtures holds what tests read, and test files the runner's own tests run on purpose.
        if (entry.name !== 'node_modules' && !entry.name.startsWith('.') && full !== FIXTURES_DIR) walk(full);
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
 * The files that take longest, in seconds from start to end in a whole run on two cores (a clean clone, 9b17a9f):
 * packing and installing the package, replaying the Dockerfile, type-checking and linting, killing workers and
 * servers, spawning the CLI. They start first, so that none of them is what the run waits for at its end; every other
 * file counts as TYPICAL_FILE_SECONDS (the mean of the rest is ~20).
 */
const LONGEST: Record<string, number> = {
  'test/e2e/package-example.test.ts': 420,
  'test/e2e/deployment.test.ts': 380,
  'test/tooling/static-checks.test.ts': 250,
  'test/e2e/crash.test.ts': 200,
  'test/e2e/cli.test.ts': 140,
  'test/e2e/no-content-in-spans-or-logs.test.ts': 120,
  // Two newer files, from a whole run of #32's merge (178 s and 131 s) scaled to the figures above: a dead poller ages 70 s; four
  // commands started from source many times over.
  'test/e2e/worker-killed.test.ts': 150,
  'test/hostile/command-settings.test.ts': 110,
  'test/e2e/graceful-shutdown.test.ts': 85,
  'test/tooling/demo.test.ts': 80,
  // Sub-agents' crashes (alone: 80 s): a worker killed under three children, and a server of its own restarted.
  'test/e2e/sub-agents-crash.test.ts': 80,
};
const TYPICAL_FILE_SECONDS = 20;
/** More failed files than this is no race lost under load: the run fails without a rerun. */
const MAX_RERUN_FILES = 3;
const secondsOf = (file: string): number => LONGEST[file] ?? TYPICAL_FILE_SECONDS;

export function longestFirst(files: string[]): string[] {
  const first = Object.keys(LONGEST).filter((file) => files.includes(file));
  return [...first, ...files.filter((file) => !first.includes(file))];
}

/** Files that change what their whole process shares, so they run in a process of their own. */
const OWN_PROCESS = [
  'test/e2e/tracing.test.ts', // registers the process's global OpenTelemetry tracer provider and propagator
  'test/tooling/tracing-content.test.ts', // the same
  'test/hostile/client-calls.test.ts', // asserts that nothing reached process.on('uncaughtException') in the process
  // Timing under load: 50 readers' long polls, and an MCP server restarted within its retries.
  'test/e2e/stream-readers-come-and-go.test.ts',
  'test/e2e/mcp-everything.test.ts',
  // Costly typed answers: their check is a local activity, CPU-bound on the main thread for up to seconds at a time,
  // which would stall the workers of the files beside them (a shared process's workers share that thread).
  'test/hostile/typed-answer-schemas.test.ts',
  'test/e2e/structured-output.test.ts',
  // Their workers must answer within seconds (a cold worker's first poll; raw starts they wait on): in a shared process
  // a neighbour's stall of 30–40 s failed them in whole runs, never alone.
  'test/hostile/thinking-options.test.ts',
  'test/e2e/cold-query-at-every-point.test.ts',
  'test/hostile/tool-and-mcp-outputs.test.ts', // counts timed-out workflow tasks of 1.4 MB histories
];

/** What one test process runs: a file, or `files` side by side, `concurrency` at a time. */
export type TestEntry = { file: string } | { name: string; files: string[]; concurrency: number };

/**
 * The processes of a run, longest first: each file goes to the shared process with the fewest seconds so far (so the
 * long ones spread and the processes end about together), test/unit gets one, OWN_PROCESS files one each. A group of
 * one file is just that file.
 */
export function groupTestFiles(files: string[], groups: number, filesPerProcess: number): TestEntry[] {
  const ordered = longestFirst(files);
  if (groups === 0) return ordered.map((file) => ({ file }));
  const unit = ordered.filter((file) => file.startsWith(PURE_DIR));
  const alone = ordered.filter((file) => OWN_PROCESS.includes(file));
  const shared = ordered.filter((file) => !unit.includes(file) && !alone.includes(file));
  const buckets = Array.from({ length: Math.min(groups, shared.length) }, () => ({
    files: [] as string[],
    seconds: 0,
  }));
  for (const file of shared) {
    const emptiest = buckets.reduce((least, bucket) => (bucket.seconds < least.seconds ? bucket : least));
    emptiest.files.push(file);
    emptiest.seconds += secondsOf(file);
  }
  const entry = (name: string, members: string[], concurrency: number): TestEntry =>
    members.length === 1 ? { file: members[0]! } : { name, files: members, concurrency };
  return [
    ...buckets.map((bucket, i) => entry(`files-${i + 1}-of-${buckets.length}`, bucket.files, filesPerProcess)),
    ...alone.map((file) => ({ file })),
    ...(unit.length > 0 ? [entry('unit', unit, 1)] : []),
  ];
}

/** The path node's runner is given for an entry: the file, or a module written into `dir` that runs the group. */
function writeEntry(entry: TestEntry, dir: string): string {
  if ('file' in entry) return entry.file;
  const file = path.join(dir, `${entry.name}.cjs`);
  const runner = path.join(ROOT, 'test', 'support', 'test-file-group.ts');
  fs.writeFileSync(
    file,
    `require(${JSON.stringify(runner)}).runTestFiles(${JSON.stringify(ROOT)}, ${JSON.stringify(entry.files)}, ${entry.concurrency});\n`,
  );
  return file;
}

function positiveInteger(name: string, fallback: number, min = 1): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer of at least ${min}`);
  return value;
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
  const needsServer = files.some((file) => !file.startsWith(PURE_DIR) && !file.startsWith(FIXTURE_TESTS));
  // Every file works on task queues (and ids) of its own, so files run side by side, more than there are cores: e2e
  // files spend much of their time waiting on the server, a worker process or a timeout.
  const cores = os.availableParallelism();
  const groups = positiveInteger('TEST_GROUPS', 2 * cores, 0);
  // One file at a time per shared process (5 files at once on two cores): the run is CPU-bound (~28 CPU-min in ~14 min
  // on two cores), so more at once only stretched each file's timings; with two, a whole run's load average reached
  // 16–24 and a timing-bound test failed in most whole runs (a 57 s workflow task, a relay that took > 90 s to drop).
  const entries = groupTestFiles(files, groups, positiveInteger('TEST_FILES_PER_PROCESS', 1));
  // All shared processes at once, and one more for the unit files and those that run alone.
  const concurrency =
    groups === 0
      ? positiveInteger('TEST_CONCURRENCY', needsServer ? cores + 1 : cores)
      : Math.min(groups + 1, entries.length);

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
    tmpDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'cto-tests-'));
    const testPaths = entries.map((entry) => writeEntry(entry, tmpDir!));
    if (needsServer) await startTemporal(env, tmpDir);
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
      ...testPaths,
    ];
    log(
      `Ready in ${Date.now() - started} ms: ${files.length} test files in ${entries.length} process${entries.length === 1 ? '' : 'es'}. node ${nodeArgs.join(' ')}`,
    );
    quiet = true;
    const run = await runNode(nodeArgs, env);
    // For reading a run after the fact; a run does not need it.
    await fsp
      .mkdir(path.dirname(TAP_LOG), { recursive: true })
      .then(() => fsp.writeFile(TAP_LOG, run.tap))
      .catch(() => undefined);
    if (run.signal) return signalExitCode(run.signal);
    if (interrupted) return run.code === 0 ? signalExitCode(interrupted) : (run.code ?? 1);
    if (run.code === 0 || reporter.length === 0) return run.code ?? 1;
    return await recapAndRerun(run.tap, run.code ?? 1, env);
  } finally {
    await cleanup();
  }

  /** node's test runner, its TAP passed through to stdout as it comes and kept for the recap. */
  function runNode(
    args: string[],
    env: NodeJS.ProcessEnv,
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null; tap: string }> {
    return new Promise((resolve, reject) => {
      const testRunner = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['inherit', 'pipe', 'inherit'] });
      child = testRunner;
      const chunks: Buffer[] = [];
      testRunner.stdout.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        process.stdout.write(chunk);
      });
      testRunner.once('error', reject);
      testRunner.once('close', (code, signal) =>
        resolve({ code, signal, tap: Buffer.concat(chunks).toString('utf8') }),
      );
    });
  }

  /**
   * After a failed run: the failures, one line each, where a CI log that keeps only its end shows them; then, when
   * they are in at most MAX_RERUN_FILES files, those files once more, alone, on the idle machine. A failure that passes
   * alone was the load's (a whole run keeps two cores busy for ~15 min, and a timing-bound test can lose a race there);
   * it is named as flaky, and the run passes. One that fails again fails the run. TEST_RERUNS=0 turns the rerun off.
   */
  async function recapAndRerun(tap: string, code: number, env: NodeJS.ProcessEnv): Promise<number> {
    const failures = tapFailures(tap, ROOT);
    const counts = tapCounts(tap);
    const out = (line = ''): boolean => process.stdout.write(`# ${line}\n`);
    out();
    out(`Failed in the whole run (${failures.length}):`);
    for (const failure of failures) out(`  ${describeFailure(failure)}`);
    const files = [...new Set(failures.map((failure) => failure.file))];
    const rerunnable =
      positiveInteger('TEST_RERUNS', 1, 0) > 0 &&
      failures.length > 0 &&
      files.length <= MAX_RERUN_FILES &&
      files.every((file): file is string => file !== undefined);
    if (!rerunnable) return code;
    out(`Running ${files.join(', ')} again, alone:`);
    const rerunArgs = ['--require', 'tsx/cjs', '--test', '--test-concurrency=1', '--test-reporter=tap', ...files];
    const rerun = await runNode(rerunArgs, env);
    if (rerun.signal) return signalExitCode(rerun.signal);
    const rerunCounts = tapCounts(rerun.tap);
    const passedAlone = rerun.code === 0;
    out();
    if (counts) {
      out(`whole run: tests ${counts.tests}, pass ${counts.pass}, fail ${counts.fail}, cancelled ${counts.cancelled}`);
    }
    if (rerunCounts) {
      out(
        `again alone: tests ${rerunCounts.tests}, pass ${rerunCounts.pass}, fail ${rerunCounts.fail}, cancelled ${rerunCounts.cancelled}`,
      );
    }
    if (!passedAlone) {
      for (const failure of tapFailures(rerun.tap, ROOT)) out(`failed again: ${describeFailure(failure)}`);
      out('result: FAIL');
      return rerun.code ?? 1;
    }
    for (const failure of failures) out(`flaky (failed under load, passed alone): ${describeFailure(failure)}`);
    out(`result: pass, with ${failures.length} flaky test${failures.length === 1 ? '' : 's'}`);
    return 0;
  }

  /** The Temporal CLI, a dev server and the workflow bundle, for tests that need them; where they are goes into `env`. */
  async function startTemporal(env: NodeJS.ProcessEnv, tmpDir: string): Promise<void> {
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
