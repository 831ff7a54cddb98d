// A worker process configured by environment only (workers/config.ts): what `npm run worker`, the Docker image and
// a service that installs this package run. `runWorker({ tools })` connects, serves until SIGINT/SIGTERM (running
// activities get the shutdown grace time to finish), and closes the connection and its MCP servers. A worker that
// stops taking work without being asked to makes it reject (WorkerStoppedError): exit, and let a supervisor restart.
import { readFileSync } from 'node:fs';
import { IllegalStateError } from '@temporalio/common';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import type { ToolDefinition } from '../activities/tool-definition';
import { McpClientPool } from '../activities/mcp/mcp-client-pool';
import {
  McpConfigError,
  type McpServerConfig,
  type McpServersInput,
  parseMcpServers,
  parseMcpServersJson,
} from '../activities/mcp/mcp-server-config';
import { encryptingDataConverter } from '../codec/data-converter';
import { createAnthropic } from './anthropic-client';
import { LiveRelay } from '../streaming/worker/live-relay';
import { ConfigError, loadConfig, shutdownForceMs, type WorkerConfig } from './config';
import { connectionOptions } from '../client/connection-settings';
import { type ConversationWorkerOptions, createConversationWorker, type WorkerDeployment } from './conversation-worker';
import { prebuiltWorkflowBundle } from './workflow-bundles';
import { runUntilStopped } from './run-until-stopped';
import { searchAttributesAtStart } from './search-attributes-at-start';
import { describeIssues, durationMs } from '../common/options';
import { type ModelPriceTable, modelPriceTableSchema } from '../common/pricing';
import { type TracingSettings, tracingSettings } from '../tracing/tracing-settings';
import { ContentFreeLogger } from '../tracing/content-free-logger';
import type * as TracingSdk from '../tracing/tracing-sdk';
import { type RateLimitOptions, rateLimitOptionsOf } from './rate-limit-config';

/**
 * What runWorker takes besides its environment (config.ts: TEMPORAL_ADDRESS, TEMPORAL_TASK_QUEUE, ANTHROPIC_API_KEY, …).
 * @example
 * await runWorker({ tools: [getTickerSymbol, getCurrentStockPrice] });
 */
export interface RunWorkerOptions {
  /** The tools this worker runs, each as an activity of its own (defineTool). */
  tools: readonly ToolDefinition[];
  /**
   * MCP servers, besides those of MCP_SERVERS / MCP_SERVERS_FILE (`${VAR}` is read from `env`).
   * @default none besides the environment's
   * @example { memory: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'] } }
   */
  mcpServers?: McpServersInput;
  /**
   * The variables the worker is configured by.
   * @default process.env
   */
  env?: Record<string, string | undefined>;
  /** Worker interceptors, e.g. an activity interceptor that logs every tool. */
  interceptors?: ConversationWorkerOptions['interceptors'];
  /**
   * Validate the configuration (and read the TLS files and the bundle), print it, and return without connecting.
   * @default false
   */
  checkOnly?: boolean;
  /**
   * This worker's Worker Deployment version (docs/upgrading.md), over TEMPORAL_DEPLOYMENT_NAME and TEMPORAL_BUILD_ID.
   * @default the environment's; none: versioning off
   */
  deployment?: WorkerDeployment;
  /**
   * The fleet's rate limiter (docs/rate-limits.md), over ANTHROPIC_RATE_LIMITER, ANTHROPIC_RATE_LIMITS,
   * ANTHROPIC_RATE_LIMIT_SHARE and ANTHROPIC_RATE_LIMIT_SCOPE.
   * @default on, limits learned from the API's headers, nothing lowered
   * @example { share: 0.5 }
   */
  rateLimits?: RateLimitOptions;
}

