// The moment a conversation stops for a person's approval of a tool call: what a test waits for before it approves or
// rejects. Asked of the conversation's state, which may not exist yet (the update that starts it may not have run).
import type { ConversationClient } from '../../client/conversation-client';
import { type WaitOptions, waitUntil } from './wait-until';

type ConversationSnapshot = Awaited<ReturnType<ConversationClient['getState']>>;

/** The conversation's state once it waits for the approval of `approvals` tool calls or more (default one). */
export function stateAwaitingApproval(
  conversations: Pick<ConversationClient, 'getState'>,
  id: string,
  { approvals = 1, ...wait }: WaitOptions & { approvals?: number } = {},
): Promise<ConversationSnapshot> {
  return waitUntil(
    `${id} to ask for ${approvals} approval(s)`,
    async () => {
      const state = await conversations.getState(id);
      return state.pendingApprovals.length >= approvals && state;
    },
    wait,
  );
}

/** The first tool call the conversation asks a person to approve, once it asks. */
export async function approvalAskedFor(
  conversations: Pick<ConversationClient, 'getState'>,
  id: string,
  wait?: WaitOptions,
): Promise<ConversationSnapshot['pendingApprovals'][number]> {
  return (await stateAwaitingApproval(conversations, id, wait)).pendingApprovals[0]!;
}
