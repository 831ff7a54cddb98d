// Builds a worker that runs conversations: the workflow bundle, the model activity and one activity per tool.
import { readFileSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import { type NativeConnection, type NativeConnectionOptions, Worker, type WorkerOptions } from '@temporalio/worker';
import { createModelActivities } from '../activities/model';
import { createToolActivities, type ToolActivityOptions } from '../activities/tool-activities';
import { describeTool, type ToolDefinition } from '../activities/tool-definition';
import { builtinTools } from '../activities/tools';
import { ModelContextCache } from '../activities/model-context-cache';
import { modelContextQuery } from '../workflows/api';
import { LOCAL_API_KEY, type WorkerConfig } from './config';

export interface ConversationWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  anthropic: Anthropic;
  tools?: readonly ToolDefinition[];
  toolOptions?: ToolActivityOptions;
  /** A pre-built workflow bundle (fast start in tests and production); otherwise bundled from source. */
  workflowBundlePath?: string;
  tuning?: Pick<WorkerOptions, 'maxConcurrentActivityTaskExecutions' | 'maxConcurrentWorkflowTaskExecutions' | 'maxCachedWorkflows' | 'maxConcurrentLocalActivityExecutions'>;
  /**
   * E.g. codec/data-converter.ts encryptingDataConverter(keys). With a `failureConverterPath`, a pre-built
   * `workflowBundlePath` must have been bundled with the same path (deploy/bundle-workflows.ts does).
   */
  dataConverter?: WorkerOptions['dataConverter'];
}

/** NativeConnection.connect options for the configured server: plain, TLS, mTLS (Temporal Cloud) or an API key. */
export function connectionOptions(
  config: Pick<WorkerConfig, 'TEMPORAL_ADDRESS' | 'TEMPORAL_API_KEY' | 'TEMPORAL_TLS' | 'TEMPORAL_TLS_CLIENT_CERT_PATH' |
    'TEMPORAL_TLS_CLIENT_KEY_PATH' | 'TEMPORAL_TLS_SERVER_CA_CERT_PATH' | 'TEMPORAL_TLS_SERVER_NAME'>,
): NativeConnectionOptions {
  const mtls = config.TEMPORAL_TLS_CLIENT_CERT_PATH && config.TEMPORAL_TLS_CLIENT_KEY_PATH
    ? { crt: readFileSync(config.TEMPORAL_TLS_CLIENT_CERT_PATH), key: readFileSync(config.TEMPORAL_TLS_CLIENT_KEY_PATH) }
    : undefined;
  const wantsTls = config.TEMPORAL_TLS ?? Boolean(mtls || config.TEMPORAL_API_KEY || config.TEMPORAL_TLS_SERVER_CA_CERT_PATH);
  return {
    address: config.TEMPORAL_ADDRESS,
    // tls: false when TEMPORAL_TLS=false (an API key alone would otherwise turn TLS on).
    tls: wantsTls
      ? {
          ...(mtls && { clientCertPair: mtls }),
          ...(config.TEMPORAL_TLS_SERVER_CA_CERT_PATH && { serverRootCACertificate: readFileSync(config.TEMPORAL_TLS_SERVER_CA_CERT_PATH) }),
          ...(config.TEMPORAL_TLS_SERVER_NAME && { serverNameOverride: config.TEMPORAL_TLS_SERVER_NAME }),
        }
      : false,
    ...(config.TEMPORAL_API_KEY && { apiKey: config.TEMPORAL_API_KEY }),
  };
}

export function createAnthropic(config: Pick<WorkerConfig, 'ANTHROPIC_API_KEY' | 'ANTHROPIC_BASE_URL'>): Anthropic {
  return new Anthropic({
    apiKey: config.ANTHROPIC_API_KEY ?? LOCAL_API_KEY,
    ...(config.ANTHROPIC_BASE_URL && { baseURL: config.ANTHROPIC_BASE_URL }),
    maxRetries: 0, // Temporal retries, with our classifier's verdict
    timeout: 15 * 60_000, // the activity's own timeouts are the ones that matter
  });
}

export async function createConversationWorker(options: ConversationWorkerOptions): Promise<Worker> {
  const tools = options.tools ?? builtinTools;
  // The cache reads a transcript it lacks through the worker's own client (only ever called once the worker runs).
  const cache = new ModelContextCache(async ({ workflowId, runId }, length) =>
    worker.client!.workflow.getHandle(workflowId, runId).query(modelContextQuery, { to: length }));
  const worker: Worker = await Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    ...(options.workflowBundlePath
      ? { workflowBundle: { codePath: options.workflowBundlePath } }
      : { workflowsPath: require.resolve('../workflows') }),
    activities: {
      ...createToolActivities(tools, options.toolOptions),
      ...createModelActivities({ anthropic: options.anthropic, tools: tools.map(describeTool), cache }),
    },
    // Pollers scale with the backlog: a burst of new conversations is picked up without starving running ones.
    workflowTaskPollerBehavior: { type: 'autoscaling' },
    activityTaskPollerBehavior: { type: 'autoscaling' },
    ...options.tuning,
    ...(options.dataConverter && { dataConverter: options.dataConverter }),
  });
  return worker;
}
