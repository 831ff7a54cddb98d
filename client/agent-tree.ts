// A conversation and its sub-agents as a tree (issue #33): each node's status, model calls and cost, its children
// listed by the ConversationParent search attribute, recursively. Bounded: MAX_TREE_NODES in all, MAX_TREE_DEPTH deep
// (children past either are counted as `more`, not read).
import type { ConversationStatus } from '../common/conversation-types';
import { ConversationParent } from '../common/search-attributes';
import { type ConversationClient, quote } from './conversation-client';

export const MAX_TREE_NODES = 100;
export const MAX_TREE_DEPTH = 8;

export interface AgentTreeNode {
  id: string;
  /** The conversation's status; undefined when its state could not be read. */
  status?: ConversationStatus;
  modelCalls?: number;
  costUsd?: number | null;
  /** Its Web UI page, when the client knows the UI's address. */
  url?: string;
  children: AgentTreeNode[];
  /** Children not shown: past MAX_TREE_NODES or MAX_TREE_DEPTH. */
  more?: number;
}

/** The tree of `id`'s sub-agents, `id` at its root. */
export async function agentTree(conversations: ConversationClient, id: string): Promise<AgentTreeNode> {
  let budget = MAX_TREE_NODES;
  const node = async (nodeId: string, depth: number): Promise<AgentTreeNode> => {
    budget -= 1;
    const state = await conversations.getState(nodeId).catch(() => undefined);
    const url = conversations.conversationUrl(nodeId);
    const tree: AgentTreeNode = {
      id: nodeId,
      ...(state && { status: state.status, modelCalls: state.modelCalls, costUsd: state.costUsd }),
      ...(url && { url }),
      children: [],
    };
    const ids: string[] = [];
    let more = 0;
    const query = `${ConversationParent.name} = ${quote(nodeId)}`;
    for await (const child of conversations.client.workflow.list({ query })) {
      if (depth < MAX_TREE_DEPTH && ids.length < budget) ids.push(child.workflowId);
      else more += 1;
      if (more > 0 && ids.length >= budget) break; // enough to say there are more
    }
    // Children's ids name their model call and position: in that order, the order the parent asked for them.
    ids.sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
    for (const childId of ids) {
      if (budget <= 0) {
        more += 1;
        continue;
      }
      tree.children.push(await node(childId, depth + 1));
    }
    if (more > 0) tree.more = more;
    return tree;
  };
  return node(id, 0);
}