export async function runWorker(options: RunWorkerOptions): Promise<void> {
  const env = options.env ?? process.env;
  const config = loadConfig(env);
  const mcpServers = loadMcpServers(config, options.mcpServers, env);
  const modelPrices = loadModelPrices(config);
  const dataConverter =
    config.PAYLOAD_ENCRYPTION_KEYS &&
    encryptingDataConverter(config.PAYLOAD_ENCRYPTION_KEYS, config.PAYLOAD_ENCRYPTION_PLAINTEXT);
  // OTEL_* variables; content on spans never with encrypted payloads.
  const tracingWanted = tracingSettings(env);
  const traceSettings = { ...tracingWanted, captureContent: tracingWanted.captureContent && !dataConverter };
  const bundlePath =
    config.WORKFLOW_BUNDLE_PATH ?? prebuiltWorkflowBundle(dataConverter || undefined, undefined, traceSettings.enabled);
  const deployment = options.deployment ?? deploymentOf(config);
  const rateLimits = rateLimitOptionsOf(config, options.rateLimits);
  const described = () =>
    describe(config, options.tools, mcpServers, bundlePath, traceSettings) +
    (deployment
      ? `; deployment ${deployment.name}, build ${deployment.buildId}, ${deployment.behavior ?? 'pinned'}`
      : '');
  if (options.checkOnly) {
    connectionOptions(config);
    if (bundlePath) readFileSync(bundlePath);
    console.log(`Worker configuration OK: ${described()}`);
    return;
  }
  const tracing = traceSettings.enabled
    ? // Loaded only when tracing is on: a worker without it loads no OpenTelemetry code.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      (require('../tracing/tracing-sdk') as typeof TracingSdk).startTracing({
        serviceName: 'claude-temporal-orchestrator-worker',
        captureContent: traceSettings.captureContent,
        env,
      })
    : undefined;
  installRuntime(config, traceSettings.captureContent);
  const connection = await NativeConnection.connect(connectionOptions(config));
  try {
    await searchAttributesAtStart(connection, config.TEMPORAL_NAMESPACE, config.WORKER_SEARCH_ATTRIBUTES, (message) =>
      Runtime.instance().logger.warn(message),
    );
  } catch (error) {
    await connection.close().catch(() => undefined);
    throw error;
  }
  const mcp = new McpClientPool(mcpServers, {
    log: (level, message, meta) => Runtime.instance().logger[level](message, meta),
  });
  let liveRelay: LiveRelay | undefined;
  try {
    liveRelay = await startLiveRelay(config);
    const worker = await createConversationWorker({
      connection,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      anthropic: createAnthropic(config),
      tools: options.tools,
      mcp,
      ...(bundlePath && { workflowBundlePath: bundlePath }),
      shutdownGraceTime: config.WORKER_SHUTDOWN_GRACE_TIME,
      modelContextCacheBytes: config.WORKER_MODEL_CONTEXT_CACHE_MB * 2 ** 20,
      maxModelReplyBytes: config.WORKER_MAX_MODEL_REPLY_BYTES,
      batchWindowMs: config.WORKER_BATCH_WINDOW_MS,
      ...(modelPrices && { modelPrices }),
      tuning: {
        maxConcurrentActivityTaskExecutions: config.WORKER_MAX_CONCURRENT_ACTIVITIES,
        maxConcurrentWorkflowTaskExecutions: config.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS,
        maxCachedWorkflows: config.WORKER_MAX_CACHED_WORKFLOWS,
        ...(config.WORKER_EAGER_ACTIVITIES === 'off' && { maxEagerActivityReservationsPerWorkflowTask: 0 }),
      },
      ...(options.interceptors && { interceptors: options.interceptors }),
      ...(dataConverter && { dataConverter }),
      ...(tracing && { tracing }),
      ...(liveRelay && { liveRelay }),
      ...(deployment && { deployment }),
      rateLimits,
    });
    console.log(`Worker ready: ${described()}; live relay: ${liveRelay?.url ?? 'off'}`);
    await runUntilStopped(worker, {
      graceMs: durationMs(config.WORKER_SHUTDOWN_GRACE_TIME) ?? 30_000,
      forceMs: shutdownForceMs(config),
      log: (message) => Runtime.instance().logger.error(message),
    });
  } finally {
    await liveRelay?.close();
    await mcp.close();
    // A worker that stopped on its own may still hold the connection: closing it then fails, and must not hide why.
    await connection.close().catch(() => undefined);
    await tracing?.shutdown(); // exports the spans still pending
  }
}

/** The relay of WORKER_LIVE_RELAY_ADDRESS (none for `off`). */
async function startLiveRelay(config: WorkerConfig): Promise<LiveRelay | undefined> {
  const address = config.WORKER_LIVE_RELAY_ADDRESS;
  if (address === 'off') return undefined;
  const at = address.lastIndexOf(':');
  return LiveRelay.start({
    host: address.slice(0, at).replace(/^\[(.*)\]$/, '$1'),
    port: Number(address.slice(at + 1)),
    ...(config.WORKER_LIVE_RELAY_URL && { advertisedUrl: config.WORKER_LIVE_RELAY_URL }),
    maxBufferedBytes: config.WORKER_LIVE_RELAY_MAX_BUFFERED_MB * 2 ** 20,
    maxFeeds: config.WORKER_LIVE_RELAY_MAX_FEEDS,
  });
}

/** The prices of MODEL_PRICES_FILE and MODEL_PRICES (the variable wins for a model both name). */
export function loadModelPrices(config: WorkerConfig): ModelPriceTable | undefined {
  const file = config.MODEL_PRICES_FILE;
  if (!file) return config.MODEL_PRICES;
  let parsed: ReturnType<typeof modelPriceTableSchema.safeParse>;
  try {
    parsed = modelPriceTableSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  } catch (err) {
    throw new ConfigError(`Invalid configuration:\n  MODEL_PRICES_FILE: ${(err as Error).message}`);
  }
  if (!parsed.success) {
    throw new ConfigError(`Invalid configuration:\n  MODEL_PRICES_FILE: ${describeIssues(parsed.error, 'prices')}`);
  }
  return { ...parsed.data, ...config.MODEL_PRICES };
}

