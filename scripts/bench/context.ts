// What every section of the bench stands on: the Temporal server and a client, the local Messages API server, the
// workflow bundles (built once per run, so each worker process starts in a second or two instead of bundling on its
// own; the peer's worker bundles its own into the same folder), and worker processes (systems.ts says which), each on
// its own task queue.
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { connectOrStartDevServer, type DevServer } from '../../testing/dev-server';
import { startMessagesApi } from '../../testing/messages-api/server';
import type { MessagesApi, MessagesApiOptions } from '../../testing/messages-api/types';
import { cleanUpOnSignal } from '../script-main';
import { spawnWorker, type WorkerProcess } from '../worker-process';
import { type BenchArgs, parseArgs } from './args';
import { conversationBundleOptions } from '../../workers/workflow-bundles';

export interface Bundles {
  dir: string;
  conversation: string;
  bare: string;
}

async function bundle(options: { workflowsPath: string }, file: string): Promise<string> {
  const { code } = await bundleWorkflowCode({ ...options, logger: new DefaultLogger('WARN') });
  await fsp.writeFile(file, code);
  return file;
}

/** Which bundles to build: the conversation's, also the floor's, or none (a worker in this process bundles its own). */
type BundleChoice = 'conversation' | 'with-bare' | 'none';

/** `conversation`: a bundle of the conversation workflow built already (the test runner's), used as it is. */
export async function buildBundles(which: BundleChoice, conversationBundle?: string): Promise<Bundles> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'cto-bench-'));
  const [conversation, bare] = await Promise.all([
    which === 'none'
      ? ''
      : (conversationBundle ?? bundle(conversationBundleOptions(), path.join(dir, 'conversation-bundle.js'))),
    which === 'with-bare'
      ? bundle({ workflowsPath: require.resolve('./bare-workflow.ts') }, path.join(dir, 'bare-bundle.js'))
      : Promise.resolve(''),
  ]);
  return { dir, conversation, bare };
}

export interface BenchContext {
  args: BenchArgs;
  server: DevServer;
  client: Client;
  mock: MessagesApi;
  bundles: Bundles;
  /** performance.now() by which the whole bench should be done (--budget): long runs are cut to fit. */
  budgetEnd: number;
  log(line: string): void;
}

/**
 * Brings up what a bench stands on: a Temporal server (TEMPORAL_ADDRESS reused when it answers, else a dev server)
 * and the workflow bundles at once, then the local Messages API server and a client. `close` (also run on Ctrl-C)
 * takes it all down again.
 */
