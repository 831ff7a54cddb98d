// What an end-to-end test stands on: the real dev server the test runner started (TEMPORAL_ADDRESS), a local
// Messages API server, a real worker on a task queue of its own, and the typed client.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import {
  type ActivityInterceptorsFactory,
  DefaultLogger,
  NativeConnection,
  Runtime,
  type Worker,
} from '@temporalio/worker';
import { ConversationClient } from '../../client/conversation-client';
import type { ToolActivityOptions } from '../../activities/tool-activities';
import type { ToolDefinition } from '../../activities/tool-definition';
import { LiveRelay, type LiveRelayOptions } from '../../streaming/worker/live-relay';
import { McpClientPool } from '../../activities/mcp/mcp-client-pool';
import { type McpServersInput, parseMcpServers } from '../../activities/mcp/mcp-server-config';
import { demoTools } from '../../testing/demo-tools';
import { createAnthropic } from '../../workers/anthropic-client';
import { createConversationWorker, NO_LIVE_FEED, type WorkerDeployment } from '../../workers/conversation-worker';
import { bundleVariantFor } from '../../workers/workflow-bundles';
import { type ExecutionLogLine, readExecutions, toolInstrumentation } from '../../scripts/tool-execution-log';
import { startMessagesApi } from '../../testing/messages-api/server';
import type { RateLimits } from '../../testing/messages-api/rate-limits';
import type { MessagesApi, RecordedRequest } from '../../testing/messages-api/types';
import { sharedWorkflowBundle } from './shared-workflow-bundle';

// Expected failures (a tool raising TickerNotFound, a scripted 429) would otherwise fill the output with warnings.
Runtime.install({ logger: new DefaultLogger('ERROR') });

export const temporalAddress = process.env.TEMPORAL_ADDRESS ?? 'localhost:7233';
export const namespace = process.env.TEMPORAL_NAMESPACE ?? 'default';

export { readExecutions };

export interface Harness {
  mock: MessagesApi;
  worker: Worker;
  conversations: ConversationClient;
  client: Client;
  taskQueue: string;
  /** The worker's MCP servers (none unless `mcpServers` was given). */
  mcp: McpClientPool;
  /** The worker's live relay, when `liveRelay` asked for one. */
  relay?: LiveRelay;
  /** JSON lines the tools append per execution (start/finish/error). */
  executionLog: string;
  /** The execution log's lines, of one conversation (and one tool) when given. */
  executions(workflowId?: string, tool?: string): ExecutionLogLine[];
  close(): Promise<void>;
}

