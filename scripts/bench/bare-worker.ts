// The floor's worker process: the same shape as workers/main.ts (one NativeConnection, a pre-built bundle from
// WORKFLOW_BUNDLE_PATH, the same WORKER_MAX_* tuning variables and defaults), and its activities, the work a durable
// tool-use chain cannot skip: `bareModel` posts the chain's request to the model (built by the same buildModelRequest
// as a conversation's: model, max_tokens, tools, transcript, cache breakpoints; one JSON reply, not streamed) and
// returns only the reply's content and stop reason; `bareTool` runs one tool of the demo set on its parsed input.
// The transcript lives in this worker's memory, keyed by workflow id, so an activity's input is only what is new
// (the user message or the tool results): the floor records each reply and result once, as a conversation would.
//   TEMPORAL_ADDRESS=… TEMPORAL_TASK_QUEUE=… ANTHROPIC_BASE_URL=… WORKFLOW_BUNDLE_PATH=… node --import tsx scripts/bench/bare-worker.ts
import Anthropic from '@anthropic-ai/sdk';
import type { ContentBlock, MessageParam, StopReason } from '@anthropic-ai/sdk/resources/messages';
import { Context } from '@temporalio/activity';
import { buildModelRequest } from '../../activities/model-request';
import { describeTool, type ToolDefinition } from '../../activities/tool-definition';
import { DEFAULT_MODEL } from '../../common/options';
import { demoTools } from '../../testing/demo-tools';
import { NativeConnection, Worker } from '@temporalio/worker';
import { configSchema } from '../../workers/config';
import { CHAIN_TOOLS } from './chain-script';

interface BareReply {
  content: ContentBlock[];
  stopReason: StopReason | null;
}

export interface BareActivities {
  bareModel(input: { messages: MessageParam[] }): Promise<BareReply>;
  bareTool(input: { name: string; input: unknown }): Promise<{ content: string; isError: boolean }>;
}

const TOOLS = new Map(demoTools.filter((tool) => CHAIN_TOOLS.includes(tool.name)).map((tool) => [tool.name, tool]));
const OFFERED = [...TOOLS.values()].map((tool) => describeTool(tool as ToolDefinition));

function bareActivities(baseURL: string): BareActivities {
  const anthropic = new Anthropic({ baseURL, apiKey: 'bench-floor', maxRetries: 0 });
  const transcripts = new Map<string, MessageParam[]>();
  return {
    async bareModel({ messages }) {
      const { workflowExecution, activityId } = Context.current().info;
      const key = workflowExecution?.workflowId ?? activityId;
      const transcript = [...(transcripts.get(key) ?? []), ...messages];
      const request = buildModelRequest(
        { model: DEFAULT_MODEL, maxTokens: 1024, tools: CHAIN_TOOLS, promptCaching: true, protocol: 'native' },
        transcript,
        OFFERED,
      );
      const reply = await anthropic.messages.create({ ...request, stream: false });
      if (reply.stop_reason === 'tool_use')
        transcripts.set(key, [...transcript, { role: 'assistant', content: reply.content }]);
      else transcripts.delete(key);
      return { content: reply.content, stopReason: reply.stop_reason };
    },
    async bareTool({ name, input }) {
      const tool = TOOLS.get(name);
      const parsed = tool?.input.safeParse(input);
      if (!tool || !parsed?.success) return { content: `invalid call of ${name}`, isError: true };
      const value: unknown = await tool.run(parsed.data as never, {
        idempotencyKey: Context.current().info.activityId,
        attempt: Context.current().info.attempt,
        signal: Context.current().cancellationSignal,
        heartbeat: () => {},
      });
      return { content: typeof value === 'string' ? value : JSON.stringify(value), isError: false };
    },
  };
}

async function main(): Promise<void> {
  const present = Object.fromEntries(
    Object.entries(process.env).filter(([, value]) => value !== undefined && value !== ''),
  );
  const config = configSchema
    .pick({
      TEMPORAL_ADDRESS: true,
      TEMPORAL_NAMESPACE: true,
      TEMPORAL_TASK_QUEUE: true,
      WORKER_MAX_CONCURRENT_ACTIVITIES: true,
      WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: true,
      WORKER_MAX_CACHED_WORKFLOWS: true,
    })
    .parse(present);
  const bundlePath = process.env.WORKFLOW_BUNDLE_PATH;
  const baseURL = process.env.ANTHROPIC_BASE_URL;
  if (!bundlePath || !baseURL)
    throw new Error('WORKFLOW_BUNDLE_PATH (the bundled bare-workflow.ts) and ANTHROPIC_BASE_URL must be set');
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  const worker = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    workflowBundle: { codePath: bundlePath },
    activities: bareActivities(baseURL),
    maxConcurrentActivityTaskExecutions: config.WORKER_MAX_CONCURRENT_ACTIVITIES,
    maxConcurrentWorkflowTaskExecutions: config.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS,
    maxCachedWorkflows: config.WORKER_MAX_CACHED_WORKFLOWS,
  });
  console.log(`Worker ready (bare chain) on task queue "${config.TEMPORAL_TASK_QUEUE}" (${config.TEMPORAL_ADDRESS})`);
  await worker.run();
  await connection.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