export async function openBench(options: {
  log: (line: string) => void;
  /** Default: the bench's defaults. */
  args?: BenchArgs;
  /** Default: the conversation's. */
  bundles?: BundleChoice;
  messagesApi?: MessagesApiOptions;
}): Promise<{ ctx: BenchContext; close(): Promise<void> }> {
  const { log, args = parseArgs([])! } = options;
  const parts: { server?: DevServer; bundles?: Bundles; mock?: MessagesApi; connection?: Connection } = {};
  let closed: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closed ??= (async () => {
      await parts.connection?.close().catch(() => undefined);
      await parts.mock?.close().catch(() => undefined);
      await parts.server?.stop().catch((err: unknown) => log(`could not stop the dev server: ${String(err)}`));
      if (parts.bundles) await fsp.rm(parts.bundles.dir, { recursive: true, force: true });
    })());
  cleanUpOnSignal(close, log);
  try {
    const [server, bundles] = await Promise.allSettled([
      connectOrStartDevServer({ log }),
      buildBundles(options.bundles ?? 'conversation'),
    ]);
    if (server.status === 'fulfilled') parts.server = server.value;
    if (bundles.status === 'fulfilled') parts.bundles = bundles.value;
    if (server.status === 'rejected') throw server.reason;
    if (bundles.status === 'rejected') throw bundles.reason;
    parts.mock = await startMessagesApi(options.messagesApi);
    parts.connection = await Connection.connect({ address: server.value.address });
    const ctx: BenchContext = {
      args,
      server: server.value,
      client: new Client({ connection: parts.connection, namespace: server.value.namespace }),
      mock: parts.mock,
      bundles: bundles.value,
      budgetEnd: performance.now() + args.budgetMs,
      log,
    };
    log(
      `Temporal ${server.value.address} (${server.value.process ? `dev server pid ${server.value.process.pid}` : 'reused'}); Messages API ${parts.mock.url}`,
    );
    return { ctx, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** A bench command's progress on stderr: `[name   12 s] line`, the seconds since it started. */
export function progressLog(name: string, started = Date.now()): (line: string) => void {
  return (line) =>
    void process.stderr.write(`[${name} ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);
}

/** Opens the bench (openBench), lends it to `use`, and closes it whatever happens. */
export async function withBench<T>(
  options: Parameters<typeof openBench>[0],
  use: (ctx: BenchContext) => Promise<T>,
): Promise<T> {
  const { ctx, close } = await openBench(options);
  try {
    return await use(ctx);
  } finally {
    await close();
  }
}

/**
 * Writes `<dir>/<name>-<started>.<ext>` for each extension of `files` (dir relative to the repository's root), and
 * with `latest` also `<dir>/latest.<ext>`; returns what it wrote, relative to the working directory.
 */
export async function writeResults(
  dir: string,
  name: string,
  started: Date,
  files: Record<string, string>,
  latest = false,
): Promise<string> {
  const out = path.resolve(__dirname, '..', '..', dir);
  await fsp.mkdir(out, { recursive: true });
  const stamp = started.toISOString().replace(/[:.]/g, '-');
  const written: string[] = [];
  for (const [ext, text] of Object.entries(files)) {
    written.push(path.join(out, `${name}-${stamp}.${ext}`));
    await fsp.writeFile(written.at(-1)!, text);
    if (latest) await fsp.writeFile(path.join(out, `latest.${ext}`), text);
  }
  return written.map((file) => path.relative(process.cwd(), file)).join(' and ');
}

/** Passed through from the bench's environment to every worker, so a tuning can be tried without code changes. */
const TUNING_VARIABLES = [
  'WORKER_MAX_CONCURRENT_ACTIVITIES',
  'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS',
  'WORKER_MAX_CACHED_WORKFLOWS',
  'NODE_OPTIONS',
  'UV_THREADPOOL_SIZE',
];

/** A worker process (its own, so its memory and CPU can be read from /proc/<pid> without the bench's mixed in). */
export function startBenchWorker(
  ctx: BenchContext,
  entry: string,
  taskQueue: string,
  env: Record<string, string>,
  output?: (line: string) => void,
): Promise<WorkerProcess> {
  const tuning = Object.fromEntries(
    TUNING_VARIABLES.flatMap((name) => (process.env[name] ? [[name, process.env[name]]] : [])),
  );
  return spawnWorker({
    entry,
    env: {
      ...tuning,
      TEMPORAL_ADDRESS: ctx.server.address,
      TEMPORAL_NAMESPACE: ctx.server.namespace,
      TEMPORAL_TASK_QUEUE: taskQueue,
      ...env,
    },
    readyTimeoutMs: 120_000,
    stopTimeoutMs: 20_000,
    ...(ctx.args.profileDir && { profileDir: ctx.args.profileDir }),
    ...(output && { output }),
  });
}

/** Calls `each` on every item, `lanes` at a time. */
export async function inLanes<T>(items: readonly T[], lanes: number, each: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) await each(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(lanes, items.length) }, lane));
}

/** Terminates open workflows (conversations stay open awaiting the next message), a few at a time; errors ignored. */
export function terminateAll(client: Client, workflowIds: readonly string[]): Promise<void> {
  return inLanes(workflowIds, 50, async (id) => {
    await client.workflow
      .getHandle(id)
      .terminate('benchmark finished')
      .catch(() => undefined);
  });
}
