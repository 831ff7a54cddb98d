// replay-check: before a deploy, replays the recent conversation histories of a live namespace against the workflow
// code about to be deployed, and says which would break and why (a determinism error: a change without its
// `patched()` branch). What `claude-temporal-orchestrator replay-check` runs; docs/upgrading.md. A history that replays
// here replays on a worker of that code; one that does not would fail its workflow tasks there (auto-upgrade, or a
// fleet without Worker Deployments) until the old code came back.
import type { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import type { HistoryAndWorkflowId } from '@temporalio/client';
import { DefaultLogger, type ReplayWorkerOptions, Runtime, Worker } from '@temporalio/worker';
import { CONVERSATION_WORKFLOW } from '../common/conversation-types';
import { workerDataConverter } from './worker-data-converter';
import { prebuiltWorkflowBundle, SHARED_WORKFLOW_MODULES, WORKFLOWS_PATH } from './workflow-bundles';

/** By default: the namespace's conversations, most recent first (closed ones too: their code paths are the same). */
export const DEFAULT_REPLAY_CHECK_QUERY = `WorkflowType = '${CONVERSATION_WORKFLOW}'`;
export const DEFAULT_REPLAY_CHECK_MAX = 100;

export interface ReplayCheckOptions {
  /** A client of the namespace to read (TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE in the CLI). */
  client: Client;
  /** A list filter (Temporal's visibility query) that narrows the histories read. Default: every conversation. */
  query?: string;
  /** At most this many runs are read and replayed, the most recent first. Default 100. */
  maxHistories?: number;
  /**
   * The workflow code to check: a bundle file (what a worker of the new build runs: its WORKFLOW_BUNDLE_PATH or the
   * package's pre-built bundle). Default: the pre-built bundle of this package, else this package's workflows bundled.
   */
  workflowBundlePath?: string;
  /** The data converter the workers use (PAYLOAD_ENCRYPTION_KEYS: encrypted histories). */
  dataConverter?: DataConverter;
}

export interface BrokenHistory {
  workflowId: string;
  runId: string;
  /** The replay's error: for a change without `patched()`, the determinism error naming the command that differs. */
  error: string;
}

export interface ReplayCheckResult {
  /** Runs read and replayed. */
  replayed: number;
  /** Those the code would not replay. */
  broken: BrokenHistory[];
}

/** Replays the recent histories against the code to deploy; `broken` names each run that would not replay, and why. */
export async function replayCheck(options: ReplayCheckOptions): Promise<ReplayCheckResult> {
  const max = options.maxHistories ?? DEFAULT_REPLAY_CHECK_MAX;
  if (!Number.isSafeInteger(max) || max < 1) throw new RangeError('maxHistories must be a whole number from 1 on');
  const dataConverter = workerDataConverter(options.dataConverter);
  const bundle = options.workflowBundlePath ?? prebuiltWorkflowBundle(dataConverter);
  const replayOptions: ReplayWorkerOptions = {
    dataConverter,
    ...(bundle
      ? { workflowBundle: { codePath: bundle } }
      : { workflowsPath: WORKFLOWS_PATH, bundlerOptions: { preloadModules: SHARED_WORKFLOW_MODULES } }),
  };
  const histories = options.client.workflow
    .list({ query: options.query ?? DEFAULT_REPLAY_CHECK_QUERY, pageSize: Math.min(max, 1000) })
    .intoHistories({ concurrency: 5 });
  const broken: BrokenHistory[] = [];
  let replayed = 0;
  for await (const result of Worker.runReplayHistories(replayOptions, firstOf(histories, max))) {
    replayed++;
    if (result.error)
      broken.push({ workflowId: result.workflowId, runId: result.runId, error: describe(result.error) });
  }
  return { replayed, broken };
}

async function* firstOf(histories: AsyncIterable<HistoryAndWorkflowId>, max: number) {
  let taken = 0;
  for await (const history of histories) {
    yield history;
    if (++taken >= max) return;
  }
}

function describe(error: Error): string {
  const cause = (error as { cause?: unknown }).cause;
  const text = `${error.name}: ${error.message}`;
  return cause instanceof Error && !text.includes(cause.message) ? `${text} (${cause.message})` : text;
}

/**
 * For a process that only checks (the CLI): a replay that breaks logs its whole stack at WARN for every history, and
 * the result says it once. A process that also runs a worker keeps its runtime's logger.
 */
export function quietReplayLogs(): void {
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    // A runtime is installed already (a process that also runs a worker): its logger stays.
  }
}
