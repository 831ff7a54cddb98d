// A conversation test environment for a service's own tests: its tools on a real worker (on a task queue of its own),
// a real Temporal server (the one at TEMPORAL_ADDRESS when it answers, else a dev server started here), the local
// Messages API server that the worker's Anthropic SDK talks to, and a client that knows the tools. Script the model's
// replies with `messagesApi.script(…)`, talk through `conversations` (`conversations.conversationUrl(id)`: the Web UI
// link, when the server's UI is known), and `close()` at the end: it deletes the conversations the environment's client
// started (on a reused server, the next run may use the same fixed ids). MCP servers as a worker configures them; the
// SDK's logs at WARN unless asked otherwise.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection, isGrpcServiceError, type WorkflowClientInterceptor } from '@temporalio/client';
import {
  bundleWorkflowCode,
  DefaultLogger,
  type LogLevel,
  NativeConnection,
  Runtime,
  type Worker,
} from '@temporalio/worker';
import { LiveRelay, type LiveRelayOptions } from '../streaming/worker/live-relay';
import { McpClientPool } from '../activities/mcp/mcp-client-pool';
import { type McpServersInput, parseMcpServers } from '../activities/mcp/mcp-server-config';
import type { ToolDefinition } from '../activities/tool-definition';
import { ConversationClient } from '../client/conversation-client';
import { createAnthropic } from '../workers/anthropic-client';
import { type ConversationWorkerOptions, createConversationWorker } from '../workers/conversation-worker';
import { conversationBundleOptions, prebuiltWorkflowBundle } from '../workers/workflow-bundles';
import { connectOrStartDevServer, type DevServer, type DevServerOptions } from './dev-server';
import { startMessagesApi } from './messages-api/server';
import type { MessagesApi, MessagesApiOptions } from './messages-api/types';

/**
 * What startConversationTestEnv runs: the tools under test, and how its local Messages API server, dev server and
 * worker are set up.
 * @example
 * const env = await startConversationTestEnv({ tools: [getTickerSymbol], messagesApi: { tokenDelayMs: 5 } });
 */
export interface ConversationTestEnvOptions {
  /** The tools under test: the worker runs them, the client accepts their names. */
  tools: readonly ToolDefinition[];
  /**
   * The local Messages API server's options.
   * @default {} (127.0.0.1, a free port, no latency, each reply at once)
   */
  messagesApi?: MessagesApiOptions;
  /**
   * For the dev server started when TEMPORAL_ADDRESS is not set (or does not answer): `{ port: 7233, uiPort: 8233 }`
   * for fixed ports, `dbFile` to keep its database.
   * @default {} (free ports, a temporary database)
   */
  devServer?: DevServerOptions;
  /**
   * How the worker bounds tool results (createConversationWorker's `toolOptions`).
   * @default { maxOutputChars: 100_000, maxImageChars: 300_000 }
   */
  toolOptions?: ConversationWorkerOptions['toolOptions'];
  /**
   * Keep the conversations when the environment closes (to look at them in the Web UI). Otherwise `close()` deletes
   * those its client started and any other on its task queue, so that a later run on the same server (TEMPORAL_ADDRESS)
   * can use the same ids: an id names one conversation for ever, and a conversation left open on this run's task
   * queue would never be answered.
   * @default false
   */
  keepConversations?: boolean;
  /**
   * MCP servers the worker may start or reach, by name, as a worker's MCP_SERVERS configures them; conversations pick
   * them with `mcpServers`.
   * @default none
   * @example { memory: { command: 'npx', args: ['@modelcontextprotocol/server-memory'] } }
   */
  mcpServers?: McpServersInput;
  /**
   * What the Temporal SDK logs, when this process has not set up its Runtime yet (a test's output is the test runner's,
   * not the worker's INFO lines). The first environment of a process decides.
   * @default 'WARN'
   */
  logLevel?: LogLevel;
  /**
   * Streamed replies go from the worker to readers through its live relay, as with runWorker (`true`: on a free port
   * of 127.0.0.1); `{ port, host }` where it listens (e.g. a fixed port a reader in another process reaches);
   * false: readers poll them from heartbeats through Temporal, as readers that cannot reach a worker do.
   * @default true
   */
  liveRelay?: boolean | LiveRelayOptions;
}

export interface ConversationTestEnv {
  /** The local Messages API server: script replies and faults, read the requests the worker sent. */
  messagesApi: MessagesApi;
  conversations: ConversationClient;
  worker: Worker;
  taskQueue: string;
  temporal: DevServer;
  /**
   * Deletes the conversations the environment started (unless `keepConversations`), stops the worker, closes the
   * connections and the Messages API server, and stops a dev server started here.
   */
  close(): Promise<void>;
}

