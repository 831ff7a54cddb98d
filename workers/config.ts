// The worker's configuration, from the conventional environment variables, validated once at start-up
// so a bad value stops the process with a message that names the variable.
import { z } from 'zod';
import { jsonVariable } from './json-variable';
import { plaintextPolicySchema } from '../codec/data-converter';
import { keyRingSchema } from '../codec/keys';
import { durationMs } from '../common/options';
import { DEFAULT_MAX_REPLY_BYTES, MAX_REPLY_BYTES_LIMIT } from '../activities/reply-size-limit';
import { modelPriceTableSchema } from '../common/pricing';
import { assertConnectionSettings, connectionSettingsShape } from '../client/connection-settings';
import { ConfigError, parseEnvironment } from '../client/environment-config';
import { DEFAULT_BATCH_WINDOW_MS, MAX_BATCH_WINDOW_MS } from '../common/batch-mode';
import { rateLimitEnvShape } from './rate-limit-config';

export { ConfigError };

/** Running activities get this long to finish when the worker is asked to stop. */
export const DEFAULT_SHUTDOWN_GRACE_TIME = '30 seconds';
/** Unless WORKER_SHUTDOWN_FORCE_TIME says otherwise, a stopping worker gives up this long after its grace time. */
const DEFAULT_SHUTDOWN_FORCE_MARGIN_MS = 10_000;

const optionalText = z.string().trim().min(1).optional().catch(undefined);

export const configSchema = z.object({
  /** TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_TASK_QUEUE, and TLS or an API key: as the CLI and the gateway. */
  ...connectionSettingsShape,
  ANTHROPIC_API_KEY: optionalText,
  ANTHROPIC_BASE_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
  /** The fleet's rate limiter (docs/rate-limits.md): ANTHROPIC_RATE_LIMITER, _LIMITS, _LIMIT_SHARE, _LIMIT_SCOPE. */
  ...rateLimitEnvShape,
  /** A workflow bundle of your own; default: the one the package ships (workflow-bundles.ts), else bundled at start. */
  WORKFLOW_BUNDLE_PATH: optionalText,
  WORKER_MAX_CONCURRENT_ACTIVITIES: z.coerce.number().int().positive().default(2000),
  WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: z.coerce.number().int().positive().default(100),
  WORKER_MAX_CACHED_WORKFLOWS: z.coerce.number().int().positive().default(2000),
  /**
   * Eager activities: a workflow task that schedules activities takes them back with its completion, on this worker,
   * when the server allows it (`system.enableActivityEagerExecution`). `off` sends every activity through the queue.
   */
  WORKER_EAGER_ACTIVITIES: z.enum(['on', 'off']).default('on'),
  /** The worker's copy of the transcripts (activities/model-context-cache.ts), in MiB. */
  WORKER_MODEL_CONTEXT_CACHE_MB: z.coerce.number().int().positive().default(256),
  /** The largest model reply a call may return (activities/reply-size-limit.ts), in bytes of JSON. */
  WORKER_MAX_MODEL_REPLY_BYTES: z.coerce
    .number()
    .int()
    .min(10_000)
    .max(MAX_REPLY_BYTES_LIMIT, "must stay under Temporal's 2 MiB payload limit (at most 2000000)")
    .default(DEFAULT_MAX_REPLY_BYTES),
  /** Batch mode (docs/batches.md): how long a model call waits, at most, for others to share its Message Batch, in ms. */
  WORKER_BATCH_WINDOW_MS: z.coerce.number().int().min(0).max(MAX_BATCH_WINDOW_MS).default(DEFAULT_BATCH_WINDOW_MS),
  /** On SIGTERM, how long running model and tool calls may finish before they are cancelled (and run elsewhere). */
  WORKER_SHUTDOWN_GRACE_TIME: z
    .string()
    .trim()
    .refine((text) => durationMs(text) !== undefined, 'must be a duration like "30 seconds"')
    .default(DEFAULT_SHUTDOWN_GRACE_TIME),
  /**
   * On SIGTERM, how long (from the signal) the worker may take to stop at all: an activity that ignores its
   * cancellation (a tool that does not honour its `signal`) keeps it up until then, and the process then exits
   * non-zero. Longer than the grace time; default: the grace time + 10 seconds.
   */
  WORKER_SHUTDOWN_FORCE_TIME: z
    .string()
    .trim()
    .refine((text) => durationMs(text) !== undefined, 'must be a duration like "40 seconds"')
    .optional(),
  /** `host:port` to serve the SDK's Prometheus metrics on (`/metrics`): task latencies, slots, request latencies. */
  WORKER_METRICS_ADDRESS: z
    .string()
    .trim()
    .regex(/^[^\s:]+:\d{1,5}$/, 'must be host:port, e.g. 0.0.0.0:9464')
    .optional(),
  /**
   * The live relay (streaming/worker/live-relay.ts): `host:port` it listens on, `off` for none (readers then poll streamed
   * replies from heartbeats through the Temporal server). Default 127.0.0.1:0 (a free port, readers on this host).
   */
  WORKER_LIVE_RELAY_ADDRESS: z
    .string()
    .trim()
    .regex(/^(off|[^\s]+:\d{1,5})$/, 'must be host:port (e.g. 0.0.0.0:7300) or off')
    .default('127.0.0.1:0'),
  /** The URL readers reach the relay at, e.g. http://worker-1:7300. Default: from the address it listens on. */
  WORKER_LIVE_RELAY_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
  /** What the relay holds for all its readers together (written, not yet taken), in MiB: past it the furthest behind go. */
  WORKER_LIVE_RELAY_MAX_BUFFERED_MB: z.coerce.number().int().positive().max(4096).default(16),
  /** Conversations' feeds the relay keeps (each up to 256 KB of events for readers that come late). */
  WORKER_LIVE_RELAY_MAX_FEEDS: z.coerce.number().int().positive().max(65_536).default(1024),
  /** The worker's log (stderr): the SDK's lines and the orchestrator's, this level and above. */
  WORKER_LOG_LEVEL: z.enum(['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR']).default('INFO'),
  /** `id:base64key[,id:base64key...]` (32-byte keys, the first is current): encrypt every payload (codec/). */
  PAYLOAD_ENCRYPTION_KEYS: keyRingSchema.optional(),
  /** The MCP servers the worker may start or call, as JSON (activities/mcp/mcp-server-config.ts)… */
  MCP_SERVERS: optionalText,
  /** …or a JSON file of them (Claude Desktop's `{ "mcpServers": { … } }` works as it is). */
  MCP_SERVERS_FILE: optionalText,
  /** Model prices over the published ones, as JSON: `{"model-id": {"input":3,"output":15,"cacheWrite":3.75,"cacheRead":0.3}}` (USD per million tokens). */
  MODEL_PRICES: jsonVariable(modelPriceTableSchema).optional(),
  /** …or a JSON file of them (read at start-up, checked the same way). */
  MODEL_PRICES_FILE: optionalText,
  /**
   * Worker Deployments (docs/upgrading.md): the deployment this worker belongs to and its build's id, both or neither.
   * Unset: versioning off. Promote a build with `claude-temporal-orchestrator deploy promote`.
   */
  TEMPORAL_DEPLOYMENT_NAME: z.string().trim().min(1).max(255).optional(),
  TEMPORAL_BUILD_ID: z.string().trim().min(1).max(255).optional(),
  /**
   * At start, the namespace's search attributes against this build's (workers/search-attributes-at-start.ts): `check`
   * refuses to start when one is missing, with the commands that add it; `add` adds the missing ones; `off` skips it.
   */
  WORKER_SEARCH_ATTRIBUTES: z.enum(['check', 'add', 'off']).default('check'),
  /** How conversations follow builds (WorkerDeployment's `behavior`): pinned (default) or auto-upgrade. */
  TEMPORAL_VERSIONING_BEHAVIOR: z.enum(['pinned', 'auto-upgrade']).default('pinned'),
  /** With keys: `refuse` (default) a payload that is not encrypted, or `accept` it with a warning (a migration). */
  PAYLOAD_ENCRYPTION_PLAINTEXT: plaintextPolicySchema,
});

