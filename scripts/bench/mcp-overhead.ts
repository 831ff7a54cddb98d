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
import { parseArgs } from 'node:util';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { McpClientPool } from '../../activities/mcp/mcp-client-pool';
import { parseMcpServers } from '../../activities/mcp/mcp-server-config';
import { ConversationClient, type StartOptions } from '../../client/conversation-client';
import { startEverythingHttpServer } from '../everything-http-server';
import { runMain, UsageError } from '../script-main';
import { parseArgs as benchArgs } from './args';
import { echoChain, echoTool } from './chain-script';
import { inProcessWorker, openBench } from './context';
import { collect } from './history';
import { summarize } from './measure';
import { textTable } from './table';

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
  const log = (line: string) => void process.stderr.write(`[bench:mcp] ${line}\n`);
  const { ctx, close } = await openBench(benchArgs([])!, { log, bundles: 'none' });
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
  const worker = await inProcessWorker(ctx, { tools: [echoTool], mcp });
  const { client } = ctx;
  const taskQueue = worker.taskQueue;
  const conversations = new ConversationClient({ client, taskQueue, tools: ['echo'], mcpServers: mcp.serverNames });
  const machine = `${process.platform} ${process.arch}, node ${process.version}`;
  const results: Record<string, unknown> = { calls, machine };
  const rows: string[][] = [];
  const cell = (samples: number[] | undefined) => {
    const s = samples && summarize(samples);
    return s ? `${s.p50.toFixed(2)} (${s.p95.toFixed(2)})` : '—';
  };
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
      rows.push([label, cell(samples), cell(undefined)]);
    }
    for (const variant of VARIANTS) {
      log(`${variant.label}: ${calls} calls…`);
      const label = `bench-mcp-${variant.activityType}`;
      const id = await echoChain(ctx.mock, conversations, label, variant.tool, calls, variant.options);
      // Per call, from the history: scheduled → completed and started → completed.
      const events = (await client.workflow.getHandle(id).fetchHistory()).events ?? [];
      const activities = collect(events).activities.filter((a) => a.type === variant.activityType);
      const scheduledToCompleted = activities.map((a) => a.closedAt - a.scheduledAt);
      const startedToCompleted = activities.map((a) => a.closedAt - a.startedAt);
      results[variant.label] = { scheduledToCompleted, startedToCompleted };
      rows.push([variant.label, cell(scheduledToCompleted), cell(startedToCompleted)]);
    }
  } finally {
    await worker.stop();
    await mcp.close();
    await http.close();
    await close();
  }

  const median = (label: string) =>
    summarize((results[label] as { scheduledToCompleted: number[] }).scheduledToCompleted).p50;
  console.log(`\nPer tool call, ${calls} sequential calls each, median (p95) in ms — ${machine}`);
  console.log(textTable(['what', 'scheduled→completed', 'started→completed'], rows));
  const builtIn = median(VARIANTS[0]!.label);
  for (const variant of VARIANTS.slice(1)) {
    console.log(
      `overhead of ${variant.label} over the built-in tool: ${(median(variant.label) - builtIn).toFixed(2)} ms per call (median)`,
    );
  }
  if (values.json) await fsp.writeFile(values.json, JSON.stringify(results, null, 2));
  return 0;
}

runMain(main);