export interface HarnessOptions {
  tools?: readonly ToolDefinition[];
  toolOptions?: ToolActivityOptions & { maxImageChars?: number };
  /** MCP servers the worker is configured with, as a worker's configuration writes them (`${VAR}` from process.env). */
  mcpServers?: McpServersInput;
  latencyMs?: number;
  /**
   * For the worker and the client (e.g. codec/data-converter.ts). With a failureConverterPath the worker runs the
   * bundle variant built with it, once per test run (shared-workflow-bundle.ts).
   */
  dataConverter?: DataConverter;
  /** The API key the worker's Anthropic client sends (the local server accepts any). Default: none. */
  anthropicApiKey?: string;
  /** The local Messages API's context window, in input tokens (default: its own, 1,000,000). */
  contextWindowTokens?: number;
  /** Every tool output padded to this many characters (scripts/tool-execution-log.ts). */
  toolOutputChars?: number;
  /** A live relay for the worker (default none: readers poll streamed replies from heartbeats, the fallback path). */
  liveRelay?: LiveRelayOptions;
  /**
   * false: the relay serves each call's reply but no conversation's feed (its workflows' events go nowhere), as when a
   * model call runs on another worker than its workflow; readers then follow each call on its own relay address.
   */
  liveFeed?: false;
  /** Another Temporal server (its namespace "default"), e.g. one a test started with its own dynamic configuration. */
  address?: string;
  /** The worker's largest model reply, in bytes (default: the worker's, activities/reply-size-limit.ts). */
  maxModelReplyBytes?: number;
  /** More activity interceptors for the worker, after the tools' instrumentation (e.g. one that fails an activity). */
  activityInterceptors?: ActivityInterceptorsFactory[];
  /** Batch mode: the worker's window (default its own, 2 s) and the local API's batch delay (default its own, 200 ms). */
  batchWindowMs?: number;
  batchDelayMs?: number;
  /** The local API's per-minute rate limits (default none). */
  rateLimits?: RateLimits;
  /** The workflow code the worker runs (another build's bundle: test/support/modified-workflow-bundle.ts). */
  workflowBundlePath?: string;
  /** The worker's Worker Deployment version (workers/conversation-worker.ts); default: none, versioning off. */
  deployment?: WorkerDeployment;
  /** Another harness's task queue: two workers, e.g. of two builds, polling one queue. Default: a queue of its own. */
  taskQueue?: string;
  /** false: no eager activities (every activity through the queue), as WORKER_EAGER_ACTIVITIES=off. Default: on. */
  eagerActivities?: false;
  /** A pause before every tool execution, in ms (heartbeating), as the rig worker's TOOL_LATENCY_MS. Default: none. */
  toolLatencyMs?: number;
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const mock = await startMessagesApi({
    ...(options.latencyMs !== undefined && { latencyMs: options.latencyMs }),
    ...(options.contextWindowTokens !== undefined && { contextWindowTokens: options.contextWindowTokens }),
    ...(options.batchDelayMs !== undefined && { batchDelayMs: options.batchDelayMs }),
    ...(options.rateLimits !== undefined && { rateLimits: options.rateLimits }),
  });
  const taskQueue = options.taskQueue ?? `test-${randomUUID()}`;
  const executionLog = join(mkdtempSync(join(tmpdir(), 'tools-')), 'executions.jsonl');
  const address = options.address ?? temporalAddress;
  const serverNamespace = options.address ? 'default' : namespace;
  const workerConnection = await NativeConnection.connect({ address });
  const mcp = new McpClientPool(parseMcpServers(options.mcpServers ?? {}, process.env));
  const relay = options.liveRelay && (await LiveRelay.start(options.liveRelay));
  if (relay && options.liveFeed === false) relay.feedSinks = () => NO_LIVE_FEED;
  const workflowBundlePath = options.workflowBundlePath ?? (await harnessWorkflowBundle(options.dataConverter));
  const worker = await createConversationWorker({
    mcp,
    connection: workerConnection,
    namespace: serverNamespace,
    taskQueue,
    anthropic: createAnthropic({ ANTHROPIC_BASE_URL: mock.url, ANTHROPIC_API_KEY: options.anthropicApiKey }),
    tools: options.tools ?? demoTools,
    ...(options.toolOptions && { toolOptions: options.toolOptions }),
    interceptors: {
      activity: [
        toolInstrumentation({
          executionLog,
          ...(options.toolOutputChars !== undefined && { outputChars: options.toolOutputChars }),
          ...(options.toolLatencyMs !== undefined && { latencyMs: options.toolLatencyMs }),
        }),
        ...(options.activityInterceptors ?? []),
      ],
    },
    ...(workflowBundlePath && { workflowBundlePath }),
    ...(options.dataConverter && { dataConverter: options.dataConverter }),
    ...(relay && { liveRelay: relay }),
    ...(options.maxModelReplyBytes !== undefined && { maxModelReplyBytes: options.maxModelReplyBytes }),
    ...(options.batchWindowMs !== undefined && { batchWindowMs: options.batchWindowMs }),
    ...(options.deployment && { deployment: options.deployment }),
    ...(options.eagerActivities === false && { tuning: { maxEagerActivityReservationsPerWorkflowTask: 0 } }),
  });
  const running = worker.run();
  const connection = await Connection.connect({ address });
  const client = new Client({
    connection,
    namespace: serverNamespace,
    ...(options.dataConverter && { dataConverter: options.dataConverter }),
  });
  const conversations = new ConversationClient({
    client,
    taskQueue,
    tools: (options.tools ?? demoTools).map((t) => t.name),
    mcpServers: mcp.serverNames,
  });
  return {
    mock,
    worker,
    conversations,
    client,
    taskQueue,
    mcp,
    ...(relay && { relay }),
    executionLog,
    executions: (workflowId, tool) => readExecutions(executionLog, workflowId, tool),
    async close() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running.catch(() => undefined);
      await relay?.close();
      await mcp.close();
      await workerConnection.close();
      await connection.close();
      await mock.close();
    },
  };
}

