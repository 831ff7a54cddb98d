// A worker as its own process, `node --import tsx <entry>`, so its memory and CPU can be read from /proc/<pid>
// without the bench's own (client, local Messages API server) mixed in. Resolves once it printed "Worker ready".
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

export interface ChildWorkerOptions {
  /** Entry file relative to the project root, e.g. workers/main.ts. */
  entry: string;
  env: Record<string, string>;
  /** Write a V8 CPU profile (per thread) into this folder when the process exits. */
  profileDir?: string;
  readyTimeoutMs?: number;
  /** Lines the worker prints (default: kept in a tail, shown when it fails). */
  output?: (line: string) => void;
}

export interface ChildWorker {
  pid: number;
  child: ChildProcess;
  tail(): string;
  /** SIGTERM (the worker shuts down), SIGKILL after `timeoutMs`. */
  stop(timeoutMs?: number): Promise<void>;
}

const alive = new Set<ChildProcess>();
let hooked = false;

/** Passed through from the bench's environment to every worker, so the lead can try tunings without code changes. */
const TUNING_VARIABLES = ['WORKER_MAX_CONCURRENT_ACTIVITIES', 'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS', 'WORKER_MAX_CACHED_WORKFLOWS', 'NODE_OPTIONS', 'UV_THREADPOOL_SIZE'];

export async function startChildWorker(options: ChildWorkerOptions): Promise<ChildWorker> {
  const inherited = Object.fromEntries(TUNING_VARIABLES.flatMap((name) => (process.env[name] ? [[name, process.env[name]!]] : [])));
  const profile = options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(options.profileDir)}`] : [];
  const child = spawn(process.execPath, [...profile, '--import', 'tsx', path.join(ROOT, options.entry)], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...inherited, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  alive.add(child);
  if (!hooked) {
    hooked = true;
    process.on('exit', () => {
      for (const worker of alive) worker.kill('SIGKILL');
    });
  }
  const lines: string[] = [];
  let ready: (() => void) | undefined;
  const exited = new Promise<string>((resolve) => {
    child.once('error', (err) => resolve(`spawn error: ${err.message}`));
    child.once('close', (code, signal) => {
      alive.delete(child);
      resolve(signal ?? `exit code ${code}`);
    });
  });
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    stream?.on('data', (chunk: Buffer) => {
      const parts = (partial + chunk.toString('utf8')).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        if (lines.length > 60) lines.shift();
        options.output?.(line);
        if (line.startsWith('Worker ready')) ready?.();
      }
    });
  }
  const tail = (): string => lines.join('\n');
  const timeoutMs = options.readyTimeoutMs ?? 120_000;
  let timer: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      ready = resolve;
      void exited.then((how) => reject(new Error(`${options.entry} exited before it was ready (${how}):\n${tail()}`)));
      timer = setTimeout(() => reject(new Error(`${options.entry} was not ready within ${timeoutMs} ms:\n${tail()}`)), timeoutMs);
    });
  } catch (err) {
    child.kill('SIGKILL');
    await exited;
    throw err;
  } finally {
    clearTimeout(timer);
  }
  return {
    pid: child.pid!,
    child,
    tail,
    async stop(stopTimeoutMs = 20_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
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
  };
}
