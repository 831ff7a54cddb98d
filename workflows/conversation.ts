// The conversation workflow: one conversation with Claude, durable. It waits for user messages, runs the
// model ↔ tools loop for each, and keeps its state in ConversationState. All I/O happens in activities.
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { DescribeToolsResult, ToolPolicy } from './activity-contracts';
import {
  approveToolCallUpdate,
  awaitTurnUpdate,
  type ConversationInput,
  type ConversationResult,
  endConversationSignal,
  modelContextQuery,
  sendMessageUpdate,
  stateQuery,
  transcriptQuery,
  type TurnOutcome,
} from './api';
import { ConversationState } from './conversation-state';
import { askModel } from './model-step';
import { protocolFor } from './protocols';
import type { Protocol } from './protocols/types';
import * as attributes from './search-attributes';
import { runToolCalls } from './tool-step';

const { describeTools } = proxyLocalActivities<{ describeTools(names: string[]): Promise<DescribeToolsResult> }>({
  startToCloseTimeout: '10 seconds',
});

export async function conversation(input: ConversationInput): Promise<ConversationResult> {
  const state = new ConversationState(input);
  registerHandlers(state);
  const protocol = protocolFor(state.options.protocol);

  try {
    const catalog = await describeTools(state.options.tools);
    if (catalog.unknown.length > 0) {
      return await fail(state, 'InvalidConversationOptions', `Unknown tools: ${catalog.unknown.join(', ')}.`);
    }
    const policies = new Map(catalog.tools.map((policy) => [policy.name, policy]));
    for (;;) {
      if (!state.active) {
        if (shouldContinueAsNew(state)) return await moveOn(state);
        if (!state.hasPendingMessage) {
          state.status = 'awaiting_user';
          publish(state);
          setCurrentDetails('Waiting for the next user message');
          const woke = await condition(() => state.hasPendingMessage || state.endRequested, state.options.timeouts.idle);
          if (!state.hasPendingMessage) {
            state.status = woke ? 'completed' : 'idle_timeout';
            break;
          }
        }
        state.beginTurn();
        publish(state);
      }
      if ((await runTurn(state, protocol, policies)) === 'continue-as-new') return await moveOn(state);
      if (!state.isOpen) break;
      if (state.options.closeAfterFirstReply) {
        state.status = 'completed';
        break;
      }
    }
  } catch (err) {
    // Only the model call can fail a turn for good (a request the API rejects: 400, 401, …); tool failures are data.
    if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure) {
      return fail(state, err.cause.type ?? 'ModelCallFailed', err.cause.message);
    }
    if (isCancellation(err)) {
      state.status = 'cancelled';
      publish(state); // so the conversation lists as cancelled, not as still running
    }
    throw err;
  }
  setCurrentDetails(`Ended: ${state.status}`);
  publish(state);
  await condition(allHandlersFinished);
  return state.result();
}

/** The model ↔ tools loop for the active user turn. */
async function runTurn(
  state: ConversationState,
  protocol: Protocol,
  policies: ReadonlyMap<string, ToolPolicy>,
): Promise<'done' | 'continue-as-new'> {
  const { limits } = state.options;
  const answered = state.options.closeAfterFirstReply ? 'completed' : 'awaiting_user';
  for (;;) {
    const active = state.active!;
    if (state.transcriptTooLarge) {
      state.finishTurn(`The conversation reached ${state.transcriptChars} characters, over its limit of ${limits.maxTranscriptChars}; start a new conversation.`, null, 'limit_reached');
      return 'done';
    }
    if (active.modelCalls >= limits.maxModelCallsPerTurn) {
      state.finishTurn(`Stopped after ${active.modelCalls} model calls (limit ${limits.maxModelCallsPerTurn}).`, null, 'limit_reached');
      return 'done';
    }
    const step = await askModel(state);
    if (step.kind === 'max_tokens_exhausted') {
      state.finishTurn(`The reply did not fit in ${step.maxTokens} output tokens, the top of the max_tokens ladder.`, 'max_tokens', 'max_tokens_exhausted');
      return 'done';
    }
    const { reply } = step;
    if (reply.stop_reason === 'model_context_window_exceeded') {
      state.finishTurn('The conversation no longer fits in the model\'s context window.', reply.stop_reason, 'context_window_exceeded');
      return 'done';
    }
    const reading = protocol.readReply(reply, state.modelCalls);
    state.appendReply(reading.assistant, reply.id);
    if (reply.stop_reason === 'refusal') {
      state.finishTurn(reading.text || 'The model declined to answer.', reply.stop_reason, 'refused');
      return 'done';
    }
    if (reply.stop_reason === 'pause_turn') continue; // the server paused a long turn: send it back as it is
    if (reading.toolCalls.length === 0) {
      state.finishTurn(reading.text, reply.stop_reason, answered);
      return 'done';
    }
    if (active.toolCalls + reading.toolCalls.length > limits.maxToolCallsPerTurn) {
      state.finishTurn(`Stopped: the model asked for more than ${limits.maxToolCallsPerTurn} tool calls in one turn.`, reply.stop_reason, 'limit_reached');
      return 'done';
    }
    const outcomes = await runToolCalls(state, reading.toolCalls, policies);
    state.appendResults(protocol.renderResults(outcomes));
    if (shouldContinueAsNew(state)) return 'continue-as-new';
  }
}

