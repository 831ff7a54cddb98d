// `npm run bench:mcp`: what one MCP tool call costs over one built-in tool call, each as its own activity. One worker
// (in this process) runs three conversations of N sequential tool calls each: a built-in `echo` (defineTool), then
// server-everything's `echo` over stdio, then over Streamable HTTP, all answering `Echo: <message>`. Per call, from
// the workflow history: scheduled → completed (what the conversation waits for: dispatch, run, completion) and
// started → completed (the worker's side). Also the SDK client's own round trip (callTool) outside Temporal, N times
// per transport. Prints medians; `--json FILE` writes every sample.
//
//   npm run bench:mcp                  100 calls each
//   npm run bench:mcp -- --calls 300 --json results/mcp-overhead.json
import fsp from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { McpClientPool } from '../../activities/mcp/mcp-client-pool';
import { parseMcpServers } from '../../activities/mcp/mcp-server-config';
import { ConversationClient, type StartOptions } from '../../client/conversation-client';
import { connectOrStartDevServer } from '../../testing/dev-server';
import { startMessagesApi } from '../../testing/messages-api/server';
import { createAnthropic } from '../../workers/anthropic-client';
import { createConversationWorker } from '../../workers/conversation-worker';
import { startEverythingHttpServer } from '../everything-http-server';
import { runMain, UsageError } from '../script-main';
import { echoTool, scriptToolCalls } from './chain-script';
import { summarize } from './measure';
import { collect } from './history';

interface Variant {
  label: string;
  tool: string;
  activityType: string;
  options: Omit<StartOptions, 'id'>;
}

const VARIANTS: Variant[] = [
  { label: 'built-in tool (defineTool)', tool: 'echo', activityType: 'echo', options: { tools: ['echo'] } },
  {
    label: 'MCP tool, stdio',
    tool: 'everything__echo',
    activityType: 'callMcpTool',
    options: { mcpServers: [{ server: 'everything', tools: ['echo'] }] },
  },
  {
    label: 'MCP tool, Streamable HTTP',
    tool: 'http__echo',
    activityType: 'callMcpTool',
    options: { mcpServers: [{ server: 'http', tools: ['echo'] }] },
  },
];

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { calls: { type: 'string', default: '100' }, json: { type: 'string' } } });
  const calls = Number(values.calls);
  if (!Number.isInteger(calls) || calls < 1 || calls > 1000) throw new UsageError('--calls: a whole number, 1 to 1000');
  Runtime.install({ logger: new DefaultLogger('ERROR') });

  const server = await connectOrStartDevServer({ log: (line) => process.stderr.write(`[temporal] ${line}\n`) });
  const mock = await startMessagesApi();
  const http = await startEverythingHttpServer();
  const mcp = new McpClientPool(
    parseMcpServers(
      {
        everything: {
          command: process.execPath,
          args: [require.resolve('@modelcontextprotocol/server-everything/dist/index.js')],
        },
        http: { type: 'http', url: http.url },
      },
      {},
    ),
  );
  const taskQueue = `bench-mcp-${randomUUID()}`;
  const workerConnection = await NativeConnection.connect({ address: server.address });
  const worker = await createConversationWorker({
    connection: workerConnection,
    namespace: server.namespace,
    taskQueue,
    anthropic: createAnthropic({ ANTHROPIC_BASE_URL: mock.url }),
    tools: [echoTool],
    mcp,
  });
  const running = worker.run();
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection, namespace: server.namespace });
  const conversations = new ConversationClient({ client, taskQueue, tools: ['echo'], mcpServers: mcp.serverNames });

  const results: Record<string, unknown> = {
    calls,
    machine: `${process.platform} ${process.arch}, node ${process.version}`,
  };
  const rows: string[] = [];
  try {
    // The SDK client alone: the floor any MCP tool call pays.
    for (const [label, name] of [
      ['SDK callTool, stdio', 'everything'],
      ['SDK callTool, Streamable HTTP', 'http'],
    ] as const) {
      const samples: number[] = [];
      for (let i = 0; i < calls + 5; i++) {
        const started = performance.now();
        await mcp.callTool(name, { name: 'echo', arguments: { message: `m${i}` } });
        if (i >= 5) samples.push(performance.now() - started);
      }
      results[label] = { roundTrip: samples };
      rows.push(row(label, samples, undefined));
    }

    for (const variant of VARIANTS) {
      const prompt = `bench ${variant.tool} ${randomUUID()}`;
      scriptToolCalls(mock, prompt, variant.tool, calls);
      const id = `bench-mcp-${variant.activityType}-${randomUUID().slice(0, 8)}`;
      process.stderr.write(`[bench:mcp] ${variant.label}: ${calls} calls…\n`);
      await conversations.sendMessage(id, prompt, {
        start: {
          ...variant.options,
          closeAfterFirstReply: true,
          limits: { maxModelCallsPerTurn: calls + 10, maxToolCallsPerTurn: calls + 10 },
        },
      });
      const { scheduledToCompleted, startedToCompleted } = await activityDurations(client, id, variant.activityType);
      results[variant.label] = { scheduledToCompleted, startedToCompleted };
      rows.push(row(variant.label, scheduledToCompleted, startedToCompleted));
    }
  } finally {
    worker.shutdown();
    await running;
    await mcp.close();
    await http.close();
    await workerConnection.close();
    await connection.close();
    await mock.close();
    await server.stop();
  }

  const median = (label: string) =>
    summarize((results[label] as { scheduledToCompleted: number[] }).scheduledToCompleted).p50;
  console.log(`\nPer tool call, ${calls} sequential calls each, median (p95) in ms — ${results.machine}`);
  console.log(`${'what'.padEnd(34)}${'scheduled→completed'.padStart(22)}${'started→completed'.padStart(22)}`);
  for (const line of rows) console.log(line);
  const builtIn = median(VARIANTS[0]!.label);
  for (const variant of VARIANTS.slice(1)) {
    console.log(
      `overhead of ${variant.label} over the built-in tool: ${(median(variant.label) - builtIn).toFixed(2)} ms per call (median)`,
    );
  }
  if (values.json) await fsp.writeFile(values.json, JSON.stringify(results, null, 2));
  return 0;
}

function row(label: string, first: number[], second: number[] | undefined): string {
  const cell = (samples: number[] | undefined) => {
    if (!samples) return '—'.padStart(22);
    const s = summarize(samples);
    return `${s.p50.toFixed(2)} (${s.p95.toFixed(2)})`.padStart(22);
  };
  return `${label.padEnd(34)}${cell(first)}${cell(second)}`;
}

/** Per activity of `type` in the conversation's history: scheduled→completed and started→completed. */
async function activityDurations(client: Client, id: string, type: string) {
  const events = (await client.workflow.getHandle(id).fetchHistory()).events ?? [];
  const activities = collect(events).activities.filter((a) => a.type === type);
  return {
    scheduledToCompleted: activities.map((a) => a.closedAt - a.scheduledAt),
    startedToCompleted: activities.map((a) => a.closedAt - a.startedAt),
  };
}

runMain(main);
