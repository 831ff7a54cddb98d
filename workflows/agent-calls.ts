// Sub-agents, as their parent runs them: an agent tool's call starts a child conversation (a Temporal child workflow)
// with the call's task as its one message, waits for its answer, counts what it spent as the parent's, and answers the
// call with it — or with an error the model can read (too deep, a cycle, no budget, failed, timed out, cancelled).
//
// Lifecycle, chosen here: the parent waits for every child a reply started before its next model call, so it never
// continues-as-new with a child running (a continue-as-new only happens between model calls). Cancelling the parent
// cancels its children and waits for them to end (WAIT_CANCELLATION_COMPLETED); a parent that closes any other way
// (terminated, timed out) has its children cancelled by the server (ParentClosePolicy REQUEST_CANCEL), so no child
// outlives its parent. A child's own execution timeout bounds it, even when no worker polls its task queue.
import {
  ApplicationFailure,
  CancelledFailure,
  ChildWorkflowFailure,
  TimeoutFailure,
  WorkflowIdReusePolicy,
} from '@temporalio/common';
import {
  CancellationScope,
  ChildWorkflowCancellationType,
  getExternalWorkflowHandle,
  log,
  ParentClosePolicy,
  setCurrentDetails,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import {
  agentChildId,
  agentDepthLimit,
  agentTaskSchema,
  childBudget,
  childLineage,
  DEFAULT_MAX_AGENT_CALLS_PER_REPLY,
  isInSubtree,
  refuseAgentCall,
} from '../common/agents';
import { type AgentApprovalNews, agentApprovalSignal, agentDecisionSignal } from '../common/agent-messages';
import type { ConversationInput } from '../common/conversation-input';
import { INPUT_FORMAT } from '../common/input-format';
import type { ApprovalDecision, ConversationResult, PendingApproval } from '../common/conversation-types';
import { type ConversationOptions, conversationOptionsSchema, describeIssues } from '../common/options';
import { batchOptionOf } from '../common/batch-mode';
import type { ToolCall, ToolOutcome } from '../common/protocols/types';
import {
  ConversationOwner,
  ConversationParent,
  startingAttributes,
  startSearchAttributes,
} from '../common/search-attributes';
import { truncate } from '../common/safe-text';
import type { ToolPolicy } from '../common/tool-policy';
import { MAX_STREAMED_RESULT_CHARS } from '../streaming/stream-events';
import type { ConversationStream } from '../streaming/workflow/conversation-stream';
import type { ConversationState } from './conversation-state';
import { turnPriority } from './task-priority';

/** Characters of a task shown in the child's summary (the Web UI). */
const SUMMARY_TASK_CHARS = 200;

/** Which of a reply's agent calls may start, and how many share the parent's budget. */
export interface AgentSlots {
  /** The agent calls that may start (the first `maxAgentCallsPerReply` valid ones of the reply): call id → task. */
  tasks: ReadonlyMap<string, string>;
  share: number;
  max: number;
}

/** A reply without agent calls (most): nothing to count, nothing allocated. */
const NO_AGENT_CALLS: AgentSlots = { tasks: new Map(), share: 1, max: 0 };

/** The agent calls of a reply that may start: the first ones, up to the conversation's limit. */
export function agentSlots(
  state: ConversationState,
  calls: readonly ToolCall[],
  policies: ReadonlyMap<string, ToolPolicy>,
): AgentSlots {
  const isAgentCall = (call: ToolCall) => !call.malformed && policies.get(call.name)?.agent !== undefined;
  if (!calls.some(isAgentCall)) return NO_AGENT_CALLS;
  const max = state.options.limits.maxAgentCallsPerReply ?? DEFAULT_MAX_AGENT_CALLS_PER_REPLY;
  // Only calls that could start take a slot (and a share of the budget): an invalid one is an error result anyway.
  // Each task is read once, here; the loop stops at the limit, whatever the reply holds.
  const tasks = new Map<string, string>();
  for (const call of calls) {
    if (tasks.size === max) break;
    if (!isAgentCall(call)) continue;
    const input = agentTaskSchema.safeParse(call.input);
    if (input.success) tasks.set(call.id, input.data.task);
  }
  return { tasks, share: Math.max(1, tasks.size), max };
}

/** The sub-agents one conversation runs, and the approvals that travel between it and them. */
export class SubAgents {
  /** Running children: their workflow id → the call they answer. */
  readonly #running = new Map<string, string>();

  constructor(
    private readonly state: ConversationState,
    private readonly stream: ConversationStream,
    private readonly publish: () => void,
  ) {}

  /** Answers one agent call with a child conversation's answer. */
  async run(call: ToolCall, policy: ToolPolicy, slots: AgentSlots): Promise<ToolOutcome> {
    const { state, stream } = this;
    const agent = policy.agent!;
    const task = slots.tasks.get(call.id);
    if (task === undefined) {
      // Not among the reply's first valid agent calls: an invalid one, or one past the limit.
      const input = agentTaskSchema.safeParse(call.input);
      if (!input.success) return failed(call, `InvalidInput: ${call.name} ${describeIssues(input.error)}`);
      return failed(
        call,
        `TooManyAgents: one reply may start at most ${slots.max} sub-agents; this one was not started.`,
      );
    }
    // A sub-agent keeps to the root's limit (its lineage's), not to a default of its own.
    const maxDepth = agentDepthLimit(state.agent, state.options.limits.maxAgentDepth);
    const refusal = refuseAgentCall(state.agent, call.name, maxDepth);
    if (refusal) return failed(call, refusal);
    const own = conversationOptionsSchema.safeParse(agent.options);
    if (!own.success) return failed(call, `AgentFailed: invalid agent options: ${describeIssues(own.error)}`);
    const given = childBudget(own.data.budget, { budget: state.options.budget, spent: state.spent() }, slots.share);
    if ('exhausted' in given) return failed(call, given.exhausted);
    // The options as the tool wrote them (the child fills in the defaults): fewer bytes in both histories. A parent in
    // batch mode hands it down to a child whose tool does not say (common/batch-mode.ts): ten research tasks overnight
    // pay half too.
    const inherited =
      own.data.batch === undefined ? batchOptionOf(state.options.batch, state.currentTurn?.batch) : undefined;
    const options = {
      ...agent.options,
      ...(given.budget && { budget: given.budget }),
      ...(inherited !== undefined && { batch: inherited }),
    } as ConversationOptions;

    const { workflowId: parentId, typedSearchAttributes } = workflowInfo();
    const owner = typedSearchAttributes.get(ConversationOwner);
    const agentId = agentChildId(parentId, call.ref, call.name);
    const childInput: ConversationInput = {
      v: INPUT_FORMAT,
      options,
      firstMessage: task,
      agent: childLineage({ id: parentId, lineage: state.agent, maxDepth }, call.id, call.name),
    };
    state.startActivity(call.id, {
      kind: 'agent',
      name: `${call.name} → ${agentId}`,
      startedAt: new Date().toISOString(),
    });
    stream.publish({
      type: 'agent_started',
      callId: call.id,
      tool: call.name,
      agentId,
      task: truncate(task, MAX_STREAMED_RESULT_CHARS),
    });
    setCurrentDetails(`Running sub-agent ${call.name} (${agentId})`);
    this.#running.set(agentId, call.id);
    let outcome: ToolOutcome | undefined;
    let spent: ConversationResult | undefined;
    let failedStatus = 'failed';
    try {
      const child = await startChild('conversation', {
        workflowId: agentId,
        args: [childInput],
        ...(agent.taskQueue !== undefined && { taskQueue: agent.taskQueue }),
        workflowExecutionTimeout: agent.timeout,
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
        // A sub-agent works for its parent's tenant, at the priority of the turn that asked for it.
        ...turnPriority(state),
        typedSearchAttributes: [
          ...startSearchAttributes(startingAttributes(own.data, true)),
          { key: ConversationParent, value: parentId },
          // The parent's owner (the gateway's principal) owns its sub-agents too.
          ...(owner !== undefined ? [{ key: ConversationOwner, value: owner }] : []),
        ],
        staticSummary: `Sub-agent ${call.name} of ${parentId}: ${truncate(task, SUMMARY_TASK_CHARS)}`,
        staticDetails: `Started by tool call ${call.id} of conversation ${parentId}, ${childInput.agent!.depth} deep.`,
      });
      spent = (await child.result()) as ConversationResult;
      outcome = answerOf(call, spent);
    } catch (err) {
      // The parent itself is being cancelled: its turn ends that way, after its children have.
      if (CancellationScope.current().consideredCancelled) throw err;
      const failure = childFailure(call.name, agentId, agent.timeout, err);
      failedStatus = failure.status;
      outcome = failed(call, failure.message);
    } finally {
      this.#running.delete(agentId);
      state.settleRelayed({ via: agentId });
      state.finishActivity(call.id);
    }
    if (spent) {
      state.recordAgentSpend({
        model: spent.agentAnswer?.model ?? own.data.model,
        modelCalls: spent.modelCalls,
        usage: spent.usage,
        costUsd: spent.costUsd,
        ...(spent.byModel && { byModel: spent.byModel }),
      });
    }
    stream.publish({
      type: 'agent_finished',
      callId: call.id,
      tool: call.name,
      agentId,
      status: spent?.agentAnswer?.status ?? failedStatus,
      isError: outcome.isError,
      ...(spent && { usage: spent.usage, costUsd: spent.costUsd }),
    });
    this.publish();
    return outcome;
  }

  // ── approvals, up and down ────────────────────────────────────────────────────────────────────────

  /** This conversation, a sub-agent, waits for approval of a call: its parent shows it (and its parent's parent…). */
  approvalRequested(approval: PendingApproval): void {
    const self = workflowInfo().workflowId;
    this.#tellParent({ kind: 'requested', from: self, approval: { ...approval, agent: approval.agent ?? self } });
  }

  /** A call of this sub-agent no longer waits (decided, or timed out). */
  approvalSettled(callId: string, outcome: 'approved' | 'rejected' | 'timed_out'): void {
    const self = workflowInfo().workflowId;
    this.#tellParent({ kind: 'settled', from: self, agent: self, callId, outcome });
  }

  /** News from a child, checked by the caller against its schema; ignored unless it comes from a running child. */
  onChildNews(news: AgentApprovalNews): void {
    if (!this.#running.has(news.from)) {
      log.warn('Approval news from a conversation that is not a running sub-agent was ignored', { from: news.from });
      return;
    }
    // A child speaks for its own subtree only: its decision would go down through it.
    const agent = news.kind === 'requested' ? news.approval.agent : news.agent;
    if (!isInSubtree(agent, news.from)) {
      log.warn('Approval news about a conversation outside the sub-agent was ignored', { from: news.from });
      return;
    }
    if (news.kind === 'requested') {
      if (!this.state.relayApproval(news.approval, news.from)) return;
      this.stream.publish({ type: 'approval_requested', approval: news.approval });
    } else {
      this.state.settleRelayed({ via: news.from, agent: news.agent, callId: news.callId });
      this.stream.publish({ type: 'approval_settled', callId: news.callId, outcome: news.outcome, agent: news.agent });
    }
    this.publish();
    // Further up, unchanged but for who passes it on.
    this.#tellParent({ ...news, from: workflowInfo().workflowId });
  }

  /** A decision for a sub-agent's call goes down to the child it came from. */
  async sendDown(via: string, decision: ApprovalDecision & { agent: string }): Promise<void> {
    try {
      await getExternalWorkflowHandle(via).signal(agentDecisionSignal, decision);
    } catch (err) {
      // The child ended meanwhile: its call is settled there (its approval ended with it).
      log.warn('A decision could not reach the sub-agent', { via, error: String(err) });
    }
  }

  #tellParent(news: AgentApprovalNews): void {
    const parent = this.state.agent?.parentId;
    if (!parent) return;
    getExternalWorkflowHandle(parent)
      .signal(agentApprovalSignal, news)
      .catch((err: unknown) => log.warn('Approval news could not reach the parent', { parent, error: String(err) }));
  }
}

