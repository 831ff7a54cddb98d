// Running the tool calls of one reply: one activity per call, all calls of a reply at once, outcomes in the model's
// order. Every way a call can go wrong becomes an error outcome the model can read.
import { ActivityFailure } from '@temporalio/common';
import { condition, proxyActivities, setCurrentDetails, workflowInfo } from '@temporalio/workflow';
import type { ToolActivityInput, ToolActivityResult, ToolPolicy } from '../common/activity-contracts';
import { boundedOutcome } from '../common/bounded-text';
import { digest } from '../common/digest';
import { type McpTool, mcpCallSummary } from '../common/mcp';
import { protocolFor } from '../common/protocols';
import type { ToolCall, ToolOutcome } from '../common/protocols/types';
import { toolCallSummary } from '../common/summaries';
import { MAX_STREAMED_RESULT_CHARS } from '../streaming/stream-events';
import { type AgentSlots, agentSlots, type SubAgents } from './agent-calls';
import type { ConversationState } from './conversation-state';
import { callMcpTool } from './mcp-tools';
import type { ConversationStream } from '../streaming/workflow/conversation-stream';
import { describeToolFailure } from './tool-failure';
import { turnPriority } from './task-priority';

type ToolActivities = Record<string, (input: ToolActivityInput) => Promise<ToolActivityResult>>;

/** What running tools needs besides the state: how to schedule each tool, and how to show a change of status. */
export interface ToolRun {
  state: ConversationState;
  /** Where readers see each call's result and approval. */
  stream: ConversationStream;
  policies: ReadonlyMap<string, ToolPolicy>;
  /** The run's MCP tools (also in `policies`): each call runs as a `callMcpTool` activity. */
  mcpTools: ReadonlyMap<string, McpTool>;
  /** Writes the search attributes if the state changed what they show (e.g. a call now awaits approval). */
  publish(): void;
  /** Agent tools' calls: child conversations (agent-calls.ts). */
  agents: SubAgents;
}

/**
 * Histories from 0.1.0 took tool outcomes uncut. Asked only when a cap changes an outcome, so a run pays for the marker
 * only if it ever cuts one (ConversationState.bounded).
 */
export const BOUNDED_RESULTS_PATCH = 'bounded-tool-outcomes';

export function runToolCalls(run: ToolRun, calls: ToolCall[]): Promise<ToolOutcome[]> {
  run.state.recordToolCalls(calls.length);
  const cap = run.state.options.limits.maxResultChars;
  const slots = agentSlots(run.state, calls, run.policies);
  // `then`s, not async functions, and no Promise.all for a lone call (most replies): each promise in workflow code
  // costs the worker a stack trace.
  if (calls.length === 1) return runToolCall(run, calls[0]!, slots).then((raw) => [settled(run, raw, cap)]);
  return Promise.all(calls.map((call) => runToolCall(run, call, slots).then((raw) => settled(run, raw, cap))));
}

/** Every outcome passes here, whatever produced it (a tool, an MCP server, a refusal): bounded and well-formed. */
function settled(run: ToolRun, raw: ToolOutcome, cap: number): ToolOutcome {
  const bounded = boundedOutcome(raw, cap);
  const outcome = bounded.content === raw.content || !run.state.keepUncut() ? bounded : raw;
  const { callId: id, name, isError } = outcome;
  // Readers get the text; an image (an MCP tool's) shows as a marker.
  const content =
    typeof outcome.content === 'string'
      ? outcome.content
      : outcome.content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('\n');
  const cut = content.length > MAX_STREAMED_RESULT_CHARS;
  run.stream.publish({
    type: 'tool_result',
    id,
    name,
    isError,
    content: cut ? content.slice(0, MAX_STREAMED_RESULT_CHARS) : content,
    ...(cut && { truncated: true }),
  });
  return outcome;
}

/**
 * One call's outcome. The usual path (a known tool, no approval) is a `then` on the activity, not an async function:
 * it runs for every tool call, and each promise in workflow code costs the worker a stack trace.
 */
function runToolCall(run: ToolRun, call: ToolCall, slots: AgentSlots): Promise<ToolOutcome> {
  if (call.malformed) return Promise.resolve(failed(call, `Malformed tool call: ${call.malformed}`));
  const { policies, mcpTools } = run;
  const policy = policies.get(call.name);
  if (!policy) {
    const available = [...policies.keys()].join(', ') || 'none';
    return Promise.resolve(failed(call, `Unknown tool "${call.name}". Available tools: ${available}.`));
  }
  const mcpTool = mcpTools.get(call.name);
  const summary = mcpTool
    ? mcpCallSummary(mcpTool.server, mcpTool.tool, call.input)
    : toolCallSummary(call.name, call.input);
  const start = (): Promise<ToolOutcome> =>
    policy.agent ? run.agents.run(call, policy, slots) : runActivity(run, call, policy, mcpTool, summary);
  if (!policy.requiresApproval) return start();
  return awaitApproval(run, call, summary).then((refusal) => (refusal ? failed(call, refusal) : start()));
}

