// Sub-agents (issue #33): what an agent tool's call costs the parent, next to a plain tool call. One worker in this
// process offers the built-in `echo` tool and an agent tool `bench_agent` (a child conversation that may call echo);
// every reply is scripted on the local Messages API server (a unique tag per conversation and per child task).
//   1. History bytes of the parent per sub-agent call: a parent with N sequential sub-agent calls (each child answers
//      at once) minus a parent that answers at once, divided by N; the same for N plain tool calls, for comparison.
//   2. Wall time (caller's view) of 2 sub-agents in parallel, each doing one echo call and answering, vs the same work
//      as 2 sequential plain echo calls in the parent, at a model latency (--agents-latency).
//   3. The start overhead of one sub-agent call over one plain tool call, from the server's timestamps: the call's
//      start in the parent (child start initiated / activity scheduled) → the callee's first work running (the
//      child's first model activity started / the tool activity started); and the whole call as the parent waits for it.
// Medians of several runs, the two kinds alternated (--agents-runs).
import { randomUUID } from 'node:crypto';
import { defineAgentTool } from '../../activities/agent-tool-definition';
import type { ToolDefinition } from '../../activities/tool-definition';
import type { ScriptStep } from '../../testing/messages-api/types';
import { echoTool, scriptTagged } from './chain-script';
import type { BenchContext } from './context';
import { encodedBytes, eventMs, type HistoryEvent, runsOf } from './history';
import { ratio, summarize, type Summary } from './measure';
import { startOursInProcess } from './systems';
import { fmtBytes, fmtMs, fmtRatio, type Table } from './table';

const benchAgent = defineAgentTool({
  name: 'bench_agent',
  description: 'Does one task, with the echo tool when the task needs it.',
  agent: { tools: ['echo'] },
});

export interface AgentsResult {
  /** 1: sub-agent calls in the history-size conversation. */
  historyCalls: number;
  history: {
    withoutBytes: number;
    withAgentsBytes: number;
    withToolsBytes: number;
    /** (with N sub-agent calls − without) / N. */
    bytesPerAgentCall: number;
    /** (with N plain tool calls − without) / N. */
    bytesPerToolCall: number;
    /** One child's own history (it answers at once), for scale. */
    childBytes: number;
  };
  /** 2. */
  parallel: { latencyMs: number; runs: number; agents: Summary; tools: Summary; ratioP50: number };
  /** 3. */
  start: { runs: number; agentStartMs: Summary; toolStartMs: Summary; agentCallMs: Summary; toolCallMs: Summary };
}

const answer = (text: string): ScriptStep => ({
  reply: { content: [{ type: 'text', text }], stop_reason: 'end_turn' },
});
const calls = (...uses: Array<{ name: string; input: Record<string, unknown> }>): ScriptStep => ({
  reply: { content: uses.map((use) => ({ type: 'tool_use' as const, ...use })), stop_reason: 'tool_use' },
});
const echo = (message: string) => ({ name: echoTool.name, input: { message } });