/** The servers of MCP_SERVERS, MCP_SERVERS_FILE and `mcpServers`; a name given twice is a configuration error. */
function loadMcpServers(
  config: WorkerConfig,
  servers: McpServersInput | undefined,
  env: Record<string, string | undefined>,
): McpServerConfig[] {
  let all: McpServerConfig[];
  try {
    all = [
      ...(config.MCP_SERVERS ? parseMcpServersJson(config.MCP_SERVERS, 'MCP_SERVERS', env) : []),
      ...(config.MCP_SERVERS_FILE
        ? parseMcpServersJson(readFileSync(config.MCP_SERVERS_FILE, 'utf8'), config.MCP_SERVERS_FILE, env)
        : []),
      ...(servers ? parseMcpServers(servers, env) : []),
    ];
  } catch (err) {
    if (err instanceof McpConfigError) throw new ConfigError(err.message);
    throw err;
  }
  const names = all.map((server) => server.name);
  const twice = names.filter((name, i) => names.indexOf(name) !== i);
  if (twice.length > 0)
    throw new ConfigError(`Invalid configuration:\n  MCP server configured twice: ${twice.join(', ')}`);
  return all;
}

function describe(
  config: WorkerConfig,
  tools: readonly ToolDefinition[],
  mcp: readonly McpServerConfig[],
  bundlePath: string | undefined,
  tracing: TracingSettings,
): string {
  const model = config.ANTHROPIC_API_KEY
    ? `Claude via ${config.ANTHROPIC_BASE_URL ?? 'api.anthropic.com'}`
    : `the local Messages API at ${config.ANTHROPIC_BASE_URL}`;
  const keys = config.PAYLOAD_ENCRYPTION_KEYS;
  return [
    `task queue "${config.TEMPORAL_TASK_QUEUE}" (${config.TEMPORAL_ADDRESS}, namespace ${config.TEMPORAL_NAMESPACE})`,
    `model: ${model}`,
    `tools: ${tools.map((tool) => tool.name).join(', ') || 'none'}`,
    // Names and transports only: commands, URLs and their variables stay out of logs.
    `MCP servers: ${mcp.map((server) => `${server.name} (${server.type})`).join(', ') || 'none'}`,
    `workflow bundle: ${bundlePath ?? 'built at start'}`,
    `payload encryption: ${keys ? `on (current key ${keys.current.id}), plain payloads ${config.PAYLOAD_ENCRYPTION_PLAINTEXT === 'accept' ? 'accepted with a warning' : 'refused'}` : 'off'}`,
    ...(config.WORKER_METRICS_ADDRESS ? [`metrics: http://${config.WORKER_METRICS_ADDRESS}/metrics`] : []),
    `tracing: ${tracing.enabled ? `on (OTEL_* variables), content on spans ${tracing.captureContent ? 'on' : 'off'}` : 'off'}`,
    `rate limiter: ${describeRateLimits(rateLimitOptionsOf(config))}`,
  ].join('; ');
}

/**
 * Before the first connection: the runtime is created once per process, with its logger — the SDK's lines, Temporal
 * core's (forwarded to it) and the orchestrator's; without content unless content is to be kept (content capture on,
 * payloads not encrypted: the same rule as for spans) — and its Prometheus exporter. A process that installed a
 * runtime of its own keeps it, unless it asks for metrics, which need this one.
 */
function installRuntime(config: WorkerConfig, keepContent: boolean): void {
  const logger = new DefaultLogger(config.WORKER_LOG_LEVEL);
  // Finer buckets than the SDK's default (50, 100, 500 ms…) for request latencies: a completion's round trip is the
  // window in which a crash makes a finished activity run again.
  const buckets = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000];
  const bindAddress = config.WORKER_METRICS_ADDRESS;
  try {
    Runtime.install({
      logger: keepContent ? logger : new ContentFreeLogger(logger),
      telemetryOptions: {
        // Core's own default filter, forwarded to the logger instead of printed past it.
        logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} },
        ...(bindAddress && {
          metrics: { prometheus: { bindAddress, histogramBucketOverrides: { request_latency: buckets } } },
        }),
      },
    });
  } catch (err) {
    if (bindAddress || !(err instanceof IllegalStateError)) throw err;
  }
}

function describeRateLimits(options: RateLimitOptions): string {
  if (options.limiter === 'off') return 'off';
  const lowered = [
    ...(options.share !== undefined ? [`share ${options.share}`] : []),
    ...(options.limits ? ['capped by ANTHROPIC_RATE_LIMITS'] : []),
  ];
  return `on (limits from the API's headers${lowered.length > 0 ? `, ${lowered.join(', ')}` : ''})`;
}

/** The deployment version TEMPORAL_DEPLOYMENT_NAME and TEMPORAL_BUILD_ID name (loadConfig checked: both or neither). */
function deploymentOf(config: WorkerConfig): WorkerDeployment | undefined {
  const name = config.TEMPORAL_DEPLOYMENT_NAME;
  const buildId = config.TEMPORAL_BUILD_ID;
  return name && buildId ? { name, buildId, behavior: config.TEMPORAL_VERSIONING_BEHAVIOR } : undefined;
}