/** The call's activity: the worker's tool (no `mcpTool`), or the MCP server's through `callMcpTool`. */
function runActivity(
  run: ToolRun,
  call: ToolCall,
  policy: ToolPolicy,
  mcpTool: McpTool | undefined,
  summary: string,
): Promise<ToolOutcome> {
  const { state } = run;
  const { activityId, idempotencyKey } = toolActivityNames(state, call);
  setCurrentDetails(`Running ${summary}`);
  state.startActivity(call.id, { kind: 'tool', name: summary, startedAt: new Date().toISOString() });
  let result: Promise<{ ok: boolean; content: ToolOutcome['content'] }>;
  try {
    if (mcpTool) {
      const protocol = protocolFor(state.options.protocol);
      result = callMcpTool(mcpTool, call, {
        policy,
        protocol,
        summary,
        activityId,
        idempotencyKey,
        ...turnPriority(state),
      });
    } else {
      const tool = proxyActivities<ToolActivities>({
        startToCloseTimeout: policy.startToCloseTimeout,
        heartbeatTimeout: policy.heartbeatTimeout,
        retry: {
          maximumAttempts: policy.maximumAttempts,
          initialInterval: policy.initialInterval,
          backoffCoefficient: 2,
        },
      })[call.name]!;
      result = tool.executeWithOptions({ summary, activityId, ...turnPriority(state) }, [
        { input: call.input, protocol: state.options.protocol, idempotencyKey },
      ]);
    }
  } catch (err) {
    // Thrown while scheduling (not an activity failure): it goes on up, as before, with the activity marked ended.
    state.finishActivity(call.id);
    return Promise.reject(err as Error);
  }
  return result.then(
    (done): ToolOutcome => {
      state.finishActivity(call.id);
      return { callId: call.id, name: call.name, isError: !done.ok, content: done.content };
    },
    (err: unknown) => {
      state.finishActivity(call.id);
      if (err instanceof ActivityFailure) return failed(call, describeToolFailure(call.name, policy, err));
      throw err;
    },
  );
}

function failed(call: ToolCall, content: string): ToolOutcome {
  return { callId: call.id, name: call.name, isError: true, content };
}

/**
 * The activity id of a call's tool activity, and the idempotency key every attempt of it gets (the same each time).
 * The activity is named after the call's id, which the reply's reader made well-formed and unique in the conversation
 * (common/protocols/tool-use-blocks.ts) — for a well-behaved model, its own tool_use id, as in every released history,
 * so those replay unchanged. The key is named after the orchestrator's `ref` (model call number and place in the
 * reply): unique for the conversation's whole life, whatever ids the model wrote; a key is only ever read from the
 * activity's recorded input, so runs that began with id-based keys keep theirs on every retry.
 */
function toolActivityNames(state: ConversationState, call: ToolCall): { activityId: string; idempotencyKey: string } {
  return {
    activityId: `tool-${call.id}`,
    idempotencyKey: `${workflowInfo().workflowId}/${state.firstRunId}/${call.ref}`,
  };
}

/** Waits for a person to approve this exact call; returns why it may not run, or undefined to run it. */
async function awaitApproval(
  { state, stream, publish, agents }: ToolRun,
  call: ToolCall,
  summary: string,
): Promise<string | undefined> {
  const approval = {
    callId: call.id,
    tool: call.name,
    input: call.input,
    argumentsDigest: digest({ name: call.name, input: call.input }),
    requestedAt: new Date().toISOString(),
  };
  state.requestApproval(approval);
  stream.publish({ type: 'approval_requested', approval });
  publish();
  // A sub-agent's approval is its parent's to show and decide too.
  if (state.agent) agents.approvalRequested(approval);
  setCurrentDetails(`Waiting for approval of ${summary}`);
  const { approval: timeout } = state.options.timeouts;
  const decided = await condition(() => state.decisionOf(call.id) !== undefined, timeout);
  const decision = state.decisionOf(call.id);
  state.settleApproval(call.id);
  const outcome = !decided || !decision ? 'timed_out' : decision.approve === true ? 'approved' : 'rejected';
  if (state.agent) agents.approvalSettled(call.id, outcome);
  stream.publish({ type: 'approval_settled', callId: call.id, outcome });
  publish();
  if (!decided || !decision) return `ApprovalTimeout: nobody approved ${summary} within ${timeout}.`;
  // Only an explicit `true` runs the tool.
  if (decision.approve !== true) {
    return `Rejected: the user did not allow ${summary}${decision.reason ? `: ${decision.reason}` : '.'}`;
  }
  return undefined;
}
