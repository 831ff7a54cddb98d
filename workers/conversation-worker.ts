// Builds a worker that runs conversations: the workflow bundle, the model activity, one activity per tool, and the
// MCP activities (listing and calling the tools of the MCP servers the worker is configured with).
import type Anthropic from '@anthropic-ai/sdk';
import { type InjectedSinks, type NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { LiveFeedSinks } from '../streaming/live-feed-sinks';
import { createModelActivities } from '../activities/model-activities';
import { createBatchActivities, createBatchWindow } from '../activities/batch-activities';
import { DEFAULT_BATCH_WINDOW_MS } from '../common/batch-mode';
import { createToolActivities, type ToolActivityOptions } from '../activities/tool-activities';
import { describeTool, type ToolDefinition } from '../activities/tool-definition';
import { ModelContextCache } from '../activities/model-context-cache';
import { createSummariseActivity } from '../activities/summarise-activity';
import { createCountTokensActivity } from '../activities/count-tokens-activity';
import { createModelPricesActivity, describeToolsWithPrices } from '../activities/model-prices-activity';
import { createCheckAnswerActivity } from '../activities/check-answer-activity';
import type { ModelPriceTable } from '../common/pricing';
import { createMcpActivities, type McpActivityOptions } from '../activities/mcp/mcp-activities';
import { McpClientPool } from '../activities/mcp/mcp-client-pool';
import { McpToolSets } from '../activities/mcp/mcp-tool-sets';
import { mcpToolsQuery } from '../common/mcp';
import { modelContextQuery } from '../common/workflow-messages';
import { DEFAULT_SHUTDOWN_GRACE_TIME } from './config';
import { prebuiltWorkflowBundle, SHARED_WORKFLOW_MODULES, WORKFLOWS_PATH } from './workflow-bundles';
import { workerDataConverter } from './worker-data-converter';
import type { LiveRelay } from '../streaming/worker/live-relay';
import { loadDataConverter } from '@temporalio/common/lib/internal-non-workflow';
import type { Tracing } from '../tracing/tracing-sdk';
import { FleetRateLimiter, scopeOf } from '../activities/fleet-rate-limiter';
import { capsInDimensions, type RateLimitOptions } from './rate-limit-config';

/**
 * What createConversationWorker needs: a connection, the task queue the conversations run on, the Anthropic client,
 * and the tools; everything else has a default.
 * @example
 * const worker = await createConversationWorker({
 *   connection: await NativeConnection.connect({ address: 'localhost:7233' }),
 *   namespace: 'default',
 *   taskQueue: 'conversations',
 *   anthropic: createAnthropic({ ANTHROPIC_API_KEY: process.env.ANTHROPIC_API_KEY }),
 *   tools: [getTickerSymbol, getCurrentStockPrice],
 * });
 * await worker.run();
 */
export interface ConversationWorkerOptions {
  /** The worker's connection to the Temporal server (`NativeConnection.connect`). */
  connection: NativeConnection;
  /** @example 'default' */
  namespace: string;
  /**
   * The task queue the conversations are started on (the client's `taskQueue`).
   * @example 'conversations'
   */
  taskQueue: string;
  /** The Messages API client every model call goes through: createAnthropic makes one with the SDK's retries off. */
  anthropic: Anthropic;
  /** The tools this worker runs, each as an activity of its own (defineTool). */
  tools: readonly ToolDefinition[];
  /**
   * How tool results are bounded before they go into the history: `maxOutputChars` (text of one result or error) and,
   * for MCP tools, `maxImageChars` (base64 characters of images in one result).
   * @default { maxOutputChars: 100_000, maxImageChars: 300_000 }
   */
  toolOptions?: ToolActivityOptions & Pick<McpActivityOptions, 'maxImageChars'>;
  /**
   * The MCP servers this worker may start or call (activities/mcp/mcp-server-config.ts). The caller owns the pool:
   * close it once the worker has stopped (runWorker does).
   * @default none: a conversation that names `mcpServers` finds none of them on this worker
   */
  mcp?: McpClientPool;
  /**
   * A pre-built workflow bundle. Default: the one shipped in the package's dist/workflow-bundles/ that matches the
   * data converter (workflow-bundles.ts); without one (a checkout run through tsx) the workflows are bundled at start.
   */
  workflowBundlePath?: string;
  /**
   * Temporal's worker tuning, passed on as is; `maxEagerActivityReservationsPerWorkflowTask: 0` turns eager activities
   * off. @default Temporal's own defaults
   */
  tuning?: Pick<
    WorkerOptions,
    | 'maxConcurrentActivityTaskExecutions'
    | 'maxEagerActivityReservationsPerWorkflowTask'
    | 'maxConcurrentWorkflowTaskExecutions'
    | 'maxCachedWorkflows'
    | 'maxConcurrentLocalActivityExecutions'
  >;
  /**
   * E.g. codec/data-converter.ts encryptingDataConverter(keys). The worker completes it (worker-data-converter.ts:
   * the lenient payload converter, a bounded failure converter, codecs that mark what they cannot decode); a pre-built
   * `workflowBundlePath` must have been bundled with the same converter paths (the shipped bundles are).
   * @default Temporal's JSON payloads, unencrypted
   */
  dataConverter?: WorkerOptions['dataConverter'];
  /** Worker interceptors, e.g. an activity interceptor that logs or slows every tool (the test rigs do). */
  interceptors?: WorkerOptions['interceptors'];
  /**
   * What the worker's copy of the conversations' transcripts may hold, in bytes.
   * @default 268_435_456 (256 MiB)
   */
  modelContextCacheBytes?: number;
  /**
   * The largest model reply a call may return, in bytes of JSON; a larger one fails its turn, billed and not retried
   * (activities/reply-size-limit.ts). Under Temporal's 2 MiB payload limit.
   * @default 1_500_000
   */
  maxModelReplyBytes?: number;
  /**
   * Batch mode (docs/batches.md): how long a model call waits, at most, for other calls of this worker to share its
   * Message Batch; a conversation's `batch: { windowMs }` picks its own. WORKER_BATCH_WINDOW_MS in runWorker.
   * @default 2_000
   * @example 5_000
   */
  batchWindowMs?: number;
  /**
   * Model prices (USD per million tokens) over the published ones (common/pricing.ts); MODEL_PRICES in runWorker.
   * @default the published prices (PUBLISHED_PRICES)
   * @example { 'my-proxy-model': { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3 } }
   */
  modelPrices?: ModelPriceTable;
  /**
   * How long running activities may finish after shutdown begins (SIGTERM).
   * @default '30 seconds'
   */
  shutdownGraceTime?: WorkerOptions['shutdownGraceTime'];
  /**
   * The fleet's rate limiter (docs/rate-limits.md): model calls reserve their cost with the scope's limiter workflow,
   * which this worker runs too. runWorker turns it on unless ANTHROPIC_RATE_LIMITER=off.
   * @default off here: calls go out as they come
   */
  rateLimits?: RateLimitOptions;
  /**
   * OpenTelemetry tracing (tracing/startTracing): spans for the workflow, its activities and each model and tool call.
   * A pre-built `workflowBundlePath` must then include the OpenTelemetry workflow interceptors (the `-traced` bundles do).
   * @default off
   */
  tracing?: Pick<Tracing, 'workerOptions'>;
  /**
   * Where streamed replies go to their readers (LiveRelay.start()): straight from this worker, not through the Temporal
   * server. Without one, readers poll the replies from the calls' heartbeats. The caller owns it: close it once the
   * worker has stopped (runWorker does).
   * @default none: readers poll the heartbeats
   */
  liveRelay?: LiveRelay;
  /**
   * This worker's Worker Deployment version (docs/upgrading.md): its conversations are pinned to the build that began
   * each run, and move to the deployment's current build at their next continue-as-new. Absent: versioning off, any
   * worker of the task queue takes any task.
   */
  deployment?: WorkerDeployment;
}

/** The feed sink of a worker without a live relay: its workflows call it all the same. */
export const NO_LIVE_FEED: InjectedSinks<LiveFeedSinks> = {
  liveFeed: { published: { fn: () => undefined }, detached: { fn: () => undefined } },
};

/** The shortest gap between two heartbeats the SDK lets through: the live reply's refresh interval at best. */
export const LIVE_HEARTBEAT_THROTTLE = '50 milliseconds';

/** A Worker Deployment version: the deployment (one per service and task queue) and this build's id in it. */
export interface WorkerDeployment {
  name: string;
  buildId: string;
  /**
   * `pinned` (default): each run stays on the build that began it, never meets another build's code, and a rollback
   * moves none of it; `auto-upgrade`: runs move to the current build at their next workflow task, so every change must
   * replay older histories (`patched()`, `replay-check`), and old builds can stop as soon as their tasks in flight end.
   */
  behavior?: 'pinned' | 'auto-upgrade';
}

/**
 * The worker's `workerDeploymentOptions`: every workflow it runs (conversations, the tool catalog) pinned by default,
 * so a run never meets another build's code mid-run; conversations move on at continue-as-new (workflows/conversation.ts).
 */
export function deploymentOptions({ name, buildId, behavior = 'pinned' }: WorkerDeployment) {
  return {
    version: { deploymentName: name, buildId },
    useWorkerVersioning: true as const,
    defaultVersioningBehavior: behavior === 'pinned' ? ('PINNED' as const) : ('AUTO_UPGRADE' as const),
  };
}

export async function createConversationWorker(options: ConversationWorkerOptions): Promise<Worker> {
  const { tools } = options;
  const dataConverter = workerDataConverter(options.dataConverter);
  const converter = loadDataConverter(dataConverter);
  const bundle = options.workflowBundlePath ?? prebuiltWorkflowBundle(dataConverter, undefined, !!options.tracing);
  // Encrypted payloads (a codec) keep content off spans, whatever was asked.
  const traced = options.tracing?.workerOptions(
    options.interceptors,
    (options.dataConverter?.payloadCodecs?.length ?? 0) > 0,
  );
  // The cache reads a transcript it lacks through the worker's own client (only ever called once the worker runs).
  const cache = new ModelContextCache(
    async ({ workflowId, runId }, length) =>
      worker.client!.workflow.getHandle(workflowId, runId).query(modelContextQuery, { to: length }),
    options.modelContextCacheBytes,
  );
  const mcpToolSets = new McpToolSets(async ({ workflowId, runId }) =>
    worker.client!.workflow.getHandle(workflowId, runId).query(mcpToolsQuery),
  );
  const toolActivities = createToolActivities(tools, options.toolOptions);
  const prices = createModelPricesActivity(options.modelPrices);
  const rateLimits = options.rateLimits;
  const rateLimiter =
    rateLimits && rateLimits.limiter !== 'off'
      ? new FleetRateLimiter({
          scope: rateLimits.scope ?? scopeOf(options.anthropic.baseURL, options.anthropic.apiKey ?? undefined),
          taskQueue: options.taskQueue,
          client: () => worker.client!,
          share: rateLimits.share ?? 1,
          caps: capsInDimensions(rateLimits.limits),
        })
      : undefined;
  const worker: Worker = await Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    ...(options.deployment && { workerDeploymentOptions: deploymentOptions(options.deployment) }),
    ...(bundle
      ? { workflowBundle: { codePath: bundle } }
      : { workflowsPath: WORKFLOWS_PATH, bundlerOptions: { preloadModules: SHARED_WORKFLOW_MODULES } }),
    activities: {
      ...toolActivities,
      ...describeToolsWithPrices(toolActivities.describeTools, prices.modelPrices),
      ...createMcpActivities(options.mcp ?? new McpClientPool([]), mcpToolSets, options.toolOptions),
      ...createModelActivities({
        anthropic: options.anthropic,
        tools: tools.map(describeTool),
        cache,
        mcpToolSets,
        ...(options.liveRelay && { relay: { relay: options.liveRelay, converter } }),
        ...(options.maxModelReplyBytes !== undefined && { maxReplyBytes: options.maxModelReplyBytes }),
        ...(rateLimiter && { rateLimiter }),
      }),
      ...createBatchActivities({
        anthropic: options.anthropic,
        tools: tools.map(describeTool),
        cache,
        mcpToolSets,
        window: createBatchWindow(options.anthropic, options.batchWindowMs ?? DEFAULT_BATCH_WINDOW_MS),
        ...(options.maxModelReplyBytes !== undefined && { maxReplyBytes: options.maxModelReplyBytes }),
      }),
      ...createSummariseActivity({ anthropic: options.anthropic, tools: tools.map(describeTool), cache, mcpToolSets }),
      ...createCountTokensActivity({
        anthropic: options.anthropic,
        tools: tools.map(describeTool),
        cache,
        mcpToolSets,
      }),
      ...prices,
      ...createCheckAnswerActivity(),
    },
    // Pollers scale with the backlog: a burst of new conversations is picked up without starving running ones.
    workflowTaskPollerBehavior: { type: 'autoscaling' },
    activityTaskPollerBehavior: { type: 'autoscaling' },
    // On SIGTERM running activities get this long to finish before they are cancelled (and retried elsewhere).
    shutdownGraceTime: options.shutdownGraceTime ?? DEFAULT_SHUTDOWN_GRACE_TIME,
    // A streaming model call heartbeats the reply so far (LiveReplyHeartbeat) at its own pace; by default the SDK
    // would send only one heartbeat per 0.8 × the heartbeat timeout. Activities that heartbeat rarely are unaffected.
    maxHeartbeatThrottleInterval: LIVE_HEARTBEAT_THROTTLE,
    ...options.tuning,
    ...(options.interceptors && { interceptors: options.interceptors }),
    ...(traced && traced),
    // The conversations' log events, to their readers on the relay (streaming/worker/live-feed.ts); dropped without one.
    sinks: { ...traced?.sinks, ...(options.liveRelay?.feedSinks(converter) ?? NO_LIVE_FEED) },
    dataConverter,
  });
  return worker;
}
