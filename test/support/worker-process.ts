// The worker as it runs in production: `node --import tsx workers/main.ts`, a child process of its own, configured by
// environment only. Crash tests and the soak script start it, wait for its "Worker ready" line, and end it the hard
// way (SIGKILL: no shutdown hook, no activity completion, no goodbye to the server), just like a machine that dies.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const WORKER_MAIN = path.join(ROOT, 'workers', 'main.ts');
const OUTPUT_TAIL_LINES = 60;

export interface WorkerProcessOptions {
  /** host:port of the Temporal frontend. Default: $TEMPORAL_ADDRESS. */
  temporalAddress?: string;
  namespace?: string;
  taskQueue: string;
  /** The Messages API the worker calls (the local server's URL). */
  anthropicBaseUrl: string;
  /** Where the tools append their JSON lines (start/finish/error). */
  executionLog: string;
  /** Simulated latency before every tool execution, in ms (TOOL_LATENCY_MS). */
  toolLatencyMs?: number;
  /** Default: $WORKFLOW_BUNDLE_PATH (pre-bundled by the test runner): a worker starts in a second or two. */
  workflowBundlePath?: string;
  /** More variables (WORKER_MAX_CONCURRENT_ACTIVITIES, …). */
  env?: Record<string, string>;
  /** How long to wait for "Worker ready". Default 60 s (two cores shared with a dev server and other tests). */
  readyTimeoutMs?: number;
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

/** Starts `workers/main.ts` as a child process and resolves once it printed its "Worker ready" line. */
export async function startWorkerProcess(options: WorkerProcessOptions): Promise<WorkerProcess> {
  const address = options.temporalAddress ?? process.env.TEMPORAL_ADDRESS;
  if (!address) throw new Error('startWorkerProcess: no temporalAddress and no $TEMPORAL_ADDRESS');
  const bundle = options.workflowBundlePath ?? process.env.WORKFLOW_BUNDLE_PATH;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TEMPORAL_ADDRESS: address,
    TEMPORAL_NAMESPACE: options.namespace ?? process.env.TEMPORAL_NAMESPACE ?? 'default',
    TEMPORAL_TASK_QUEUE: options.taskQueue,
    ANTHROPIC_BASE_URL: options.anthropicBaseUrl,
    TOOL_EXECUTION_LOG: options.executionLog,
    TOOL_LATENCY_MS: String(options.toolLatencyMs ?? 0),
    ...(bundle && { WORKFLOW_BUNDLE_PATH: bundle }),
    ...options.env,
  };
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER_MAIN], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  alive.add(child);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // Never leave a worker behind us, whatever way the test process ends.
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

  const timeoutMs = options.readyTimeoutMs ?? 60_000;
  let timer: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      if (lines.some((line) => line.startsWith('Worker ready'))) return resolve();
      onLine = (line) => {
        if (line.startsWith('Worker ready')) resolve();
      };
      void exited.then(({ code, signal }) =>
        reject(new Error(`The worker process exited before it was ready (${signal ?? `exit code ${code}`}):\n${tail()}`)),
      );
      timer = setTimeout(() => reject(new Error(`The worker process was not ready within ${timeoutMs} ms:\n${tail()}`)), timeoutMs);
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
    async stop(stopTimeoutMs = 15_000) {
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
