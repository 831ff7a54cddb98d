// Builds a worker that runs conversations: the workflow bundle, the model activity and one activity per tool.
import Anthropic from '@anthropic-ai/sdk';
import { type NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createModelActivities } from '../activities/model';
import { createToolActivities, type ToolActivityOptions } from '../activities/tool-activities';
import { describeTool, type ToolDefinition } from '../activities/tool-definition';
import { builtinTools } from '../activities/tools';
import { TranscriptCache } from '../activities/transcript-cache';
import { transcriptQuery } from '../workflows/api';
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
  const cache = new TranscriptCache(async ({ workflowId, runId }, length) =>
    worker.client!.workflow.getHandle(workflowId, runId).query(transcriptQuery, { to: length }));
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
    ...options.tuning,
  });
  return worker;
}
