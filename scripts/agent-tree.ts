// The tree `npm run demo:agents` prints once a coordinator has answered: the conversation, the sub-agents it started
// (from its event log's agent_started events), each one's tool calls (from its transcript), what each cost on its
// own, and the total — the coordinator's own model calls plus its sub-agents', which its conversation cost counts.
import type { ConversationClient } from '../client/conversation-client';
import { toolCallSummary } from '../common/summaries';

export interface ToolCallNode {
  call: string;
  result: string;
  isError: boolean;
}

export interface AgentNode {
  id: string;
  tool: string;
  task: string;
  status: string;
  modelCalls: number;
  costUsd: number | null;
  calls: ToolCallNode[];
  /** When its workflow started and closed, in ms after the coordinator's start (the server's times). */
  ranMs: { from: number; to: number };
}

export interface ConversationTree {
  id: string;
  /** The coordinator's own model calls' cost: its `model_call_finished` events. */
  ownCostUsd: number | null;
  ownModelCalls: number;
  /** The coordinator's conversation cost: its own and its sub-agents'. */
  totalCostUsd: number | null;
  agents: AgentNode[];
}

const add = (a: number | null, b: number | null | undefined): number | null =>
  a === null || b === null || b === undefined ? null : a + b;

/** Reads the finished conversation `id` and its sub-agents (the worker must still run: it answers the queries). */
export async function readConversationTree(conversations: ConversationClient, id: string): Promise<ConversationTree> {
  let ownCostUsd: number | null = 0;
  let ownModelCalls = 0;
  const started: Array<{ agentId: string; tool: string; task: string }> = [];
  for await (const { event } of conversations.events(id, { fromOffset: 0, agents: 'none' })) {
    if (event.type === 'model_call_finished') {
      ownModelCalls += 1;
      ownCostUsd = add(ownCostUsd, event.costUsd ?? null);
    }
    if (event.type === 'agent_started') started.push(event);
    if (event.type === 'conversation_ended') break;
  }
  const agents: AgentNode[] = [];
  const parentStart = (await conversations.handle(id).describe()).startTime.getTime();
  for (const { agentId, tool, task } of started) {
    const result = await conversations.waitForResult(agentId);
    const run = await conversations.handle(agentId).describe();
    const ranMs = {
      from: run.startTime.getTime() - parentStart,
      to: (run.closeTime?.getTime() ?? Number.NaN) - parentStart,
    };
    const transcript = await conversations.getTranscript(agentId);
    const calls: ToolCallNode[] = [];
    const byId = new Map<string, ToolCallNode>();
    for (const message of transcript) {
      if (typeof message.content === 'string') continue;
      for (const block of message.content) {
        if (block.type === 'tool_use') {
          const node = {
            call: toolCallSummary(block.name, block.input as Record<string, unknown>),
            result: '',
            isError: false,
          };
          byId.set(block.id, node);
          calls.push(node);
        } else if (block.type === 'tool_result') {
          const node = byId.get(block.tool_use_id);
          if (!node) continue;
          node.result =
            typeof block.content === 'string'
              ? block.content
              : (block.content ?? []).map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join(' ');
          node.isError = block.is_error === true;
        }
      }
    }
    agents.push({
      id: agentId,
      tool,
      task,
      status: result.agentAnswer?.status ?? result.status,
      modelCalls: result.modelCalls,
      costUsd: result.costUsd,
      calls,
      ranMs,
    });
  }
  const state = await conversations.getState(id);
  return { id, ownCostUsd, ownModelCalls, totalCostUsd: state.costUsd, agents };
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
const usd = (value: number | null): string => (value === null ? 'cost unknown' : `$${value.toFixed(4)}`);

/** The tree as lines: the conversation, its sub-agents, their tool calls; then the costs adding up to the total. */
export function renderConversationTree(
  tree: ConversationTree,
  options: { link(id: string): string | undefined; note?(agentId: string, call: string): string | undefined },
): string[] {
  const lines = [`${tree.id}  (coordinator: ${tree.ownModelCalls} model calls, ${usd(tree.ownCostUsd)})`];
  const link = options.link(tree.id);
  if (link) lines.push(`│   Web UI: ${link}`);
  tree.agents.forEach((agent, i) => {
    const last = i === tree.agents.length - 1;
    const stem = last ? '    ' : '│   ';
    lines.push(
      `${last ? '└─' : '├─'} ${agent.tool} → ${agent.id}  (sub-agent, ${agent.status}: ${agent.modelCalls} model calls, ${usd(agent.costUsd)})`,
    );
    lines.push(`${stem}   task: ${agent.task}`);
    lines.push(
      `${stem}   ran: ${seconds(agent.ranMs.from)} → ${seconds(agent.ranMs.to)} after the coordinator's start`,
    );
    const childLink = options.link(agent.id);
    if (childLink) lines.push(`${stem}   Web UI: ${childLink}`);
    agent.calls.forEach((call, j) => {
      const branch = j === agent.calls.length - 1 ? '└─' : '├─';
      const note = options.note?.(agent.id, call.call);
      lines.push(
        `${stem}   ${branch} ${call.call} → ${call.isError ? 'error: ' : ''}${call.result.trim()}${note ? `  (${note})` : ''}`,
      );
    });
  });
  if (tree.agents.length > 1) {
    // Sub-agents of one reply run at once: the latest start comes before the earliest end.
    const overlap = Math.min(...tree.agents.map((a) => a.ranMs.to)) - Math.max(...tree.agents.map((a) => a.ranMs.from));
    lines.push(
      '',
      overlap > 0
        ? `The ${tree.agents.length} sub-agents ran at once: all of them were running for ${seconds(overlap)}.`
        : `The ${tree.agents.length} sub-agents did not all run at once.`,
    );
  }
  const parts = [usd(tree.ownCostUsd), ...tree.agents.map((agent) => usd(agent.costUsd))];
  const sum = tree.agents.reduce((total, agent) => add(total, agent.costUsd), tree.ownCostUsd);
  lines.push(
    '',
    `Cost: coordinator ${parts[0]} + sub-agents ${parts.slice(1).join(' + ')} = ${usd(sum)}; ` +
      `the coordinator's conversation cost (its sub-agents' included): ${usd(tree.totalCostUsd)}`,
  );
  return lines;
}