export type WorkerConfig = z.infer<typeof configSchema>;

export function loadConfig(env: Record<string, string | undefined> = process.env): WorkerConfig {
  const config = parseEnvironment(configSchema, env);
  assertConnectionSettings(config);
  const graceMs = durationMs(config.WORKER_SHUTDOWN_GRACE_TIME)!;
  const forceMs = config.WORKER_SHUTDOWN_FORCE_TIME ? durationMs(config.WORKER_SHUTDOWN_FORCE_TIME) : undefined;
  if (forceMs !== undefined && forceMs <= graceMs) {
    throw new ConfigError(
      `Invalid configuration:\n  WORKER_SHUTDOWN_FORCE_TIME: must be longer than WORKER_SHUTDOWN_GRACE_TIME (${config.WORKER_SHUTDOWN_GRACE_TIME}).`,
    );
  }
  if (!config.TEMPORAL_DEPLOYMENT_NAME !== !config.TEMPORAL_BUILD_ID) {
    throw new ConfigError(
      'Invalid configuration:\n  TEMPORAL_DEPLOYMENT_NAME, TEMPORAL_BUILD_ID: set both (Worker Deployments on) or neither.',
    );
  }
  if (!config.ANTHROPIC_API_KEY && !config.ANTHROPIC_BASE_URL) {
    throw new ConfigError(
      'Invalid configuration:\n  ANTHROPIC_API_KEY: set it to talk to Claude, or set ANTHROPIC_BASE_URL to a local Messages API server (npm run messages-api).',
    );
  }
  return config;
}

/** A key the local Messages API server accepts; never sent to the real API (there a real key is required). */
export const LOCAL_API_KEY = 'local-messages-api';

/** How long a stopping worker may take, from the signal: WORKER_SHUTDOWN_FORCE_TIME, or the grace time + 10 s. */
export function shutdownForceMs(
  config: Pick<WorkerConfig, 'WORKER_SHUTDOWN_GRACE_TIME' | 'WORKER_SHUTDOWN_FORCE_TIME'>,
): number {
  const forced = config.WORKER_SHUTDOWN_FORCE_TIME ? durationMs(config.WORKER_SHUTDOWN_FORCE_TIME) : undefined;
  return forced ?? (durationMs(config.WORKER_SHUTDOWN_GRACE_TIME) ?? 30_000) + DEFAULT_SHUTDOWN_FORCE_MARGIN_MS;
}