export async function startConversationTestEnv(options: ConversationTestEnvOptions): Promise<ConversationTestEnv> {
  const cleanups: Array<() => Promise<unknown>> = [];
  const close = async (): Promise<void> => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  };
  quietRuntime(options.logLevel ?? 'WARN');
  try {
    const temporal = await connectOrStartDevServer(options.devServer);
    cleanups.push(() => temporal.stop());
    const messagesApi = await startMessagesApi(options.messagesApi);
    cleanups.push(() => messagesApi.close());
    const taskQueue = `test-${randomUUID()}`;
    const workerConnection = await NativeConnection.connect({ address: temporal.address });
    cleanups.push(() => workerConnection.close());
    const mcpServers = options.mcpServers ? parseMcpServers(options.mcpServers, process.env) : [];
    const mcp = new McpClientPool(mcpServers);
    cleanups.push(() => mcp.close());
    const liveRelay =
      options.liveRelay === false
        ? undefined
        : await LiveRelay.start(options.liveRelay === true ? {} : (options.liveRelay ?? {}));
    if (liveRelay) cleanups.push(() => liveRelay.close());
    const workflowBundlePath = await workflowBundleOnce();
    const worker = await createConversationWorker({
      ...(workflowBundlePath && { workflowBundlePath }),
      connection: workerConnection,
      namespace: temporal.namespace,
      taskQueue,
      anthropic: createAnthropic({ ANTHROPIC_BASE_URL: messagesApi.url }),
      tools: options.tools,
      mcp,
      ...(options.toolOptions && { toolOptions: options.toolOptions }),
      ...(liveRelay && { liveRelay }),
    });
    const running = worker.run();
    cleanups.push(async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    });
    const connection = await Connection.connect({ address: temporal.address });
    cleanups.push(() => connection.close());
    const started = new Set<string>();
    const client = new Client({
      connection,
      namespace: temporal.namespace,
      interceptors: { workflow: [recordStarts(started)] },
    });
    if (!options.keepConversations) cleanups.push(() => deleteConversations(client, taskQueue, started));
    const conversations = new ConversationClient({
      client,
      taskQueue,
      tools: options.tools.map((tool) => tool.name),
      mcpServers: mcpServers.map((server) => server.name),
      ...(process.env.TEMPORAL_UI_URL || temporal.uiUrl
        ? { webUiUrl: process.env.TEMPORAL_UI_URL || temporal.uiUrl }
        : {}),
    });
    return { messagesApi, conversations, worker, taskQueue, temporal, close };
  } catch (error) {
    await close();
    throw error;
  }
}

let bundledOnce: Promise<string> | undefined;

/**
 * Undefined when the package ships its pre-built bundle (the worker takes it). Otherwise (a checkout run through tsx)
 * the workflow code bundled once per process into a temporary file, rather than by every environment's worker at its
 * start: a bundle costs seconds of CPU, and a service's test file often starts several environments.
 */
function workflowBundleOnce(): Promise<string | undefined> {
  if (prebuiltWorkflowBundle()) return Promise.resolve(undefined);
  bundledOnce ??= (async () => {
    const { code } = await bundleWorkflowCode({ ...conversationBundleOptions(), logger: new DefaultLogger('WARN') });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'conversation-test-env-'));
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'workflow-bundle.js');
    fs.writeFileSync(file, code);
    return file;
  })();
  bundledOnce.catch(() => (bundledOnce = undefined)); // a failed bundle is tried again by the next environment
  return bundledOnce;
}

/** The SDK's Runtime with a logger at `level`, unless this process installed one already (it is installed once). */
function quietRuntime(level: LogLevel): void {
  try {
    Runtime.install({
      logger: new DefaultLogger(level),
      telemetryOptions: {
        logging: { filter: { core: level === 'TRACE' ? 'DEBUG' : level, other: 'ERROR' }, forward: {} },
      },
    });
  } catch {
    // Installed already (by the service's own setup, or an earlier environment): theirs stands.
  }
}

/** Notes the id of every workflow the client starts (or tries to: a start that timed out may have happened). */
function recordStarts(ids: Set<string>): WorkflowClientInterceptor {
  return {
    start: (input, next) => (ids.add(input.options.workflowId), next(input)),
    startWithDetails: (input, next) => (ids.add(input.options.workflowId), next(input)),
    signalWithStart: (input, next) => (ids.add(input.options.workflowId), next(input)),
    startUpdateWithStart: (input, next) => (ids.add(input.workflowStartOptions.workflowId), next(input)),
  };
}

/** How long close() waits for the server to have deleted the open ones: until then their ids are not free. */
const DELETE_WAIT_MS = 10_000;

/**
 * Deletes the workflows started by the environment's client and those on its task queue (started by another client of
 * the test). An open one is terminated and deleted at once, and waited for: its id is free when close() returns. The
 * server deletes a closed one only once its visibility record is settled (about 30 s on a dev server): a run that
 * starts sooner and uses the same id meets `already_started` until then.
 */
async function deleteConversations(client: Client, taskQueue: string, started: ReadonlySet<string>): Promise<void> {
  const ids = new Set(started);
  try {
    for await (const execution of client.workflow.list({ query: `TaskQueue = '${taskQueue}'` })) {
      ids.add(execution.workflowId);
    }
  } catch {
    // Visibility is only a second source; the recorded ids are deleted regardless.
  }
  const { namespace } = client.options;
  const deadline = Date.now() + DELETE_WAIT_MS;
  await Promise.all(
    [...ids].map(async (workflowId) => {
      const handle = client.workflow.getHandle(workflowId);
      const open = await handle.describe().then(
        (description) => description.status.name === 'RUNNING',
        () => false, // never started (or gone already)
      );
      const deleting = client.workflowService.deleteWorkflowExecution({ namespace, workflowExecution: { workflowId } });
      if (
        !(await deleting.then(
          () => open,
          () => false,
        ))
      )
        return;
      while (Date.now() < deadline) {
        if (await handle.describe().then(() => false, isNotFound)) return;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }),
  );
}

function isNotFound(err: unknown): boolean {
  return (err instanceof Error && err.name === 'WorkflowNotFoundError') || (isGrpcServiceError(err) && err.code === 5);
}
