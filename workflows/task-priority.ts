// The Priority each activity and sub-agent of the current turn is scheduled with (common/fairness.ts): the workflow's
// own tenant and priority, as its start gave them, with the turn's message's priority in place of the conversation's.
// Nothing when neither says anything: such a conversation's commands are the same as before priorities existed, so
// the histories recorded then replay unchanged.
import type { Priority } from '@temporalio/common';
import { workflowInfo } from '@temporalio/workflow';
import { taskPriority } from '../common/fairness';
import type { ConversationState } from './conversation-state';

/** `{ priority }` to spread into an activity's or a child's options, or `{}` when there is none to give. */
export function turnPriority(state: ConversationState): { priority?: Priority } {
  const priority = taskPriority(workflowInfo().priority, state.currentTurn?.priority);
  return priority ? { priority } : {};
}
