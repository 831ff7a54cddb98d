// The signals a sub-agent and its parent send each other: a workflow cannot send another an update, so an approval
// that waits in a child goes up as a signal, and the decision comes down as one (workflows/agent-approvals.ts). Each is
// checked with its schema on arrival, whoever sent it.
import { defineSignal } from '@temporalio/workflow';
import { z } from 'zod';
import type { ApprovalDecision, PendingApproval } from './conversation-types';
import { wellFormedText } from './safe-text';
import { sharedOnce } from './shared-once';
import { approvalDecisionSchema, MAX_CALL_ID_CHARS } from './workflow-messages';

/** A child's approval news for its parent: `from` is the child sending it, `approval.agent` whose call it is. */
export type AgentApprovalNews =
  | { kind: 'requested'; from: string; approval: PendingApproval & { agent: string } }
  | { kind: 'settled'; from: string; agent: string; callId: string; outcome: 'approved' | 'rejected' | 'timed_out' };

export const agentApprovalSignal = defineSignal<[news: AgentApprovalNews]>('agentApproval');
/** A person's decision on a sub-agent's call, on its way down to the conversation whose call it is (`agent`). */
export const agentDecisionSignal = defineSignal<[decision: ApprovalDecision & { agent: string }]>('agentDecision');

const id = () => wellFormedText(1_000, 'id').min(1);
const callId = () => wellFormedText(MAX_CALL_ID_CHARS, 'callId').min(1);

export const agentApprovalNewsSchema = sharedOnce(
  'agentMessages.agentApprovalNewsSchema',
  () =>
    z.discriminatedUnion('kind', [
      z.strictObject({
        kind: z.literal('requested'),
        from: id(),
        approval: z.strictObject({
          callId: callId(),
          tool: wellFormedText(256, 'tool'),
          // A tool's input as its conversation checked it: bounded by that conversation's limits already.
          input: z.record(z.string(), z.unknown()),
          argumentsDigest: wellFormedText(128, 'argumentsDigest').min(1),
          requestedAt: wellFormedText(64, 'requestedAt'),
          agent: id(),
        }),
      }),
      z.strictObject({
        kind: z.literal('settled'),
        from: id(),
        agent: id(),
        callId: callId(),
        outcome: z.enum(['approved', 'rejected', 'timed_out']),
      }),
    ]) satisfies z.ZodType<AgentApprovalNews>,
);

export const agentDecisionSchema = sharedOnce('agentMessages.agentDecisionSchema', () =>
  approvalDecisionSchema.extend({ agent: id() }),
);
