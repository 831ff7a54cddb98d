// `npm run bench:fairness`: does one tenant's flood starve another's few (docs/fairness.md)? Tenant A starts N
// conversations at once (500), tenant B starts 10 just after, on one worker with few slots and a model that takes a
// while, so tasks back up in the task queue. B's conversation times (start to answer) are measured alone, under A's
// flood with fairness keys (tenant-a, tenant-b), and under the same flood without keys — three phases of one run, each
// on a task queue of its own. Its own dev server (with priority and fairness on: testing/dev-server/), never a reused
// one. Prints a table; writes results/fairness-<time>.json. Not part of `npm test`.
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection } from '@temporalio/worker';
import { ConversationClient } from '../../client/conversation-client';
import { startDevServer } from '../../testing/dev-server';
import { demoTools } from '../../testing/demo-tools';
import { STOCK_QUESTION, STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import { startMessagesApi } from '../../testing/messages-api/server';
import { createAnthropic } from '../../workers/anthropic-client';
import { createConversationWorker } from '../../workers/conversation-worker';
import { conversationBundleOptions } from '../../workers/workflow-bundles';
import { cleanUpOnSignal, runMain } from '../script-main';
import { Flags } from './args';
import { progressLog, writeResults } from './context';
import { printTables } from './table';

const HELP = `npm run bench:fairness -- [options]

  --flood N            tenant A's conversations, started at once (default 500; --quick: 100)
  --few N              tenant B's conversations, started just after (default 10)
  --activity-slots N   the worker's activity slots (default 10: B alone never waits for one)
  --workflow-slots N   the worker's workflow task slots (default 2)
  --latency-ms N       the local Messages API's latency per model call (default 1000)
  --partitions N       the task queues' partitions (default 1; the server's default is 4, and priority and
                       fairness hold within one partition)
  --priority           a fourth phase: A's flood without keys, B's messages at priority 1
  --quick              a flood of 100`;

interface Phase {
  name: string;
  /** B's conversation times, start to answer, in ms (sorted). */
  few: number[];
  /** How long A's flood took from its first start to its last answer (0 without a flood). */
  floodMs: number;
}

async function main(): Promise<number> {
  const flags = Flags.read(process.argv.slice(2), HELP);
  if (!flags) return 0;
  const flood = flags.int('flood', flags.on('quick') ? 100 : 500);
  const few = flags.int('few', 10);
  const activitySlots = flags.int('activity-slots', 10);
  const workflowSlots = flags.int('workflow-slots', 2, { max: 1000 });
  const latencyMs = flags.int('latency-ms', 1_000, { zero: true });
  const partitions = flags.int('partitions', 1, { max: 64 });
  const started = new Date();
  const log = progressLog('bench:fairness', started.getTime());

  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'cto-bench-fairness-'));
  const bundlePath = path.join(dir, 'conversation-bundle.js');
  const [server] = await Promise.all([
    startDevServer({
      log,
      dynamicConfig: {
        'matching.numTaskqueueReadPartitions': partitions,
        'matching.numTaskqueueWritePartitions': partitions,
      },
    }),
    bundleWorkflowCode({ ...conversationBundleOptions(), logger: new DefaultLogger('WARN') }).then(({ code }) =>
      fsp.writeFile(bundlePath, code),
    ),
  ]);
  const mock = await startMessagesApi({ latencyMs });
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection, namespace: server.namespace });
  const close = async () => {
    await connection.close().catch(() => undefined);
    await mock.close().catch(() => undefined);
    await server.stop().catch(() => undefined);
    await fsp.rm(dir, { recursive: true, force: true });
  };
  cleanUpOnSignal(close, log);
  log(`Temporal ${server.address} (own dev server, fairness on); Messages API ${mock.url}, ${latencyMs} ms a call`);

  /** One phase on a fresh task queue and worker: the flood (if any) started, then the few, all awaited. */
  async function phase(name: string, how: { flood: number; keys: boolean; fewPriority?: number }): Promise<Phase> {
    const taskQueue = `bench-fairness-${name}-${randomUUID().slice(0, 8)}`;
    const workerConnection = await NativeConnection.connect({ address: server.address });
    const worker = await createConversationWorker({
      connection: workerConnection,
      namespace: server.namespace,
      taskQueue,
      anthropic: createAnthropic({ ANTHROPIC_BASE_URL: mock.url }),
      tools: demoTools,
      workflowBundlePath: bundlePath,
      tuning: {
        maxConcurrentActivityTaskExecutions: activitySlots,
        maxConcurrentWorkflowTaskExecutions: workflowSlots,
      },
    });
    const running = worker.run();
    const conversations = new ConversationClient({ client, taskQueue, tools: demoTools.map((t) => t.name) });
    // Replies are not streamed: heartbeats of live replies would spend the CPU the tasks' order is measured against.
    const start = {
      tools: STOCK_TOOLS,
      closeAfterFirstReply: true,
      promptCaching: false,
      streaming: { enabled: false },
    };
    try {
      const t0 = performance.now();
      const floodIds = await Promise.all(
        Array.from({ length: how.flood }, (_, i) =>
          conversations.startConversation({
            ...start,
            ...(how.keys && { tenant: 'tenant-a' }),
            id: `bench-fairness-a-${name}-${i}-${randomUUID().slice(0, 8)}`,
            firstMessage: `${STOCK_QUESTION} [a ${i}]`,
          }),
        ),
      );
      if (how.flood > 0) log(`${name}: tenant A's ${how.flood} conversations started`);
      const times = await Promise.all(
        Array.from({ length: few }, async (_, i) => {
          const begin = performance.now();
          await conversations.sendMessage(
            `bench-fairness-b-${name}-${i}-${randomUUID().slice(0, 8)}`,
            `${STOCK_QUESTION} [b ${i}]`,
            {
              start: { ...start, ...(how.keys && { tenant: 'tenant-b' }) },
              ...(how.fewPriority !== undefined && { priority: how.fewPriority }),
              timeoutMs: 1_800_000,
            },
          );
          return performance.now() - begin;
        }),
      );
      log(`${name}: tenant B's ${few} answered, p50 ${Math.round(percentile(times, 0.5))} ms`);
      await Promise.all(floodIds.map((id) => client.workflow.getHandle(id).result()));
      const floodMs = how.flood > 0 ? performance.now() - t0 : 0;
      if (how.flood > 0) log(`${name}: tenant A's flood answered in ${(floodMs / 1000).toFixed(1)} s`);
      return { name, few: times.sort((a, b) => a - b), floodMs };
    } finally {
      worker.shutdown();
      await running;
      await workerConnection.close();
    }
  }

  const phases: Phase[] = [];
  try {
    phases.push(await phase('alone', { flood: 0, keys: true }));
    phases.push(await phase('flood-with-keys', { flood, keys: true }));
    phases.push(await phase('flood-without-keys', { flood, keys: false }));
    if (flags.on('priority')) phases.push(await phase('flood-b-priority-1', { flood, keys: false, fewPriority: 1 }));
  } finally {
    await close();
  }

  const alone = percentile(phases[0]!.few, 0.5);
  const described: Record<string, string> = {
    alone: 'B alone',
    'flood-with-keys': "B under A's flood, fairness keys (tenant-a, tenant-b)",
    'flood-without-keys': "B under A's flood, no keys",
    'flood-b-priority-1': "B under A's flood, no keys, B's messages at priority 1",
  };
  printTables([
    {
      title: `Fairness — tenant A floods ${flood} conversations, tenant B starts ${few} just after (the stock chain: 3 model calls, 2 tools); worker with ${activitySlots} activity and ${workflowSlots} workflow task slots; ${partitions} task queue partition${partitions === 1 ? '' : 's'}; model latency ${latencyMs} ms`,
      headers: ['phase', "B's p50", "B's max", 'p50 / alone', "A's flood took"],
      rows: phases.map((p) => [
        described[p.name] ?? p.name,
        seconds(percentile(p.few, 0.5)),
        seconds(p.few.at(-1)!),
        `${(percentile(p.few, 0.5) / alone).toFixed(2)}×`,
        p.floodMs > 0 ? seconds(p.floodMs) : '–',
      ]),
    },
  ]);
  console.log(
    `load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const written = await writeResults('results', 'fairness', started, {
    json: JSON.stringify({ flood, few, activitySlots, workflowSlots, partitions, latencyMs, phases }, null, 2),
  });
  console.log(`results: ${written}`);
  return 0;
}

function percentile(sorted: readonly number[], q: number): number {
  const values = [...sorted].sort((a, b) => a - b);
  // Nearest rank: the smallest value with at least q of them at or below it.
  return values[Math.max(0, Math.ceil(q * values.length) - 1)] ?? NaN;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(2)} s`;
}

runMain(main);
