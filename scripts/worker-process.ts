// A worker as its own child process, `node --import tsx <entry>`, configured by environment only: what the crash tests,
// the soak script and the bench start (the first two through test/support/worker-process.ts). Resolves once it printed
// its "Worker ready" line, keeps a tail of its output for error messages, and never outlives the process that started it.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..');
const OUTPUT_TAIL_LINES = 60;

export interface SpawnWorkerOptions {
  /** Entry file, relative to the project root (e.g. workers/main.ts) or absolute: run as `node --import tsx <entry>`. */
  entry: string;
  /** Instead: this exact command line (e.g. the Dockerfile's CMD), run in the project root; "node" is this Node. */
  command?: readonly string[];
  /** The worker's whole environment, besides PATH and HOME (inherited). */
  env: NodeJS.ProcessEnv;
  /** Write a V8 CPU profile (per thread) into this folder when the process exits (node --cpu-prof). */
  profileDir?: string;
  /** How long to wait for "Worker ready". Default 60 s. */
  readyTimeoutMs?: number;
  /** The default of `stop()`'s timeout. Default 15 s. */
  stopTimeoutMs?: number;
  /** Every line the worker prints, prefixed with its pid (default: kept in a tail only, shown if it fails). */
  output?: (line: string) => void;
}

export interface WorkerProcess {
  readonly pid: number;
  readonly child: ChildProcess;
  /** Resolves once the process has exited (for any reason). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly running: boolean;
  /** SIGKILL, and wait until the process is gone. */
  kill(): Promise<void>;
  /** SIGTERM (the worker drains and shuts down), SIGKILL after `timeoutMs`. */
  stop(timeoutMs?: number): Promise<void>;
  /** The last lines it printed. */
  tail(): string;
}

const alive = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Starts `entry` as a child process and resolves once it printed its "Worker ready" line. */
export async function spawnWorker(options: SpawnWorkerOptions): Promise<WorkerProcess> {
  const profile = options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(options.profileDir)}`] : [];
  const [file, ...args] = options.command
    ? [options.command[0] === 'node' ? process.execPath : options.command[0]!, ...options.command.slice(1)]
    : [process.execPath, ...profile, '--import', 'tsx', path.resolve(ROOT, options.entry)];
  const child = spawn(file, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  alive.add(child);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // Never leave a worker behind us, whatever way this process ends.
    process.on('exit', () => {
      for (const worker of alive) worker.kill('SIGKILL');
    });
  }

  const lines: string[] = [];
  let onLine: ((line: string) => void) | undefined;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('error', (error) => {
      lines.push(`spawn error: ${error.message}`);
      alive.delete(child);
      resolve({ code: null, signal: null });
    });
    child.once('close', (code, signal) => {
      alive.delete(child);
      resolve({ code, signal });
    });
  });
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    stream?.on('data', (chunk: Buffer) => {
      const parts = (partial + chunk.toString('utf8')).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        if (lines.length > OUTPUT_TAIL_LINES) lines.shift();
        options.output?.(`[worker ${child.pid}] ${line}`);
        onLine?.(line);
      }
    });
  }
  const tail = (): string => lines.join('\n');
  const running = (): boolean => child.exitCode === null && child.signalCode === null;

  const what = `${options.entry} (pid ${child.pid ?? 'none'})`;
  const timeoutMs = options.readyTimeoutMs ?? 60_000;
  let timer: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      onLine = (line) => {
        if (line.startsWith('Worker ready')) resolve();
      };
      void exited.then(({ code, signal }) =>
        reject(new Error(`${what} exited before it was ready (${signal ?? `exit code ${code}`}):\n${tail()}`)),
      );
      timer = setTimeout(
        () => reject(new Error(`${what} was not ready within ${timeoutMs} ms:\n${tail()}`)),
        timeoutMs,
      );
    });
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    throw error;
  } finally {
    clearTimeout(timer);
    onLine = undefined;
  }

  return {
    pid: child.pid!,
    child,
    exited,
    get running() {
      return running();
    },
    async kill() {
      if (running()) child.kill('SIGKILL');
      await exited;
    },
    async stop(stopTimeoutMs = options.stopTimeoutMs ?? 15_000) {
      if (!running()) return void (await exited);
      child.kill('SIGTERM');
      let stopTimer: NodeJS.Timeout | undefined;
      const stopped = await Promise.race([
        exited.then(() => true),
        new Promise<boolean>((resolve) => (stopTimer = setTimeout(() => resolve(false), stopTimeoutMs))),
      ]);
      clearTimeout(stopTimer);
      if (!stopped) {
        child.kill('SIGKILL');
        await exited;
      }
    },
    tail,
  };
}