function registerHandlers(state: ConversationState): void {
  const outcome = async (turn: number): Promise<TurnOutcome> => {
    await condition(() => state.outcomeOf(turn) !== undefined);
    const result = state.outcomeOf(turn)!;
    if ('kind' in result) return result;
    throw ApplicationFailure.create({ type: result.type, message: result.message, nonRetryable: true });
  };
  setHandler(sendMessageUpdate, (text) => outcome(state.enqueue(text)), {
    validator: (text) => state.validateMessage(text),
  });
  setHandler(awaitTurnUpdate, outcome, {
    validator: (turn) => {
      if (!state.knowsTurn(turn)) throw new TypeError(`This conversation has no turn ${String(turn)}.`);
    },
  });
  setHandler(approveToolCallUpdate, (decision) => state.decide(decision), {
    validator: (decision) => state.validateDecision(decision),
  });
  setHandler(endConversationSignal, () => {
    state.endRequested = true;
  });
  setHandler(stateQuery, () => state.snapshot());
  setHandler(transcriptQuery, (range) => state.transcript.slice(range?.from ?? 0, range?.to));
  setHandler(modelContextQuery, ({ to }) => ({
    messages: state.transcript.slice(0, to),
    ...(state.options.system !== undefined && { system: state.options.system }),
  }));
}

function shouldContinueAsNew(state: ConversationState): boolean {
  return workflowInfo().continueAsNewSuggested || state.modelCallsThisRun >= state.options.continueAsNewAfterModelCalls;
}

/** Continue-as-new at a turn boundary: callers waiting on a reply are told to ask the next run; nothing is lost. */
async function moveOn(state: ConversationState): Promise<never> {
  state.movingOn = true;
  setCurrentDetails('Continuing as a new run');
  await condition(allHandlersFinished);
  return continueAsNew<(input: ConversationInput) => Promise<ConversationResult>>({
    options: state.options,
    carried: state.carry(),
  });
}

async function fail(state: ConversationState, type: string, message: string): Promise<never> {
  state.failTurn(type, message);
  setCurrentDetails(`Failed: ${message}`);
  publish(state);
  await condition(allHandlersFinished);
  throw ApplicationFailure.create({ type, message, nonRetryable: true });
}

/** Keeps the typed search attributes in step with the state; each change is one history event, so only changes. */
function publish(state: ConversationState): void {
  const snapshot = state.snapshot();
  const pairs = [
    { key: attributes.ConversationStatus, value: snapshot.status },
    { key: attributes.ConversationModel, value: snapshot.model },
    { key: attributes.ConversationProtocol, value: snapshot.protocol },
    { key: attributes.ConversationTurns, value: snapshot.turns },
    { key: attributes.ConversationToolCalls, value: snapshot.toolCalls },
    { key: attributes.ConversationInputTokens, value: snapshot.usage.inputTokens + snapshot.usage.cacheReadInputTokens + snapshot.usage.cacheCreationInputTokens },
    { key: attributes.ConversationOutputTokens, value: snapshot.usage.outputTokens },
    { key: attributes.ConversationAwaitingApproval, value: snapshot.pendingApprovals.length > 0 },
  ];
  const key = JSON.stringify(pairs.map((pair) => pair.value));
  if (key === state.publishedAttributes) return;
  state.publishedAttributes = key;
  upsertSearchAttributes(pairs);
}