/** What the model reads from a child that ended: its answer (JSON for a typed one), or why it has none. */
function answerOf(call: ToolCall, result: ConversationResult): ToolOutcome {
  const answer = result.agentAnswer;
  if (answer?.failure) return failed(call, `AgentFailed: ${answer.failure.type}: ${answer.failure.message}`);
  const status = answer?.status ?? result.status;
  if (status !== 'completed' && status !== 'awaiting_user') {
    return failed(call, `AgentFailed: the sub-agent ended ${status}: ${result.text}`);
  }
  const content = answer && 'output' in answer ? JSON.stringify(answer.output) : result.text;
  return { callId: call.id, name: call.name, isError: false, content };
}

/** Why a child did not answer, as the model reads it. */
function childFailure(
  tool: string,
  agentId: string,
  timeout: string,
  err: unknown,
): { status: 'timed_out' | 'cancelled' | 'failed'; message: string } {
  const cause = err instanceof ChildWorkflowFailure ? err.cause : err;
  if (cause instanceof TimeoutFailure) {
    return {
      status: 'timed_out',
      message: `AgentTimedOut: the sub-agent ${tool} (${agentId}) did not finish within ${timeout}.`,
    };
  }
  if (cause instanceof CancelledFailure) {
    return { status: 'cancelled', message: `AgentCancelled: the sub-agent ${tool} (${agentId}) was cancelled.` };
  }
  const reason =
    cause instanceof ApplicationFailure
      ? `${cause.type ?? 'Error'}: ${cause.message}`
      : err instanceof Error
        ? err.message
        : String(err);
  return { status: 'failed', message: `AgentFailed: ${reason}` };
}

function failed(call: ToolCall, content: string): ToolOutcome {
  return { callId: call.id, name: call.name, isError: true, content };
}
