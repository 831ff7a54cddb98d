// Sub-agents: a tool whose call is a conversation of its own, started as a child workflow (workflows/agent-calls.ts).
// Here the shapes both sides share and the pure rules: what a child is started with (its lineage, checked against
// the workflow's real parent), its id, how deep and how many, and the share of the parent's budget it may spend.
// Workflow-safe: types, zod and arithmetic only.
import { z } from 'zod';
import type { BudgetOptions, BudgetLimit, Spent } from './budget';
import { wellFormedText } from './safe-text';
import { sharedOnce } from './shared-once';
import { DEFAULT_MAX_AGENT_DEPTH, MAX_AGENT_DEPTH } from './agent-limits';

export * from './agent-limits';

/** What a child conversation may take at most, unless its tool says otherwise. */
export const DEFAULT_AGENT_TIMEOUT = '10 minutes';
/** Characters of a task: the child's first message (the user-message limit of any conversation). */
export const MAX_AGENT_TASK_CHARS = 100_000;

/**
 * How the workflow starts the child of an agent tool: the tool definition on the worker is the only source (never the
 * model's input). Carried in the tool's ToolPolicy (common/tool-policy.ts).
 */
export interface AgentPolicy {
  /**
   * The child's conversation options, as a client gives them (ConversationOptionsInput: checked when the tool was
   * defined, and again when each child starts). Plain JSON here, so this leaf needs nothing of options.ts.
   */
  options: Readonly<Record<string, unknown>>;
  /** How long the whole child may run (its workflow execution timeout). */
  timeout: string;
  /** The task queue the child runs on (default: the parent's). */
  taskQueue?: string;
}

/**
 * Where a child conversation sits: its parent, the call that started it, how deep it is and the agent tools above it
 * (a tool already among them would be a cycle). A conversation started with one checks that its workflow's parent is
 * `parentId` (workflows/conversation.ts), so no caller can claim to be a sub-agent.
 */
export interface AgentLineage {
  parentId: string;
  /** The parent's call id (tool_use id) this child answers. */
  callId: string;
  /** The agent tool that started it. */
  tool: string;
  /** 1 for a child of a root conversation. */
  depth: number;
  /** How deep the tree may go: the root conversation's limit, handed down. */
  maxDepth: number;
  /** The agent tools from the root down to this child, this child's own last. */
  path: string[];
}

export const agentLineageSchema = sharedOnce(
  'agents.agentLineageSchema',
  () =>
    z.strictObject({
      parentId: wellFormedText(1_000, 'parentId').min(1),
      callId: wellFormedText(256, 'callId').min(1),
      tool: wellFormedText(64, 'tool').min(1),
      depth: z.number().int().min(1).max(MAX_AGENT_DEPTH),
      maxDepth: z.number().int().min(1).max(MAX_AGENT_DEPTH),
      path: z.array(wellFormedText(64, 'path')).min(1).max(MAX_AGENT_DEPTH),
    }) satisfies z.ZodType<AgentLineage>,
);

/** An agent tool's input, as the model writes it: one task, in words (its JSON Schema is what the model is shown). */
export const agentTaskSchema = sharedOnce('agents.agentTaskSchema', () =>
  z.strictObject({
    task: wellFormedText(MAX_AGENT_TASK_CHARS, 'task')
      .refine((text) => text.trim() !== '', 'task is empty')
      .describe('The task for the sub-agent, complete in itself: it sees nothing else of this conversation.'),
  }),
);

/**
 * The child's workflow id: under its parent's, named by the call's `ref` (model call and place in the reply, unique
 * for the parent's whole life, whatever ids the model invents) and the tool. The same call always gets the same id,
 * so a replayed or retried start finds the child it started and never starts a second one.
 */
export function agentChildId(parentId: string, ref: string, tool: string): string {
  return `${parentId}/agent-${ref}-${tool}`;
}

/**
 * Whether conversation `agent` is `child` or one of its descendants: every sub-agent's id is under its parent's
 * (agentChildId), so news a child passes up can only be about its own subtree.
 */
export function isInSubtree(agent: string, child: string): boolean {
  return agent === child || agent.startsWith(`${child}/agent-`);
}

