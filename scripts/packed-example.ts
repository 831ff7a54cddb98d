// The package as a user gets it: `npm pack` (prepack builds dist/), then the example service (examples/unit-converter/)
// copied into a temporary directory outside the repository, its dependency pointed at the tarball, `npm install`ed
// (--prefer-offline: what `npm ci` left in the npm cache serves most of it) and compiled with its own TypeScript, once:
// with the library checks the example's tsconfig skips turned on, so the one compile also says whether any installed
// declaration file has errors (libraryErrors) — two compiles cost ~20 s more CPU.
// What test/e2e/package-example.test.ts and scripts/bench/worker-start.ts stand on.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const ROOT = path.resolve(__dirname, '..');
export const EXAMPLE_DIR = path.join(ROOT, 'examples', 'unit-converter');
export const PACKAGE_NAME = 'claude-temporal-orchestrator';

const execFileAsync = promisify(execFile);

/** Runs a command; a failure's error carries its output. */
export async function run(
  file: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<{ stdout: string; stderr: string }> {
  try {
    return await execFileAsync(file, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      timeout: options.timeoutMs ?? 300_000,
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${file} ${args.join(' ')} (in ${options.cwd}) failed: ${String(error)}\n${stdout}\n${stderr}`);
  }
}

/** npm's environment for these runs: offline first, quiet, no audit. */
export function npmEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  };
}

export interface PackedExample {
  /** The temporary directory: the tarball, and the example installed in `app/`. */
  dir: string;
  app: string;
  tarball: string;
  /** `npm pack` including the build (prepack). */
  packMs: number;
  /** `npm install` of the example with the tarball. */
  installMs: number;
  /** The example's `tsc -p . --skipLibCheck false` against the installed .d.ts. */
  compileMs: number;
  /**
   * That compile's errors in installed declaration files (node_modules/**\/*.d.ts), which the example's own
   * `skipLibCheck: true` hides; an error anywhere else fails packAndInstallExample.
   */
  libraryErrors: string[];
  /** The installed package folder (node_modules/claude-temporal-orchestrator). */
  installedPackage: string;
  remove(): void;
}

export async function packAndInstallExample(log: (line: string) => void = () => {}): Promise<PackedExample> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cto-package-'));
  const remove = (): void => fs.rmSync(dir, { recursive: true, force: true });
  try {
    let started = Date.now();
    await run('npm', ['pack', '--pack-destination', dir], { cwd: ROOT, env: npmEnv() });
    const packMs = Date.now() - started;
    const tarball = path.join(
      dir,
      fs.readdirSync(dir).find((name) => name.endsWith('.tgz'))!,
    );
    log(`packed ${path.basename(tarball)} in ${packMs} ms`);

    const app = path.join(dir, 'app');
    fs.cpSync(EXAMPLE_DIR, app, {
      recursive: true,
      filter: (source) => !/[\\/](node_modules|dist)$/.test(source) && !source.endsWith('.tgz'),
    });
    const manifestFile = path.join(app, 'package.json');
    const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as { dependencies: Record<string, string> };
    manifest.dependencies[PACKAGE_NAME] = `file:${tarball}`;
    fs.writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);

    started = Date.now();
    await run('npm', ['install'], { cwd: app, env: npmEnv() });
    const installMs = Date.now() - started;
    log(`installed the example against it in ${installMs} ms`);

    started = Date.now();
    const libraryErrors = await compileExample(app);
    const compileMs = Date.now() - started;
    log(`compiled the example in ${compileMs} ms (${libraryErrors.length} errors in installed .d.ts files)`);
    return {
      dir,
      app,
      tarball,
      packMs,
      installMs,
      compileMs,
      libraryErrors,
      installedPackage: path.join(app, 'node_modules', PACKAGE_NAME),
      remove,
    };
  } catch (error) {
    remove();
    throw error;
  }
}

/** A tsc diagnostic's first line: `file(line,col): error TSnnnn: …`. */
const DIAGNOSTIC = /^(\S[^(]*)\(\d+,\d+\): error TS\d+/;

/**
 * `tsc -p .` in the example with library checks on: emits as a plain `tsc -p .` does (tsc emits despite errors), and
 * returns the errors in installed declaration files. Any other error is the example's own, or one its `skipLibCheck`
 * would not hide: that throws, with tsc's output.
 */
async function compileExample(app: string): Promise<string[]> {
  const tsc = path.join(app, 'node_modules', 'typescript', 'bin', 'tsc');
  const output = await execFileAsync(process.execPath, [tsc, '-p', '.', '--skipLibCheck', 'false'], {
    cwd: app,
    timeout: 300_000,
    maxBuffer: 64 * 1024 * 1024,
  }).then(
    () => '',
    (error: { stdout?: string; message: string }) => error.stdout || error.message,
  );
  const errors = output.split('\n').filter((line) => DIAGNOSTIC.test(line));
  const isLibrary = (line: string): boolean => {
    const file = DIAGNOSTIC.exec(line)![1]!.replace(/\\/g, '/');
    return file.includes('node_modules/') && file.endsWith('.d.ts');
  };
  if (output && (errors.length === 0 || !errors.every(isLibrary))) {
    throw new Error(`tsc -p . (in ${app}) failed:\n${output}`);
  }
  return errors;
}

export interface ExampleWorker {
  process: ChildProcess;
  /** From spawn to the "Worker ready" line: process start, imports, the workflow bundle, the connection. */
  readyMs: number;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** SIGTERM, then its exit code. */
  stop(): Promise<number | null>;
}

/** Starts the example's worker (`node dist/src/worker.js`) with `env` and waits until it says it is ready. */
export async function startExampleWorker(
  app: string,
  env: NodeJS.ProcessEnv,
  timeoutMs = 120_000,
): Promise<ExampleWorker> {
  const started = performance.now();
  const child = spawn(process.execPath, [path.join(app, 'dist', 'src', 'worker.js')], {
    cwd: app,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the worker was not ready within ${timeoutMs} ms:\n${output}`)),
      timeoutMs,
    );
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes('Worker ready')) {
        clearTimeout(timer);
        resolve(performance.now() - started);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the worker exited (${code}) before it was ready:\n${output}`));
    });
  });
  const stop = async (): Promise<number | null> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    return exited;
  };
  try {
    const readyMs = await ready;
    return { process: child, readyMs, output: () => output, stop };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}
