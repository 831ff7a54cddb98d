// `npm run bench:mcp`: what one MCP tool call costs over one built-in tool call, each as its own activity. One worker
// (in this process) runs three conversations of N sequential tool calls each: a built-in `echo` (defineTool), then
// server-everything's `echo` over stdio, then over Streamable HTTP, all answering `Echo: <message>`. Per call, from
// the workflow history: scheduled → completed (what the conversation waits for: dispatch, run, completion) and
// started → completed (the worker's side). Also the SDK client's own round trip (callTool) outside Temporal, N times
// per transport. Prints medians; `--json FILE` writes every sample (`npm run bench:mcp -- --help`).
import fsp from 'node:fs/promises';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { McpClientPool } from '../../activities/mcp/mcp-client-pool';
import { parseMcpServers } from '../../activities/mcp/mcp-server-config';
import type { StartOptions } from '../../client/call-options';
import { startEverythingHttpServer } from '../everything-http-server';
import { runMain } from '../script-main';
import { Flags } from './args';
import { echoCalls, echoTool } from './chain-script';
import { progressLog, withBench } from './context';
import { printTables } from './table';
import { collect } from './history';
import { runOne } from './load';
import { summarize } from './measure';
import { startOursInProcess } from './systems';

const VARIANTS: { label: string; tool: string; activityType: string; send: Omit<StartOptions, 'id'> }[] = [
  { label: 'built-in tool (defineTool)', tool: 'echo', activityType: 'echo', send: { tools: ['echo'] } },
  {
    label: 'MCP tool, stdio',
    tool: 'everything__echo',
    activityType: 'callMcpTool',
    send: { tools: [], mcpServers: [{ server: 'everything', tools: ['echo'] }] },
  },
  {
    label: 'MCP tool, Streamable HTTP',
    tool: 'http__echo',
    activityType: 'callMcpTool',
    send: { tools: [], mcpServers: [{ server: 'http', tools: ['echo'] }] },
  },
];

const HELP = `npm run bench:mcp -- [options]

  --calls N    sequential tool calls per conversation, 1 to 1000 (default 100)
  --json FILE  write every sample there`;

async function main(): Promise<number> {
  const flags = Flags.read(process.argv.slice(2), HELP);
  if (!flags) return 0;
  const calls = flags.int('calls', 100, { max: 1000 });
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const log = progressLog('bench:mcp');
  const machine = `${process.platform} ${process.arch}, node ${process.version}`;
  const results: Record<string, Record<string, number[]>> = {};
  await withBench({ log, bundles: 'none' }, async (ctx) => {
    const http = await startEverythingHttpServer();
    const everything = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
    const mcp = new McpClientPool(
      parseMcpServers(
        { everything: { command: process.execPath, args: [everything] }, http: { type: 'http', url: http.url } },
        {},
      ),
    );
    const ours = await startOursInProcess(ctx, { tools: [echoTool], mcp });
    try {
      // The SDK client alone: the floor any MCP tool call pays.
      for (const [label, name] of [
        ['SDK callTool, stdio', 'everything'],
        ['SDK callTool, Streamable HTTP', 'http'],
      ] as const) {
        const roundTrip: number[] = [];
        for (let i = 0; i < calls + 5; i++) {
          const started = performance.now();
          await mcp.callTool(name, { name: 'echo', arguments: { message: `m${i}` } });
          if (i >= 5) roundTrip.push(performance.now() - started);
        }
        results[label] = { roundTrip };
      }
      for (const variant of VARIANTS) {
        log(`${variant.label}: ${calls} calls…`);
        ours.send = { ...variant.send, closeAfterFirstReply: true };
        const label = `bench-mcp-${variant.activityType}`;
        const script = echoCalls(variant.tool, calls);
        const { conversation } = await runOne(ctx, ours, { steps: calls, label, script, historySample: 0 });
        // Per call, from the history: scheduled → completed and started → completed.
        const events = (await ctx.client.workflow.getHandle(conversation.id).fetchHistory()).events ?? [];
        const activities = collect(events).activities.filter((a) => a.type === variant.activityType);
        results[variant.label] = {
          scheduledToCompleted: activities.map((a) => a.closedAt - a.scheduledAt),
          startedToCompleted: activities.map((a) => a.closedAt - a.startedAt),
        };
      }
    } finally {
      await ours.stop();
      await mcp.close();
      await http.close();
    }
  });

  const cell = (samples: number[] | undefined) => {
    const s = samples && summarize(samples);
    return s ? `${s.p50.toFixed(2)} (${s.p95.toFixed(2)})` : '—';
  };
  const median = (label: string) => summarize(results[label]!.scheduledToCompleted!).p50;
  const builtIn = median(VARIANTS[0]!.label);
  printTables([
    {
      title: `Per tool call, ${calls} sequential calls each, median (p95) in ms — ${machine}`,
      headers: ['what', 'scheduled→completed', 'started→completed'],
      rows: Object.entries(results).map(([label, r]) => [
        label,
        cell(r.roundTrip ?? r.scheduledToCompleted),
        cell(r.startedToCompleted),
      ]),
      notes: VARIANTS.slice(1).map(
        (variant) =>
          `overhead of ${variant.label} over the built-in tool: ${(median(variant.label) - builtIn).toFixed(2)} ms per call (median)`,
      ),
    },
  ]);
  const json = flags.string('json');
  if (json) await fsp.writeFile(json, JSON.stringify({ calls, machine, ...results }, null, 2));
  return 0;
}

runMain(main);