/** Why a new child may not start under `lineage` (undefined: it may). */
export function refuseAgentCall(lineage: AgentLineage | undefined, tool: string, maxDepth: number): string | undefined {
  const depth = (lineage?.depth ?? 0) + 1;
  if (depth > maxDepth) {
    return `AgentDepthExceeded: ${tool} would run ${depth} sub-agents deep; this conversation allows ${maxDepth}.`;
  }
  if (lineage?.path.includes(tool)) {
    return `AgentCycle: ${tool} is already running above this sub-agent (${lineage.path.join(' → ')}).`;
  }
  return undefined;
}

/**
 * How deep the tree under a conversation may go: a root's own limit (`limits.maxAgentDepth`, default
 * DEFAULT_MAX_AGENT_DEPTH); a sub-agent's is the one its lineage hands down from the root, which its own options may
 * lower but never raise (a child's default must not undo the root's limit).
 */
export function agentDepthLimit(lineage: AgentLineage | undefined, own: number | undefined): number {
  if (!lineage) return own ?? DEFAULT_MAX_AGENT_DEPTH;
  return own === undefined ? lineage.maxDepth : Math.min(lineage.maxDepth, own);
}

/** The lineage of a child started by `tool` from a conversation with `lineage` (none: a root). */
export function childLineage(
  parent: { id: string; lineage: AgentLineage | undefined; maxDepth: number },
  callId: string,
  tool: string,
): AgentLineage {
  const above = parent.lineage;
  return {
    parentId: parent.id,
    callId,
    tool,
    depth: (above?.depth ?? 0) + 1,
    maxDepth: Math.min(above?.maxDepth ?? parent.maxDepth, parent.maxDepth),
    path: [...(above?.path ?? []), tool],
  };
}

/** What is left of one limit after `spent` (undefined: no limit). */
function leftOf(limit: BudgetLimit | undefined, spent: Spent): { tokens?: number; usd?: number } | undefined {
  if (!limit) return undefined;
  return {
    ...(limit.tokens !== undefined && { tokens: limit.tokens - spent.tokens }),
    // An unknown cost (a model without a price) leaves the USD limit as it is: the child's own check will refuse.
    ...(limit.usd !== undefined && { usd: limit.usd - (spent.usd ?? 0) }),
  };
}

const smaller = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined ? b : b === undefined ? a : Math.min(a, b);

/**
 * The budget a child may spend: its own tool's, lowered to an equal share (`share` of the reply's sub-agents) of what
 * is left of the parent's turn and conversation budgets. `exhausted`: the parent has nothing left to give, and starts
 * no child. A child is a one-turn conversation, so its limit is written per conversation (and per turn, the same).
 */
export function childBudget(
  own: Partial<NonNullable<BudgetOptions>> | undefined,
  parent: { budget: BudgetOptions; spent: { turn: Spent; conversation: Spent } },
  share: number,
): { budget: BudgetOptions } | { exhausted: string } {
  const turnLeft = leftOf(parent.budget?.perTurn, parent.spent.turn);
  const conversationLeft = leftOf(parent.budget?.perConversation, parent.spent.conversation);
  const left = {
    tokens: smaller(turnLeft?.tokens, conversationLeft?.tokens),
    usd: smaller(turnLeft?.usd, conversationLeft?.usd),
  };
  if ((left.tokens !== undefined && left.tokens <= 0) || (left.usd !== undefined && left.usd <= 0)) {
    return { exhausted: 'BudgetExhausted: the conversation has no budget left for a sub-agent.' };
  }
  const ownLimit = {
    tokens: smaller(own?.perTurn?.tokens, own?.perConversation?.tokens),
    usd: smaller(own?.perTurn?.usd, own?.perConversation?.usd),
  };
  const tokens = smaller(ownLimit.tokens, left.tokens === undefined ? undefined : Math.floor(left.tokens / share));
  const usd = smaller(ownLimit.usd, left.usd === undefined ? undefined : left.usd / share);
  if (tokens === undefined && usd === undefined) return { budget: own && { estimate: 'last-call', ...own } };
  if ((tokens !== undefined && tokens < 1) || (usd !== undefined && usd <= 0)) {
    return { exhausted: 'BudgetExhausted: what is left of the budget is too little to share among the sub-agents.' };
  }
  const limit = { ...(tokens !== undefined && { tokens }), ...(usd !== undefined && { usd }) };
  return {
    budget: {
      estimate: own?.estimate ?? parent.budget?.estimate ?? 'last-call',
      perTurn: limit,
      perConversation: limit,
    },
  };
}
