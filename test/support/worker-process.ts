// The worker as it runs in production: `node --import tsx workers/main.ts`, a child process of its own, configured by
// environment only. Crash tests and the soak script start it, wait for its "Worker ready" line, and end it the hard
// way (SIGKILL: no shutdown hook, no activity completion, no goodbye to the server), just like a machine that dies.
// The process itself is scripts/worker-process.ts; this file turns the options below into the worker's environment.
import { spawnWorker, type WorkerProcess } from '../../scripts/worker-process';

export type { WorkerProcess };

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
  /** Tool outputs padded to this many characters (TOOL_OUTPUT_CHARS). */
  toolOutputChars?: number;
  /** Default: $WORKFLOW_BUNDLE_PATH (pre-bundled by the test runner): a worker starts in a second or two. */
  workflowBundlePath?: string;
  /** Another build's worker (test/support/modified-workflow-bundle.ts): its entry file. Default: this checkout's. */
  entry?: string;
  /** More variables (WORKER_MAX_CONCURRENT_ACTIVITIES, …). */
  env?: Record<string, string>;
  /** How long to wait for "Worker ready". Default 60 s (two cores shared with a dev server and other tests). */
  readyTimeoutMs?: number;
  /** Every line the worker prints, prefixed with its pid (default: kept in a tail only, shown if it fails). */
  output?: (line: string) => void;
}

/** Starts the rigs' worker (scripts/rig-worker.ts) as a child process and resolves once it printed its "Worker ready" line. */
export async function startWorkerProcess(options: WorkerProcessOptions): Promise<WorkerProcess> {
  const address = options.temporalAddress ?? process.env.TEMPORAL_ADDRESS;
  if (!address) throw new Error('startWorkerProcess: no temporalAddress and no $TEMPORAL_ADDRESS');
  const bundle = options.workflowBundlePath ?? process.env.WORKFLOW_BUNDLE_PATH;
  return spawnWorker({
    entry: options.entry ?? 'scripts/rig-worker.ts',
    env: {
      TEMPORAL_ADDRESS: address,
      TEMPORAL_NAMESPACE: options.namespace ?? process.env.TEMPORAL_NAMESPACE ?? 'default',
      TEMPORAL_TASK_QUEUE: options.taskQueue,
      ANTHROPIC_BASE_URL: options.anthropicBaseUrl,
      TOOL_EXECUTION_LOG: options.executionLog,
      TOOL_LATENCY_MS: String(options.toolLatencyMs ?? 0),
      TOOL_OUTPUT_CHARS: String(options.toolOutputChars ?? 0),
      ...(bundle && { WORKFLOW_BUNDLE_PATH: bundle }),
      ...options.env,
    },
    readyTimeoutMs: options.readyTimeoutMs ?? 60_000,
    output: options.output,
  });
}
