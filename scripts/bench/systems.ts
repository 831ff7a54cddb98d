// The systems a load runs on (load.ts), each started once and warmed up by one chain that is not measured:
//   ours        the conversation workflow on the product's worker (scripts/rig-worker.ts), through the typed client;
//   floor       the plain Temporal chain (bare-workflow.ts): one activity per model call and per tool call, no more;
//   peer        @temporalio/ai-sdk, Temporal's integration of the Vercel AI SDK (peer/), on its own SDK and worker;
//   in-process  the same chain as a plain loop in this process, no Temporal (in-process-loop.ts).
// Every worker process has the same shape (one process, one connection, the product's WORKER_MAX_* settings) and
// talks to the same local Messages API server, which plays the same scripted chain to all of them.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { WithStartWorkflowOperation } from '@temporalio/client';
import type { StartOptions } from '../../client/call-options';
import { ConversationClient } from '../../client/conversation-client';
import { ConversationError } from '../../client/errors';
import { DEFAULT_MODEL } from '../../common/options';
import { BARE_WORKFLOW, type bareChain, bareRunUpdate } from './bare-workflow';
import { CHAIN_TOOLS, scriptChain } from './chain-script';
import { type BenchContext, startBenchWorker, terminateAll } from './context';
import { NativeConnection } from '@temporalio/worker';
import { createAnthropic } from '../../workers/anthropic-client';
import { type ConversationWorkerOptions, createConversationWorker } from '../../workers/conversation-worker';
import type { WorkerProcess } from '../worker-process';
import { InProcessLoop } from './in-process-loop';
import type { Conversation, RunningSystem } from './load';

export type SystemName = 'ours' | 'floor' | 'peer' | 'in-process';

const PEER_DIR = path.join(__dirname, 'peer');

function queueName(system: string, label: string): string {
  return `bench-${system}-${label}-${randomUUID().slice(0, 8)}`;
}

/** Runs one chain through the system before anything is measured: JIT, workflow context, connections. */
async function warmUp(ctx: BenchContext, system: RunningSystem): Promise<RunningSystem> {
  const conversation = { id: `bench-warm-up-${randomUUID().slice(0, 8)}`, steps: 2, prompt: '' };
  conversation.prompt = scriptChain(ctx.mock, conversation.steps, `warm-up-${system.name}`);
  await system.launch(conversation).run();
  if (system.leavesOpen) await terminateAll(ctx.client, [conversation.id]);
  return system;
}

export interface Ours extends RunningSystem {
  conversations: ConversationClient;
  /** Conversation options every launch adds to the chain's tools and limits; a section may change them between loads. */
  send: Omit<StartOptions, 'id'>;
}

/** Ours on `conversations`' task queue: each launch sends the chain's message with the chain's tools and limits. */
function ours(conversations: ConversationClient, stop: () => Promise<void>, worker?: WorkerProcess): Ours {
  const system: Ours = {
    name: 'ours',
    modelActivity: 'callModel',
    ...(worker && { worker }),
    conversations,
    send: {},
    leavesOpen: true,
    launch: ({ id, prompt, steps }: Conversation) => {
      const send = () =>
        conversations.sendMessage(id, prompt, {
          start: {
            tools: CHAIN_TOOLS,
            limits: { maxModelCallsPerTurn: steps + 10, maxToolCallsPerTurn: steps + 10 },
            ...system.send,
          },
        });
      return {
        run: send,
        // The update-with-start gave up: wait for turn 1; if the conversation or its message never arrived, send it.
        again: () =>
          conversations.awaitTurn(id, 1).catch((err: unknown) => {
            if (err instanceof ConversationError && (err.code === 'not_found' || err.code === 'rejected'))
              return send();
            throw err;
          }),
      };
    },
    stop,
  };
  return system;
}

/** Ours on the product's worker, in a process of its own; `env` adds to its environment (rig-worker.ts). */
export async function startOurs(
  ctx: BenchContext,
  label: string,
  options: { env?: Record<string, string>; turnTimeoutMs?: number } = {},
): Promise<Ours> {
  const taskQueue = queueName('ours', label);
  const worker = await startBenchWorker(ctx, 'scripts/rig-worker.ts', taskQueue, {
    ANTHROPIC_BASE_URL: ctx.mock.url,
    WORKFLOW_BUNDLE_PATH: ctx.bundles.conversation,
    TOOL_LATENCY_MS: '0',
    ...options.env,
  });
  const { turnTimeoutMs } = options;
  const conversations = new ConversationClient({
    client: ctx.client,
    taskQueue,
    tools: CHAIN_TOOLS,
    ...(turnTimeoutMs && { turnTimeoutMs }),
  });
  const system = ours(conversations, () => worker.stop(10_000), worker);
  await warmUp(ctx, system);
  return system;
}

/**
 * Ours on a conversation worker in this process, for the commands that change the worker itself (its tools, MCP
 * servers, tracing: bench:mcp, bench:tracing, bench:threads); not warmed up. `client`: to add interceptors.
 */
