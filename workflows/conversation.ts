// The conversation workflow: one conversation with Claude, durable. It waits for user messages, runs the
// model ↔ tools loop for each, and keeps its state in ConversationState. All I/O happens in activities.
import { ApplicationFailure } from '@temporalio/common';
import {
  allHandlersFinished,
  condition,
  makeContinueAsNewFunc,
  isCancellation,
  log,
  patched,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { DescribeToolsResult, ToolPolicy } from '../common/activity-contracts';
import type { ConversationInput } from '../common/conversation-input';
import type {
  ApprovalDecision,
  CarriedState,
  ConversationResult,
  TurnFailure,
  TurnOutcome,
} from '../common/conversation-types';
import { FailureType, ModelFailureType } from '../common/failure-types';
import { type McpTool, mcpToolsQuery } from '../common/mcp';
import { conversationIdSchema } from '../common/conversation-id';
import { describeIssues } from '../common/options';
import { isUndecodable } from '../common/undecodable';
import { INPUT_FORMAT, NEWER_INPUT_FORMAT, newerInputFormat, newerInputFormatMessage } from '../common/input-format';
import { readReply } from '../common/protocols/read-reply';
import { endsWithPausedTurn, PAUSED_TURN_PATCH } from '../common/paused-turn';
import { CLOSE_SERVER_TOOL_CALLS_PATCH } from '../common/open-server-tool-calls';
import { offersServerTools } from '../common/server-tools';
import { protocolFor } from '../common/protocols';
import type { Protocol } from '../common/protocols/types';
import { ConversationStatus } from '../common/search-attributes';
import {
  approveToolCallUpdate,
  awaitTurnUpdate,
  conversationInputSchema,
  endConversationSignal,
  forkPointQuery,
  type MessageOptions,
  modelContextQuery,
  modelContextRangeSchema,
  sendMessageUpdate,
  stateQuery,
  submitMessageUpdate,
  transcriptQuery,
  transcriptRangeSchema,
} from '../common/workflow-messages';
import { summarisingItself } from '../common/context-options';
import { forkAtSchema, forkedStateProblem } from '../common/fork';
import {
  agentApprovalNewsSchema,
  agentApprovalSignal,
  agentDecisionSignal,
  agentDecisionSchema,
} from '../common/agent-messages';
import { SubAgents } from './agent-calls';
import { askModel } from './ask-model';
import { checkNextCall } from './budget-guard';
import { compactIfDue, followContext } from './compact-context';
import { checksEveryRequest } from './model-requests';
import { ConversationState, KEPT_OUTCOMES } from './conversation-state';
import type { OfferedTools } from './offered-tools';
import { listConversationMcpTools } from './mcp-tools';
import { resolveModelPrices } from './model-prices';
import { ConversationStream } from '../streaming/workflow/conversation-stream';
import { BOUNDED_RESULTS_PATCH, runToolCalls, type ToolRun } from './run-tool-calls';
import { registerStreamReaders } from '../streaming/workflow/stream-readers';
import { searchAttributesPublisher } from './search-attributes-publisher';
import { handleTypedReply } from './typed-answer';
import { TurnWaiters } from './turn-waiters';
import { waitForUser } from './wait-for-user';
import { rejection } from './rejection';

const { describeTools } = proxyLocalActivities<{
  describeTools(names: string[], model?: string): Promise<DescribeToolsResult>;
}>({ startToCloseTimeout: '10 seconds' });

/** What one run of the loop works with. */
interface Conversation extends ToolRun {
  protocol: Protocol;
  /** The tools each model call offers: the worker's own, then the MCP tools of the set `mcpToolSet`. */
  offered: OfferedTools;
}

export async function conversation(rawInput: ConversationInput): Promise<ConversationResult> {
  // The input is checked here again: the Temporal CLI and the Web UI can start this workflow with anything, and a
  // bad input must end the conversation with a status, never fail its workflow task over and over.
  const input = checkedInput(rawInput);
  const state = new ConversationState(input, workflowInfo().firstExecutionRunId, {
    // Histories from 0.1.0 wrote tool errors and results into the transcript uncut: they replay that way.
    keepUncut: () => !patched(BOUNDED_RESULTS_PATCH),
    // Histories from before kept server tool calls left open as they came: they replay that way.
    closesServerToolCalls: () => patched(CLOSE_SERVER_TOOL_CALLS_PATCH),
  });
  // checkedInput takes a log only in a run that continue-as-new started.
  const stream = new ConversationStream(input.stream);
  const publish = searchAttributesPublisher(state);
  const mcpTools = new Map<string, McpTool>();
  const agents = new SubAgents(state, stream, publish);
  registerHandlers(state, mcpTools, stream, agents);
  // A fork at a step goes on with its origin's turn: its own event log starts with that turn (a continued run's
  // log already has it).
  const goesOnWith = state.forkedFrom?.step !== undefined ? state.currentTurn : undefined;
  if (goesOnWith && workflowInfo().continuedFromExecutionRunId === undefined) {
    stream.turnStarted(goesOnWith.turn, userText(state.transcript[goesOnWith.transcriptStart]));
  }

  try {
    // The same local activity answers the model's prices, unless the conversation brings its own (model-prices.ts).
    const { options } = state;
    const catalog = await (options.prices ? describeTools(options.tools) : describeTools(options.tools, options.model));
    if (catalog.unknown.length > 0) {
      return await failConversation(
        { state, stream, publish },
        {
          type: FailureType.UnknownTools,
          message: `Unknown tools: ${catalog.unknown.join(', ')}. The workers register: ${catalog.tools.map((t) => t.name).join(', ') || 'none'}.`,
        },
      );
    }
    const policies = new Map<string, ToolPolicy>(catalog.tools.map((policy) => [policy.name, policy]));
    state.setPrices(await resolveModelPrices(state.options, catalog));
    const run: Conversation = {
      state,
      stream,
      policies,
      mcpTools,
      publish,
      agents,
      protocol: protocolFor(state.options.protocol),
      offered: { tools: [...state.options.tools] },
    };
    let mcpToolsListed = state.options.mcpServers.length === 0;
    for (;;) {
      if (!state.currentTurn) {
        if (shouldContinueAsNew(state)) {
          // Too large to hand over (a long last reply over a high limit): end here rather than fail every task.
          if (state.tooLargeToCarry) {
            state.close('limit_reached');
            break;
          }
          return await continueAsNewRun(state, stream);
        }
        if (!state.hasPendingMessage) {
          if (state.endRequested) {
            state.close('completed');
            break;
          }
          state.waitForUser();
          publish();
          setCurrentDetails('Waiting for the next user message');
          const woke = await waitForUser(state);
          if (woke === 'continue-as-new') continue; // a history grown while waiting (readers' polls)
          if (!state.hasPendingMessage) {
            state.close(woke ? 'completed' : 'idle_timeout');
            break;
          }
        }
        const turn = state.beginTurn();
        stream.turnStarted(turn.turn, userText(state.transcript.at(-1)));
        publish();
      }
      if (!mcpToolsListed) {
        // Once per run, when its first turn begins (an idle run starts no server): the activity's result in the
        // history is the MCP tool list of every model call of the run.
        const failure = await listMcpTools(run, mcpTools, policies);
        if (failure) return await failConversation({ state, stream, publish }, failure);
        mcpToolsListed = true;
      }
      if ((await runTurn(run)) === 'continue-as-new') return await continueAsNewRun(state, stream);
      publishTurnEnd(stream, state.lastOutcome);
      publish();
      if (!state.isOpen) break;
      if (state.options.closeAfterFirstReply) {
        // A one-shot question whose turn failed has nothing else to answer: the conversation fails with it.
        const last = state.lastOutcome;
        // A sub-agent's failed turn is an answer for its parent (with what it spent), not a failed workflow.
        if (last?.kind === 'failed' && !state.agent) return await failConversation(run, last.failure);
        state.close('completed');
        break;
      }
    }
  } catch (err) {
    if (isCancellation(err)) {
      state.close('cancelled');
      stream.publish({ type: 'conversation_ended', status: state.status });
      publish(); // so the conversation lists as cancelled, not as still running
    }
    throw err;
  }
  setCurrentDetails(`Ended: ${state.status}`);
  publish();
  stream.publish({ type: 'conversation_ended', status: state.status });
  stream.detachReaders();
  await condition(allHandlersFinished);
  return state.result();
}

/** Marks a conversation that refused its id at its start (common/conversation-id.ts). */
const CONVERSATION_ID_PATCH = 'conversation-id-checked-at-start';

/**
 * The input, checked; a bad one fails the conversation with InvalidConversationInput, and so does an id the client
 * refuses. What only continue-as-new writes (`carried`, `stream`) is taken only by a run that continue-as-new started.
 */
function checkedInput(rawInput: unknown): ConversationInput {
  const invalid = (problem: string): never => {
    const message = `Invalid conversation input: ${problem}`;
    upsertSearchAttributes([{ key: ConversationStatus, value: 'failed' }]);
    setCurrentDetails(`Failed: ${message}`);
    throw ApplicationFailure.create({ type: FailureType.InvalidConversationInput, message, nonRetryable: true });
  };
  // Written by a newer build (a mixed fleet without Worker Deployments): not hostile, not this build's to read. The
  // workflow task fails (a plain error: retried, the conversation kept) until a worker of a build that reads it takes it.
  const newer = newerInputFormat(rawInput);
  if (newer !== undefined) throw new NewerInputFormatError(newerInputFormatMessage("This run's input", newer));
  const continued = workflowInfo().continuedFromExecutionRunId !== undefined;
  // An id no client could address again (a raw start); runs begun before this check replay without it.
  const badId = continued ? undefined : conversationIdSchema.safeParse(workflowInfo().workflowId).error;
  if (badId && patched(CONVERSATION_ID_PATCH)) {
    return invalid(`${describeIssues(badId, 'id')} No client could address it: start it under another id.`);
  }
  if (isUndecodable(rawInput)) return invalid(`it could not be decoded (${rawInput.undecodablePayload})`);
  const parsed = conversationInputSchema.safeParse(rawInput ?? {});
  if (!parsed.success) return invalid(describeIssues(parsed.error));
  const { forkedFrom } = parsed.data;
  if (!continued && (parsed.data.stream || (parsed.data.carried && !forkedFrom))) {
    return invalid(
      'carried and stream are written by the conversation itself when it continues as new, never by a caller (a fork brings carried with forkedFrom)',
    );
  }
  if (!continued && forkedFrom) {
    // A fork: the state its origin's fork point gave, which carries nothing of the origin under way (common/fork.ts).
    if (!parsed.data.carried) return invalid('forkedFrom comes with carried, the state of the fork point');
    if (parsed.data.agent) return invalid('a fork is no sub-agent (forkedFrom with agent)');
    if (forkedFrom.workflowId === workflowInfo().workflowId) return invalid('a conversation is not its own fork');
    const problem = forkedStateProblem(parsed.data.carried as CarriedState, forkedFrom, KEPT_OUTCOMES);
    if (problem) return invalid(problem);
    // Its own first run: its own counters of runs, and its own tool idempotency keys. A fork at a step goes on with
    // its turn, asking the fork's typed answer if it has one (a message's own is not carried: common/fork.ts).
    const { currentTurn } = parsed.data.carried;
    const { output } = parsed.data.options;
    const carried = {
      ...parsed.data.carried,
      runs: 0,
      firstRunId: workflowInfo().firstExecutionRunId,
      ...(currentTurn && output && { currentTurn: { ...currentTurn, output, answerAttempts: 0 } }),
    };
    return { ...parsed.data, carried } as ConversationInput;
  }
  // Only the parent conversation that starts a sub-agent writes its lineage (continue-as-new keeps the parent).
  const { agent } = parsed.data;
  if (agent && !continued && workflowInfo().parent?.workflowId !== agent.parentId) {
    return invalid('agent is written by the conversation that starts a sub-agent as its child, never by a caller');
  }
  return parsed.data as ConversationInput;
}

/** Not an ApplicationFailure: it fails the workflow task, which Temporal retries, not the workflow. */
class NewerInputFormatError extends Error {
  override name = NEWER_INPUT_FORMAT;
}

/** The model ↔ tools loop for the current user turn, until the model answers or the turn ends otherwise. */
async function runTurn(run: Conversation): Promise<'done' | 'continue-as-new'> {
  const { state, protocol } = run;
  const { limits } = state.options;
  for (;;) {
    const turn = state.currentTurn!;
    if (state.tooLargeToCarry) {
      state.finishTurn({
        text: `The conversation reached ${state.carriedBytes()} bytes, over its limit of ${limits.maxCarriedBytes}; start a new conversation.`,
        status: 'limit_reached',
      });
      return 'done';
    }
    if (shouldContinueAsNew(state)) return 'continue-as-new';
    if (turn.modelCalls >= limits.maxModelCallsPerTurn) {
      state.finishTurn({
        text: `Stopped after ${turn.modelCalls} model calls (limit ${limits.maxModelCallsPerTurn}).`,
        status: 'limit_reached',
      });
      return 'done';
    }
    // Every request to the model is checked against the budget where it goes out (model-requests.ts); histories
    // from before checked only here, before any summary.
    const everyRequestChecked = checksEveryRequest(state);
    const budget = everyRequestChecked ? { ok: true as const } : await checkNextCall(state, run.offered);
    if (!budget.ok) {
      state.finishTurnOverBudget(budget.message, budget.scope);
      return 'done';
    }
    // Each await in workflow code costs the worker a promise and its stack trace: steps that cannot summarise or
    // give a typed answer (most) skip those awaits.
    const refusedSummary = summarisingItself(state.options.contextManagement)
      ? await compactIfDue({ state, offered: run.offered, everyRequestChecked })
      : undefined;
    if (refusedSummary) {
      state.finishTurnOverBudget(refusedSummary.message, refusedSummary.scope);
      return 'done';
    }
    // A turn the API paused goes back as it is; the continuation joins its message (histories from before: follows it).
    const joinsPausedTurn = endsWithPausedTurn(state.transcript) && patched(PAUSED_TURN_PATCH);
    const step = await askModel({
      state,
      offered: run.offered,
      stream: run.stream,
      everyRequestChecked,
      joinsPausedTurn,
    });
    if (step.kind === 'over_budget') {
      state.finishTurnOverBudget(step.message, step.scope);
      return 'done';
    }
    if (step.kind === 'failed') {
      if (step.failure.type === ModelFailureType.ContextWindowExceeded) {
        state.finishTurn({
          text: `The conversation no longer fits in the model's context window: ${step.failure.message}`,
          status: 'context_window_exceeded',
        });
      } else {
        failTurn(state, step.failure);
      }
      return 'done';
    }
    if (step.kind === 'max_tokens_exhausted') {
      state.finishTurn({
        text: `The reply did not fit in ${step.maxTokens} output tokens, the top of the max_tokens ladder.`,
        stopReason: 'max_tokens',
        status: 'max_tokens_exhausted',
      });
      return 'done';
    }
    const { reply } = step;
    if (reply.stop_reason === 'model_context_window_exceeded') {
      state.finishTurn({
        text: "The conversation no longer fits in the model's context window.",
        stopReason: reply.stop_reason,
        status: 'context_window_exceeded',
      });
      return 'done';
    }
    // What the model sent, made into what the API takes back (ids, inputs, empty replies: common/protocols).
    const reading = readReply(protocol, reply, state.modelCalls, state.transcript, {
      serverTools: offersServerTools(state.options.serverTools),
    });
    const { stopReason } = reading;
    state.appendReply({ message: reading.assistant, replyId: reply.id, joinsPausedTurn, stopReason });
    if (reply.container) state.setContainer(reply.container);
    followContext(state, reply);
    if (stopReason === 'refusal') {
      state.finishTurn({ text: reading.text || 'The model declined to answer.', stopReason, status: 'refused' });
      return 'done';
    }
    if (stopReason === 'pause_turn') continue; // the server paused a long turn: send it back as it is
    const typed = state.currentTurn?.output ? await handleTypedReply(run, stopReason, reading) : 'tools';
    if (typed === 'done') return 'done';
    if (typed === 'next') continue;
    if (reading.toolCalls.length === 0) {
      const status = state.options.closeAfterFirstReply ? 'completed' : 'awaiting_user';
      state.finishTurn({ text: reading.text, stopReason, status });
      return 'done';
    }
    if (state.stopAtToolCallLimit(reading.toolCalls.length, stopReason)) return 'done';
    const outcomes = await runToolCalls(run, reading.toolCalls);
    state.appendResults(protocol.renderResults(outcomes));
  }
}

/** Adds the MCP tools of the conversation's servers to the run; returns why it cannot have them, if it cannot. */
async function listMcpTools(
  run: Conversation,
  mcpTools: Map<string, McpTool>,
  policies: Map<string, ToolPolicy>,
): Promise<TurnFailure | undefined> {
  const { options } = run.state;
  const listed = await listConversationMcpTools(options.mcpServers, options.tools);
  if ('failure' in listed) return listed.failure;
  const { toolbox } = listed;
  const forced = options.toolChoice;
  if (forced?.type === 'tool' && !options.tools.includes(forced.name) && !toolbox.tools.has(forced.name)) {
    return {
      type: FailureType.UnknownMcpTools,
      message: `tool_choice names "${forced.name}", which none of the MCP servers offers (${[...toolbox.tools.keys()].join(', ') || 'none'}).`,
    };
  }
  for (const [name, tool] of toolbox.tools) mcpTools.set(name, tool);
  for (const policy of toolbox.policies) policies.set(policy.name, policy);
  run.offered = { tools: [...options.tools, ...toolbox.tools.keys()], mcpToolSet: toolbox.digest };
  return undefined;
}

function failTurn(state: ConversationState, failure: TurnFailure): void {
  state.failTurn(failure);
  setCurrentDetails(`Turn failed (${failure.type}): ${failure.message}`);
}

function registerHandlers(
  state: ConversationState,
  mcpTools: ReadonlyMap<string, McpTool>,
  stream: ConversationStream,
  agents: SubAgents,
): void {
  // Callers that wait for a turn's end hold an update slot each: a few at once (turn-waiters.ts).
  const waiters = new TurnWaiters();
  const outcome = async (turn: number): Promise<TurnOutcome> => {
    const leave = waiters.enter();
    try {
      await condition(() => state.outcomeOf(turn) !== undefined);
      return state.outcomeOf(turn)!;
    } finally {
      leave();
    }
  };
  // A message's options (a typed answer of its own) are checked by the validator; the handler reads them again.
  const validator = (text: string, options?: MessageOptions) => state.validateMessage(text, options);
  setHandler(
    sendMessageUpdate,
    (text: string, options?: MessageOptions) =>
      outcome(
        state.enqueue(text, state.messageOutput(options), state.messageBatch(options), state.messagePriority(options)),
      ),
    {
      validator: (text: string, options?: MessageOptions) => {
        validator(text, options);
        waiters.admit();
      },
    },
  );
  setHandler(
    submitMessageUpdate,
    (text: string, options?: MessageOptions) => ({
      turn: state.enqueue(
        text,
        state.messageOutput(options),
        state.messageBatch(options),
        state.messagePriority(options),
      ),
      offset: stream.offset(),
    }),
    { validator },
  );
  setHandler(awaitTurnUpdate, outcome, {
    validator: (turn) => {
      state.validateAwaitTurn(turn);
      // A turn already answered is answered at once: it holds no slot.
      if (state.outcomeOf(turn) === undefined) waiters.admit();
    },
  });
  // A sub-agent's call is decided here too: the decision goes down to the child it came from (agent-calls.ts).
  const decide = async (decision: ApprovalDecision): Promise<void> => {
    const route = state.decide(decision);
    if (route) await agents.sendDown(route.via, { ...decision, agent: route.agent });
  };
  setHandler(approveToolCallUpdate, decide, { validator: (decision) => state.validateDecision(decision) });
  // Signals between a sub-agent and its parent: checked like any input, and dropped (with a log line) when bad.
  setHandler(agentApprovalSignal, (news) => {
    const parsed = agentApprovalNewsSchema.safeParse(news);
    if (!parsed.success)
      return log.warn('A malformed agentApproval signal was ignored', { issues: describeIssues(parsed.error) });
    agents.onChildNews(parsed.data);
  });
  setHandler(agentDecisionSignal, async (raw) => {
    const parsed = agentDecisionSchema.safeParse(raw);
    if (!parsed.success)
      return log.warn('A malformed agentDecision signal was ignored', { issues: describeIssues(parsed.error) });
    const { agent, ...decision } = parsed.data;
    // This conversation's own call, or one further down.
    const named = agent === workflowInfo().workflowId ? decision : parsed.data;
    try {
      state.validateDecision(named);
    } catch (err) {
      return log.warn('A decision for a sub-agent call was refused', { error: String(err) });
    }
    await decide(named);
  });
  setHandler(endConversationSignal, () => state.requestEnd());
  setHandler(stateQuery, () => state.snapshot());
  setHandler(mcpToolsQuery, () => [...mcpTools.values()]);
  registerStreamReaders(stream, () => state.currentTurn !== undefined || state.hasPendingMessage);
  setHandler(transcriptQuery, (range) => {
    const { from = 0, to } = transcriptRangeSchema.parse(range) ?? {};
    return state.transcript.slice(from, to);
  });
  // A fork's state, cut from this conversation's (common/fork.ts): bounded by the transcript, nothing changes.
  setHandler(forkPointQuery, (at) => {
    const parsed = forkAtSchema.safeParse(at);
    if (!parsed.success)
      throw rejection(`Invalid fork point: ${describeIssues(parsed.error, 'at')}`, FailureType.InvalidForkPoint);
    const { carried, turn, step } = state.forkPoint(parsed.data);
    const { workflowId, runId } = workflowInfo();
    return {
      carried,
      forkedFrom: { workflowId, runId, turn, ...(step !== undefined && { step }) },
      options: state.options,
    };
  });
  setHandler(modelContextQuery, (range) => {
    const { to } = modelContextRangeSchema.parse(range);
    return {
      messages: state.transcript.slice(0, to),
      ...(state.options.system !== undefined && { system: state.options.system }),
    };
  });
}

function shouldContinueAsNew(state: ConversationState): boolean {
  const info = workflowInfo();
  return (
    info.continueAsNewSuggested ||
    // With Worker Deployments on, a newer build was promoted: the run moves to it at this model-call boundary (never
    // true without them, so histories recorded without replay the same).
    info.targetWorkerDeploymentVersionChanged ||
    state.modelCallsThisRun >= state.options.continueAsNewAfterModelCalls
  );
}

/**
 * Continue-as-new at a model-call boundary: callers waiting on a reply are told to ask the next run, readers of the
 * event stream follow to it from their offset; nothing is lost.
 */
async function continueAsNewRun(state: ConversationState, stream: ConversationStream): Promise<never> {
  state.handOver();
  setCurrentDetails('Continuing as a new run');
  stream.detachReaders();
  await condition(allHandlersFinished);
  const carried = state.toCarriedState();
  // With Worker Deployments on, each run is pinned to the build that began it, and the next starts on the current
  // build: old builds drain as their conversations continue as new (docs/upgrading.md). Without them: no effect.
  const next = makeContinueAsNewFunc<(input: ConversationInput) => Promise<ConversationResult>>({
    initialVersioningBehavior: 'AUTO_UPGRADE',
  });
  return next({
    v: INPUT_FORMAT,
    options: state.options,
    ...(state.agent && { agent: state.agent }),
    ...(state.forkedFrom && { forkedFrom: state.forkedFrom }),
    carried,
    stream: stream.carry(state.options.limits.maxCarriedBytes - state.carriedBytes()),
  });
}

/** The conversation cannot go on (a fault of its own setup, not of one turn): it fails, telling every waiting caller. */
async function failConversation(
  { state, stream, publish }: Pick<Conversation, 'state' | 'stream' | 'publish'>,
  failure: TurnFailure,
): Promise<never> {
  const turn = state.currentTurn?.turn;
  state.failConversation(failure);
  if (turn !== undefined) stream.publish({ type: 'turn_failed', turn, failure });
  stream.publish({ type: 'conversation_ended', status: state.status });
  stream.detachReaders();
  setCurrentDetails(`Failed: ${failure.message}`);
  publish();
  await condition(allHandlersFinished);
  throw ApplicationFailure.create({ type: failure.type, message: failure.message, nonRetryable: true });
}

/** A turn that ended tells its readers how; the log then drops what came before the previous turn. */
function publishTurnEnd(stream: ConversationStream, outcome: TurnOutcome | undefined): void {
  if (outcome?.kind === 'reply') {
    const { turn, status, text, stopReason, usage, output, costUsd } = outcome.result;
    stream.publish({
      type: 'turn_finished',
      turn,
      status,
      text,
      stopReason,
      usage,
      costUsd,
      ...('output' in outcome.result && { output }),
    });
  } else if (outcome?.kind === 'failed') {
    stream.publish({ type: 'turn_failed', turn: outcome.turn, failure: outcome.failure });
  }
  stream.turnEnded();
}

function userText(message: MessageParam | undefined): string {
  if (!message) return '';
  if (typeof message.content === 'string') return message.content;
  return message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
}