export async function runAgents(ctx: BenchContext): Promise<AgentsResult> {
  const { args } = ctx;
  const ours = await startOursInProcess(ctx, {
    tools: [echoTool, benchAgent] as ToolDefinition[],
    ...(ctx.bundles.conversation && { workflowBundlePath: ctx.bundles.conversation }),
  });
  ctx.mock.setLatency(0);
  try {
    /** A child's task: its own tag, so the mock answers it with `steps`. */
    const task = (label: string, steps: ScriptStep[]) => scriptTagged(ctx.mock, label, steps, 'Do this task.');
    const agent = (label: string, steps: ScriptStep[]) => ({
      name: benchAgent.name,
      input: { task: task(label, steps) },
    });
    /** A parent conversation with `steps`, to its end; its id and the caller's wall time. */
    const converse = async (label: string, steps: ScriptStep[], tools: string[]) => {
      const prompt = scriptTagged(ctx.mock, label, steps, 'Go.');
      const id = `bench-agents-${label}-${randomUUID().slice(0, 8)}`;
      const started = performance.now();
      await ours.conversations.sendMessage(id, prompt, { start: { tools, closeAfterFirstReply: true } });
      return { id, wallMs: performance.now() - started };
    };
    const historyBytes = async (id: string) =>
      (await runsOf(ctx.client, id)).reduce((sum, run) => sum + encodedBytes(run.events), 0);

    // Warm-up: the worker's first conversation and first child pay for caches the later ones find filled.
    await converse(
      'warm',
      [calls(agent('warm-child', [calls(echo('w')), answer('ok')]), echo('w')), answer('ok')],
      [benchAgent.name, echoTool.name],
    );

    // 1. History bytes per sub-agent call.
    const n = args.agentsCalls;
    ctx.log(`agents: history of a parent with ${n} sub-agent calls, ${n} plain tool calls, and none`);
    const without = await converse('none', [answer('done')], [benchAgent.name]);
    const withAgents = await converse(
      'agents',
      [...Array.from({ length: n }, (_, i) => calls(agent(`child-${i}`, [answer(`answer ${i}`)]))), answer('done')],
      [benchAgent.name],
    );
    const withTools = await converse(
      'tools',
      [...Array.from({ length: n }, (_, i) => calls(echo(`m${i}`))), answer('done')],
      [echoTool.name],
    );
    const [withoutBytes, withAgentsBytes, withToolsBytes] = await Promise.all(
      [without, withAgents, withTools].map((c) => historyBytes(c.id)),
    );
    const firstChild = (await childrenOf(ctx, withAgents.id))[0];
    const history = {
      withoutBytes: withoutBytes!,
      withAgentsBytes: withAgentsBytes!,
      withToolsBytes: withToolsBytes!,
      bytesPerAgentCall: (withAgentsBytes! - withoutBytes!) / n,
      bytesPerToolCall: (withToolsBytes! - withoutBytes!) / n,
      childBytes: firstChild ? await historyBytes(firstChild) : Number.NaN,
    };

    // 2. Two sub-agents in parallel vs the same work as two sequential plain tool calls.
    const runs = args.agentsRuns;
    const latencyMs = args.agentsLatencyMs;
    ctx.log(`agents: ${runs} × 2 parallel sub-agents vs 2 sequential tool calls at ${latencyMs} ms model latency`);
    ctx.mock.setLatency(latencyMs);
    const parallel = { agents: [] as number[], tools: [] as number[] };
    for (let i = 0; i < runs; i++) {
      const child = (side: string) => agent(`par-${i}-${side}`, [calls(echo(side)), answer(`${side} done`)]);
      parallel.agents.push(
        (await converse(`par-${i}`, [calls(child('a'), child('b')), answer('both done')], [benchAgent.name])).wallMs,
      );
      parallel.tools.push(
        (await converse(`seq-${i}`, [calls(echo('a')), calls(echo('b')), answer('both done')], [echoTool.name])).wallMs,
      );
    }
    ctx.mock.setLatency(0);

    // 3. Start overhead: one sub-agent call vs one plain tool call, from the histories' server timestamps.
    ctx.log(`agents: ${runs * 2 + 1} × one sub-agent call vs one tool call (start overhead)`);
    const start = {
      agentStart: [] as number[],
      toolStart: [] as number[],
      agentCall: [] as number[],
      toolCall: [] as number[],
    };
    for (let i = 0; i < runs * 2 + 1; i++) {
      const one = await converse(
        `one-agent-${i}`,
        [calls(agent(`one-${i}`, [calls(echo('x')), answer('ok')])), answer('ok')],
        [benchAgent.name],
      );
      const parent = await eventsOf(ctx, one.id);
      const initiated = parent.find((e) => e.startChildWorkflowExecutionInitiatedEventAttributes);
      const completed = parent.find((e) => e.childWorkflowExecutionCompletedEventAttributes);
      const childId = initiated?.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId;
      if (!initiated || !completed || !childId) throw new Error(`agents: ${one.id} started no child`);
      const childFirstWork = (await eventsOf(ctx, childId)).find((e) => e.activityTaskStartedEventAttributes);
      if (!childFirstWork) throw new Error(`agents: child ${childId} ran no activity`);
      start.agentStart.push(eventMs(childFirstWork) - eventMs(initiated));
      start.agentCall.push(eventMs(completed) - eventMs(initiated));

      const plain = await converse(`one-tool-${i}`, [calls(echo('x')), answer('ok')], [echoTool.name]);
      const events = await eventsOf(ctx, plain.id);
      const scheduled = events.filter(
        (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === echoTool.name,
      )[0];
      const id = scheduled && String(scheduled.eventId);
      const toolStarted = events.find((e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === id);
      const toolDone = events.find((e) => String(e.activityTaskCompletedEventAttributes?.scheduledEventId) === id);
      if (!scheduled || !toolStarted || !toolDone) throw new Error(`agents: ${plain.id} ran no echo`);
      start.toolStart.push(eventMs(toolStarted) - eventMs(scheduled));
      start.toolCall.push(eventMs(toolDone) - eventMs(scheduled));
    }

    const agents = summarize(parallel.agents);
    const tools = summarize(parallel.tools);
    return {
      historyCalls: n,
      history,
      parallel: { latencyMs, runs, agents, tools, ratioP50: ratio(agents.p50, tools.p50) },
      start: {
        runs: runs * 2 + 1,
        agentStartMs: summarize(start.agentStart),
        toolStartMs: summarize(start.toolStart),
        agentCallMs: summarize(start.agentCall),
        toolCallMs: summarize(start.toolCall),
      },
    };
  } finally {
    ctx.mock.setLatency(0);
    await ours.stop();
  }
}

async function eventsOf(ctx: BenchContext, id: string): Promise<HistoryEvent[]> {
  return (await ctx.client.workflow.getHandle(id).fetchHistory()).events ?? [];
}

/** The children a parent started, from its history (no wait for the visibility store). */
async function childrenOf(ctx: BenchContext, id: string): Promise<string[]> {
  return (await eventsOf(ctx, id)).flatMap(
    (e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId ?? [],
  );
}

export function agentsTables(result: AgentsResult): Table[] {
  const { history: h, parallel: p, start: s } = result;
  const p50 = (summary: Summary) => fmtMs(summary.p50);
  return [
    {
      title: `Sub-agents — the parent's history per call (${result.historyCalls} sequential calls, each its own step)`,
      headers: ['parent conversation', 'history', 'per call'],
      rows: [
        ['answers at once', fmtBytes(h.withoutBytes), ''],
        [`${result.historyCalls} sub-agent calls`, fmtBytes(h.withAgentsBytes), fmtBytes(h.bytesPerAgentCall)],
        [`${result.historyCalls} plain tool calls`, fmtBytes(h.withToolsBytes), fmtBytes(h.bytesPerToolCall)],
      ],
      notes: [
        `per call = (with − answers at once) / ${result.historyCalls}, a model step included; one child's own history ` +
          `(it answers at once): ${fmtBytes(h.childBytes)}`,
      ],
    },
    {
      title: `Sub-agents — wall time, 2 in parallel vs the same work as 2 sequential tool calls (${p.latencyMs} ms model latency, ${p.runs} runs)`,
      headers: ['work', 'p50', 'min', 'max'],
      rows: [
        [
          '2 sub-agents in parallel (each: 1 echo call, answer)',
          p50(p.agents),
          fmtMs(p.agents.min),
          fmtMs(p.agents.max),
        ],
        ['2 sequential echo calls in the parent', p50(p.tools), fmtMs(p.tools.min), fmtMs(p.tools.max)],
      ],
      notes: [
        `ratio parallel sub-agents / sequential tool calls (p50): ${fmtRatio(p.ratioP50)}; model calls: 2 + 2 × 2 vs 3`,
      ],
    },
    {
      title: `Sub-agents — start overhead of one call (server timestamps, median of ${s.runs} runs)`,
      headers: ['call', 'start → work running', 'whole call (parent waits)'],
      rows: [
        ['sub-agent (child start → its first activity started)', p50(s.agentStartMs), p50(s.agentCallMs)],
        ['plain tool (activity scheduled → started)', p50(s.toolStartMs), p50(s.toolCallMs)],
        [
          'overhead of the sub-agent',
          fmtMs(s.agentStartMs.p50 - s.toolStartMs.p50),
          fmtMs(s.agentCallMs.p50 - s.toolCallMs.p50),
        ],
      ],
      notes: ["the sub-agent's whole call includes its 2 model calls (0 ms latency) and its echo call"],
    },
  ];
}