export async function startOursInProcess(
  ctx: BenchContext,
  options: Omit<ConversationWorkerOptions, 'connection' | 'namespace' | 'taskQueue' | 'anthropic'>,
  client = ctx.client,
): Promise<Ours> {
  const taskQueue = queueName('ours', 'in-process');
  const connection = await NativeConnection.connect({ address: ctx.server.address });
  const anthropic = createAnthropic({ ANTHROPIC_BASE_URL: ctx.mock.url });
  const namespace = ctx.server.namespace;
  const worker = await createConversationWorker({ connection, namespace, taskQueue, anthropic, ...options });
  const running = worker.run();
  const conversations = new ConversationClient({
    client,
    taskQueue,
    tools: options.tools.map((tool) => tool.name),
    mcpServers: options.mcp?.serverNames ?? [],
  });
  return ours(conversations, async () => {
    worker.shutdown();
    await running;
    await connection.close();
  });
}

/** A system whose conversations are workflows started by `start` on a worker process of `entry`; they complete. */
async function workerSystem(
  ctx: BenchContext,
  label: string,
  system: { name: 'floor' | 'peer'; entry: string; env: Record<string, string>; modelActivity: string },
  start: (conversation: Conversation, taskQueue: string) => Promise<unknown>,
): Promise<RunningSystem> {
  const taskQueue = queueName(system.name, label);
  const worker = await startBenchWorker(ctx, system.entry, taskQueue, {
    ANTHROPIC_BASE_URL: ctx.mock.url,
    ...system.env,
  });
  return warmUp(ctx, {
    name: system.name,
    modelActivity: system.modelActivity,
    worker,
    leavesOpen: false,
    launch: (conversation) => ({
      run: () => start(conversation, taskQueue),
      again: () => ctx.client.workflow.getHandle(conversation.id).result(),
    }),
    stop: () => worker.stop(10_000),
  });
}

function startFloor(ctx: BenchContext, label: string): Promise<RunningSystem> {
  const floor = { name: 'floor' as const, entry: 'scripts/bench/bare-worker.ts', modelActivity: 'bareModel' };
  return workerSystem(ctx, label, { ...floor, env: { WORKFLOW_BUNDLE_PATH: ctx.bundles.bare } }, (c, taskQueue) =>
    ctx.client.workflow.executeUpdateWithStart(bareRunUpdate, {
      startWorkflowOperation: new WithStartWorkflowOperation<typeof bareChain>(BARE_WORKFLOW, {
        workflowId: c.id,
        taskQueue,
        args: [{ prompt: c.prompt, maxModelCalls: c.steps + 10 }],
        workflowIdConflictPolicy: 'USE_EXISTING',
      }),
    }),
  );
}

/** `npm ci` in peer/ when its node_modules is missing or older than its lock file (the first run, or a new pin). */
function installPeer(log: (line: string) => void): void {
  const lock = path.join(PEER_DIR, 'package-lock.json');
  const installed = path.join(PEER_DIR, 'node_modules', '.package-lock.json');
  if (fs.existsSync(installed) && fs.statSync(installed).mtimeMs >= fs.statSync(lock).mtimeMs) return;
  log('peer: npm ci --prefix scripts/bench/peer (@temporalio/ai-sdk 1.23 and the AI SDK, once)');
  execFileSync('npm', ['ci', '--prefix', PEER_DIR, '--no-audit', '--no-fund', '--loglevel=error'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

function startPeer(ctx: BenchContext, label: string): Promise<RunningSystem> {
  installPeer(ctx.log);
  // The first start bundles the workflow through the plugin (it adds the AI SDK's polyfills); later ones reuse it.
  const peer = { name: 'peer' as const, entry: 'scripts/bench/peer/worker.ts', modelActivity: 'invokeModel' };
  const env = { PEER_BUNDLE_PATH: path.join(ctx.bundles.dir, 'peer-bundle.js') };
  return workerSystem(ctx, label, { ...peer, env }, (c, taskQueue) =>
    ctx.client.workflow.execute('peerChain', {
      workflowId: c.id,
      taskQueue,
      args: [{ prompt: c.prompt, maxModelCalls: c.steps + 10, model: DEFAULT_MODEL, maxOutputTokens: 1024 }],
    }),
  );
}

function startInProcess(ctx: BenchContext): RunningSystem {
  const loop = new InProcessLoop({
    baseURL: ctx.mock.url,
    request: { model: DEFAULT_MODEL, maxTokens: 1024, tools: CHAIN_TOOLS, promptCaching: true },
  });
  return {
    name: 'in-process',
    leavesOpen: false,
    launch: ({ prompt }) => ({ run: () => loop.run(prompt), again: () => loop.run(prompt) }),
    stop: async () => {},
  };
}

export function startSystem(ctx: BenchContext, name: SystemName, label: string): Promise<RunningSystem> {
  if (name === 'ours') return startOurs(ctx, label);
  if (name === 'floor') return startFloor(ctx, label);
  if (name === 'peer') return startPeer(ctx, label);
  return Promise.resolve(startInProcess(ctx));
}

/** Starts the systems in turn, lends them to `use`, and stops every one started, whatever happens. */
export async function withSystems<T>(
  ctx: BenchContext,
  names: readonly SystemName[],
  label: string,
  use: (systems: RunningSystem[]) => Promise<T>,
): Promise<T> {
  const systems: RunningSystem[] = [];
  try {
    for (const name of names) systems.push(await startSystem(ctx, name, label));
    return await use(systems);
  } finally {
    for (const system of systems) await system.stop();
  }
}