/** The blocks of a request's last message, which must be the user's (tool results, in the native protocol). */
export function lastUserBlocks(request: RecordedRequest) {
  const last = request.body.messages.at(-1);
  assert.equal(last.role, 'user');
  return last.content as { type: string; tool_use_id?: string; content?: string; is_error?: boolean }[];
}

/** A prompt no other test uses, so the local server's script for it cannot answer anyone else. */
export function uniquePrompt(text: string): string {
  return `${text} [${randomUUID().slice(0, 8)}]`;
}

/** Per activity attempt the history shows (the last of each activity): its type, which worker ran it, and why the one before ended. */
export async function attemptsOf(client: Client, workflowId: string) {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const types = new Map<string, string>();
  const attempts: {
    type: string;
    attempt: number;
    identity: string;
    lastFailure?: string;
    lastFailureType?: string;
  }[] = [];
  for (const event of history.events ?? []) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) types.set(String(event.eventId), scheduled.activityType?.name ?? '');
    const started = event.activityTaskStartedEventAttributes;
    if (!started) continue;
    const failure = started.lastFailure;
    attempts.push({
      type: types.get(String(started.scheduledEventId)) ?? '?',
      attempt: started.attempt ?? 1,
      identity: started.identity ?? '',
      ...(failure?.message && { lastFailure: failure.message }),
      ...(failure && {
        lastFailureType: failure.applicationFailureInfo?.type ?? (failure.timeoutFailureInfo ? 'timeout' : undefined),
      }),
    });
  }
  return attempts;
}

/** The activities of a workflow's history, in order: type, summary, input and result, as the Web UI shows them. */
export async function activitiesOf(client: Client, workflowId: string) {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const converter = client.options.loadedDataConverter.payloadConverter;
  const scheduled = new Map<
    string,
    { type: string; summary: string | undefined; input: unknown; result?: unknown; failed?: boolean }
  >();
  const decode = (payloads: { payloads?: unknown[] | null } | null | undefined) =>
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    (payloads?.payloads ?? []).map((p) => converter.fromPayload(p as any));
  for (const event of history.events ?? []) {
    const id = String(event.eventId);
    if (event.activityTaskScheduledEventAttributes) {
      const attrs = event.activityTaskScheduledEventAttributes;
      const summaryPayload = event.userMetadata?.summary;
      scheduled.set(id, {
        type: attrs.activityType?.name ?? '',
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        summary: summaryPayload ? (converter.fromPayload(summaryPayload as any) as string) : undefined,
        input: decode(attrs.input)[0],
      });
    }
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed) {
      const entry = scheduled.get(String(completed.scheduledEventId));
      if (entry) entry.result = decode(completed.result)[0];
    }
    const failed = event.activityTaskFailedEventAttributes ?? event.activityTaskTimedOutEventAttributes;
    if (failed) {
      const entry = scheduled.get(String(failed.scheduledEventId));
      if (entry) entry.failed = true;
    }
  }
  return [...scheduled.values()];
}

/**
 * The run's pre-built bundle (WORKFLOW_BUNDLE_PATH) for the default converters; for others, the variant built with
 * them, shared by the run's test processes. Undefined: the worker bundles at start (a converter no variant has).
 */
async function harnessWorkflowBundle(dataConverter?: DataConverter): Promise<string | undefined> {
  if (!dataConverter?.failureConverterPath && !dataConverter?.payloadConverterPath) {
    return process.env.WORKFLOW_BUNDLE_PATH || undefined;
  }
  const variant = bundleVariantFor(dataConverter);
  return variant && sharedWorkflowBundle(variant);
}
