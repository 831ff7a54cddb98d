// Running the tool calls of one reply: one activity per call, all calls of a reply at once, outcomes
// in the model's order. Every way a call can go wrong becomes an error outcome the model can read.
import { ActivityFailure } from '@temporalio/common';
import { condition, proxyActivities, setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import type { ToolActivityInput, ToolActivityResult, ToolPolicy } from './activity-contracts';
import type { ConversationState } from './conversation-state';
import { digest } from './digest';
import type { ToolCall, ToolOutcome } from './protocols/types';
import { ConversationAwaitingApproval } from './search-attributes';
import { toolCallSummary } from './summaries';
import { describeToolFailure } from './tool-failure';

type ToolActivities = Record<string, (input: ToolActivityInput) => Promise<ToolActivityResult>>;

export async function runToolCalls(
  state: ConversationState,
  calls: ToolCall[],
  policies: ReadonlyMap<string, ToolPolicy>,
): Promise<ToolOutcome[]> {
  state.recordToolCalls(calls.length);
  return Promise.all(calls.map((call) => runToolCall(state, call, policies)));
}

async function runToolCall(
  state: ConversationState,
  call: ToolCall,
  policies: ReadonlyMap<string, ToolPolicy>,
): Promise<ToolOutcome> {
  const fail = (content: string): ToolOutcome => ({ callId: call.id, name: call.name, isError: true, content });
  if (call.malformed) return fail(`Malformed tool call: ${call.malformed}`);
  const policy = policies.get(call.name);
  if (!policy) {
    return fail(`Unknown tool "${call.name}". Available tools: ${[...policies.keys()].join(', ') || 'none'}.`);
  }

  const summary = toolCallSummary(call.name, call.input);
  if (policy.requiresApproval) {
    const refusal = await awaitApproval(state, call, summary);
    if (refusal) return fail(refusal);
  }

  const tool = proxyActivities<ToolActivities>({
    startToCloseTimeout: policy.startToCloseTimeout,
    heartbeatTimeout: policy.heartbeatTimeout,
    retry: { maximumAttempts: policy.maximumAttempts, initialInterval: policy.initialInterval, backoffCoefficient: 2 },
  })[call.name]!;
  setCurrentDetails(`Running ${summary}`);
  state.running.set(call.id, { kind: 'tool', name: summary, startedAt: new Date().toISOString() });
  try {
    const result = await tool.executeWithOptions({ summary, activityId: `tool-${call.id}` }, [
      { input: call.input, encoding: call.encoding },
    ]);
    return { callId: call.id, name: call.name, isError: !result.ok, content: result.content };
  } catch (err) {
    if (err instanceof ActivityFailure) return fail(describeToolFailure(call.name, policy, err));
    throw err;
  } finally {
    state.running.delete(call.id);
  }
}

/** Waits for a person to approve this exact call; returns why it may not run, or undefined to run it. */
async function awaitApproval(state: ConversationState, call: ToolCall, summary: string): Promise<string | undefined> {
  state.requestApproval({
    callId: call.id,
    tool: call.name,
    input: call.input,
    argumentsDigest: digest({ name: call.name, input: call.input }),
    requestedAt: new Date().toISOString(),
  });
  upsertSearchAttributes([{ key: ConversationAwaitingApproval, value: true }]);
  setCurrentDetails(`Waiting for approval of ${summary}`);
  const decided = await condition(
    () => state.approvals.get(call.id)?.decision !== undefined,
    state.options.timeouts.approval,
  );
  const decision = state.approvals.get(call.id)?.decision;
  state.settleApproval(call.id);
  if (state.approvals.size === 0) upsertSearchAttributes([{ key: ConversationAwaitingApproval, value: false }]);
  if (!decided || !decision) return `ApprovalTimeout: nobody approved ${summary} within ${state.options.timeouts.approval}.`;
  if (!decision.approve) return `Rejected: the user did not allow ${summary}${decision.reason ? `: ${decision.reason}` : '.'}`;
  return undefined;
}
