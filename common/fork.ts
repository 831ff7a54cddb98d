// Forking a conversation (docs/fork.md): where a turn's user message sits in the transcript, how a caller names the
// point to fork at, how the fork names its origin, and the pure cut of a conversation's state at that point — the
// CarriedState a new conversation starts from. Workflow-safe: types, zod schemas and pure functions only.
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { z } from 'zod';
import type { CarriedState, ForkedFrom, TurnOutcome, TurnStart } from './conversation-types';
import { conversationIdSchema } from './conversation-id';
import type { ConversationOptions } from './options';
import { sharedOnce } from './shared-once';
import { ZERO_CONTEXT } from './context-accounting';
import { ZERO_USAGE } from './usage';

export type { ForkedFrom, TurnStart } from './conversation-types';

/** Turn starts a conversation keeps (the latest): a fork point before older turns is refused. */
export const MAX_TURN_STARTS = 2_000;

/**
 * A point to fork at. `beforeTurn: n`: the transcript before turn n's user message (the fork's next message is its
 * turn n: the same message or another). `afterTurn: n`: the same as `beforeTurn: n + 1`, or the whole transcript when
 * turn n is the last one that ended and no other has begun. `afterStep: { turn: n, step: k }`: inside ended turn n,
 * after its k-th model reply and that reply's tool results (the fork goes on with turn n: its next act is the model
 * call the origin made next). Turns are numbered as `sendMessage` answers them.
 */
export type ForkAt = { beforeTurn: number } | { afterTurn: number } | { afterStep: ForkStep };

/** A step inside a turn: its `step`-th model reply (from 1), which called tools. */
export interface ForkStep {
  turn: number;
  step: number;
}

/** What the origin answers the fork-point query with: the state to start the fork from, its link, its options. */
export interface ForkPoint {
  carried: CarriedState;
  forkedFrom: ForkedFrom;
  options: ConversationOptions;
}

/** Turn numbers a conversation could have: positive whole numbers a person can type. */
const MAX_TURN = 1_000_000_000;
const forkTurnSchema = sharedOnce('fork.forkTurnSchema', () =>
  z.number({ error: 'A turn is a number.' }).int('A turn is a whole number.').min(1, 'Turns start at 1.').max(MAX_TURN),
);
/** Steps a turn could have: its model replies, from 1 (a turn's calls are capped far below this). */
const forkStepSchema = sharedOnce('fork.forkStepSchema', () =>
  z.number({ error: 'A step is a number.' }).int('A step is a whole number.').min(1, 'Steps start at 1.').max(MAX_TURN),
);

/** Checked as one object with one of three keys, so that a bad value is named (`beforeTurn: Turns start at 1.`). */
export const forkAtSchema = sharedOnce('fork.forkAtSchema', () =>
  z
    .strictObject(
      {
        beforeTurn: forkTurnSchema.optional(),
        afterTurn: z
          .number({ error: 'A turn is a number.' })
          .int('A turn is a whole number.')
          .min(0)
          .max(MAX_TURN)
          .optional(),
        afterStep: z
          .strictObject(
            { turn: forkTurnSchema, step: forkStepSchema },
            { error: 'afterStep is an object: { turn: n, step: k }.' },
          )
          .optional(),
      },
      {
        error: 'A fork point is an object: { beforeTurn: n }, { afterTurn: n } or { afterStep: { turn: n, step: k } }.',
      },
    )
    .refine(
      (at) => [at.beforeTurn, at.afterTurn, at.afterStep].filter((key) => key !== undefined).length === 1,
      'A fork point names one of beforeTurn, afterTurn and afterStep.',
    )
    .transform((at): ForkAt => {
      if (at.beforeTurn !== undefined) return { beforeTurn: at.beforeTurn };
      if (at.afterTurn !== undefined) return { afterTurn: at.afterTurn };
      return { afterStep: { turn: at.afterStep!.turn, step: at.afterStep!.step } };
    }),
);

export const forkedFromSchema = sharedOnce('fork.forkedFromSchema', () =>
  z.strictObject({
    workflowId: conversationIdSchema,
    runId: z.string().min(1).max(256),
    turn: forkTurnSchema,
    step: forkStepSchema.optional(),
  }),
);

export const turnStartsSchema = sharedOnce('fork.turnStartsSchema', () =>
  z
    .array(
      z.strictObject({
        turn: forkTurnSchema,
        at: z.number().int().min(0),
        joined: z.number().int().min(1).optional(),
      }),
    )
    .max(MAX_TURN_STARTS),
);

/** What a conversation's state shows the cut. */
export interface ForkSource {
  transcript: readonly MessageParam[];
  turnStarts: readonly TurnStart[];
  outcomes: readonly TurnOutcome[];
  /** The turn being worked on, if one is. */
  currentTurn: number | undefined;
  /** The first turn that has not ended: the current one, the first queued one, or the next to be sent. */
  firstUnended: number;
}

/**
 * The turn a fork point names as the fork's first, or why there is none. A step point's turn must have ended (a turn
 * under way is forked before, not inside).
 */
export function forkTurn(source: ForkSource, at: ForkAt): { turn: number } | { problem: string } {
  if ('afterStep' in at) {
    const { turn, step } = at.afterStep;
    if (turn < source.firstUnended) return { turn };
    return { problem: `Cannot fork after step ${step} of turn ${turn}: ${unendedTurn(source, turn)}.` };
  }
  const turn = 'beforeTurn' in at ? at.beforeTurn : at.afterTurn + 1;
  const named = 'beforeTurn' in at ? `before turn ${at.beforeTurn}` : `after turn ${at.afterTurn}`;
  if (turn <= source.firstUnended) return { turn };
  const ended = source.firstUnended - 1;
  const done = ended === 0 ? 'no turn has ended' : `${ended} turn${ended === 1 ? ' has' : 's have'} ended`;
  const under = source.currentTurn !== undefined ? `, turn ${source.currentTurn} is under way` : '';
  return {
    problem: `Cannot fork ${named}: ${done}${under}; the latest point is before turn ${source.firstUnended}.`,
  };
}

function unendedTurn(source: ForkSource, turn: number): string {
  if (turn === source.currentTurn) return `turn ${turn} is under way (fork before it once it ended, or inside it then)`;
  const ended = source.firstUnended - 1;
  return `turn ${turn} has not ended (${ended === 0 ? 'no turn has' : `turns up to ${ended} have`})`;
}

/**
 * The conversation's state cut before turn `turn` (forkTurn), as a new conversation starts from it: the transcript
 * up to that turn's user message (thinking blocks, tool results, a compaction's summary included), the turn outcomes
 * before it, numbering going on from it. Nothing else: no queued message or turn under way, no approvals, no thread
 * anchor or code execution container (they are the origin's), counters and costs from zero (the fork's own).
 */
export function cutBefore(source: ForkSource, turn: number): { carried: CarriedState } | { problem: string } {
  let transcript: MessageParam[];
  const start = source.turnStarts.find((known) => known.turn === turn);
  if (turn === source.firstUnended && source.currentTurn === undefined) {
    transcript = [...source.transcript];
  } else if (!start || start.at >= source.transcript.length) {
    const known = source.turnStarts.map((known) => known.turn);
    const forkable = known.length > 0 ? `turns ${describeTurns(known)}` : 'none';
    return {
      problem:
        `Cannot fork before turn ${turn}: its messages are no longer in the transcript (a compaction replaced them, ` +
        `the turn failed, or it began before the conversation kept turn starts). Turns it can be forked before: ${forkable}.`,
    };
  } else {
    transcript = source.transcript.slice(0, start.at);
    const message = source.transcript[start.at]!;
    if (start.joined !== undefined && Array.isArray(message.content)) {
      transcript.push({ role: 'user', content: message.content.slice(0, start.joined) });
    }
  }
  return { carried: forkedState(source, transcript, turn) };
}

/**
 * The conversation's state cut inside ended turn `turn`, after its `step`-th model reply and that reply's tool results
 * (ForkAt's afterStep): the transcript up to there, with the turn in progress from its user message on, so that the
 * fork's first act is the model call the origin made next. Its counters start from zero (the fork's own calls); a
 * typed answer a message asked for is not carried (the conversation's `output` is, by the fork's workflow). Bounded:
 * one pass over the turn starts and the turn's messages.
 */
export function cutAfterStep(
  source: ForkSource,
  { turn, step }: ForkStep,
): { carried: CarriedState; step: number } | { problem: string } {
  const named = `after step ${step} of turn ${turn}`;
  const index = source.turnStarts.findIndex((known) => known.turn === turn);
  const start = source.turnStarts[index];
  if (!start || start.at >= source.transcript.length) {
    return {
      problem: `Cannot fork ${named}: its messages are no longer in the transcript (a compaction replaced them, the turn failed, or it began before the conversation kept turn starts).`,
    };
  }
  // The turn's messages: its user message, then model replies and the tool results each asked for, up to the next
  // turn's message (which may have joined the last results: its first `joined` blocks).
  const next = source.turnStarts[index + 1];
  const end = next && next.at > start.at ? next.at : source.transcript.length;
  const steps = stepsWithResults(source.transcript, start.at, end, next);
  // A typed answer given with the answer tool (mode `tool`) is a reply with a result after it: it is still the answer.
  const outcome = source.outcomes.find((known) => outcomeTurn(known) === turn);
  const typedAnswer = outcome?.kind === 'reply' && 'output' in outcome.result && start.at + 2 * steps.length + 1 >= end;
  if (typedAnswer && steps.length > 0) steps.pop();
  if (step > steps.length) {
    const replies =
      steps.length === 0
        ? 'none of its replies called tools'
        : `steps ${describeTurns(steps.map((_, i) => i + 1))} did`;
    const answer = step === steps.length + 1 ? ` (step ${step} is its answer: fork after turn ${turn})` : '';
    return { problem: `Cannot fork ${named}: it is no step that called tools${answer}; in turn ${turn}, ${replies}.` };
  }
  const resultsAt = start.at + 2 * step;
  let results = source.transcript[resultsAt]!;
  if (resultsAt === next?.at && next.joined !== undefined && Array.isArray(results.content)) {
    results = { role: 'user', content: results.content.slice(0, next.joined) };
  }
  const transcript = [...source.transcript.slice(0, resultsAt), results];
  const carried = forkedState(source, transcript, turn);
  return {
    step,
    carried: {
      ...carried,
      nextTurn: turn + 1,
      currentTurn: { turn, modelCalls: 0, toolCalls: 0, usage: ZERO_USAGE, costUsd: 0, transcriptStart: start.at },
      turnStarts: [...carried.turnStarts!, start],
    },
  };
}

/**
 * Where the replies of a turn that called tools sit (indexes), in order, while the turn's messages alternate: a model
 * reply, then a user message with its results (within the turn, or joined into the next turn's message).
 */
function stepsWithResults(
  transcript: readonly MessageParam[],
  from: number,
  end: number,
  next: TurnStart | undefined,
): number[] {
  const steps: number[] = [];
  for (let at = from + 1; at < end; at += 2) {
    if (transcript[at]!.role !== 'assistant') break;
    const resultsAt = at + 1;
    const joinedResults = resultsAt === next?.at && next.joined !== undefined && next.joined > 0;
    if (resultsAt >= end && !joinedResults) break;
    if (transcript[resultsAt]?.role !== 'user') break;
    steps.push(at);
  }
  return steps;
}

/** The state a fork starts from: `transcript`, the turn outcomes and starts before `turn`, counters from zero. */
function forkedState(source: ForkSource, transcript: MessageParam[], turn: number): CarriedState {
  const outcomes = source.outcomes.filter((outcome) => outcomeTurn(outcome) < turn);
  const lastReply = [...outcomes].reverse().find((outcome) => outcome.kind === 'reply');
  return {
    transcript,
    outcomes,
    pendingMessages: [],
    nextTurn: turn,
    modelCalls: 0,
    toolCalls: 0,
    usage: ZERO_USAGE,
    costUsd: 0,
    runs: 1,
    lastText: lastReply?.kind === 'reply' ? lastReply.result.text : '',
    endRequested: false,
    // The fork's own first run id replaces it (tool idempotency keys are the fork's own).
    firstRunId: 'fork',
    context: ZERO_CONTEXT,
    turnStarts: source.turnStarts.filter((known) => known.turn < turn),
  };
}

/**
 * Why a state a caller hands a new conversation as a fork's (ConversationInput.carried with forkedFrom) is not one a
 * fork point could have given, or undefined: it carries nothing of a conversation under way, numbers on from
 * `forkedFrom.turn`, and keeps no more turn outcomes than a conversation does (`maxOutcomes`). A fork at a step
 * (`forkedFrom.step`) carries turn `forkedFrom.turn` in progress, from its start, up to a user message (the results
 * the next model call reads), and nothing else under way.
 */
export function forkedStateProblem(
  carried: CarriedState,
  forkedFrom: ForkedFrom,
  maxOutcomes: number,
): string | undefined {
  const atStep = forkedFrom.step !== undefined;
  if (carried.nextTurn !== forkedFrom.turn + (atStep ? 1 : 0)) {
    return atStep
      ? 'carried.nextTurn is not the turn after forkedFrom.turn'
      : 'carried.nextTurn is not forkedFrom.turn';
  }
  if (carried.outcomes.length > maxOutcomes)
    return `carried.outcomes has more than the ${maxOutcomes} a conversation keeps`;
  if (carried.pendingMessages.length > 0) return 'a fork starts with no queued message (carried.pendingMessages)';
  if (atStep) {
    const turn = carried.currentTurn;
    if (!turn || turn.turn !== forkedFrom.turn)
      return 'a fork at a step carries the turn of forkedFrom (carried.currentTurn)';
    if (turn.transcriptStart >= carried.transcript.length - 1 || carried.transcript.at(-1)?.role !== 'user') {
      return "a fork at a step carries its turn's messages up to tool results (carried.transcript)";
    }
  } else if (carried.currentTurn) return 'a fork starts with no turn under way (carried.currentTurn)';
  if (carried.endRequested) return 'a fork starts open (carried.endRequested)';
  if (carried.threadAnchor) return "a fork never continues its origin's thread (carried.threadAnchor)";
  if (carried.container) return "a fork never uses its origin's code execution container (carried.container)";
  if (carried.outcomes.some((outcome) => outcomeTurn(outcome) >= forkedFrom.turn)) {
    return 'carried.outcomes has a turn the fork has not had';
  }
  let previous: TurnStart | undefined;
  for (const start of carried.turnStarts ?? []) {
    const ownTurn = atStep && start.turn === forkedFrom.turn && start.at === carried.currentTurn!.transcriptStart;
    if ((start.turn >= forkedFrom.turn && !ownTurn) || start.at >= carried.transcript.length) {
      return 'carried.turnStarts names a turn or a message the fork does not have';
    }
    if (previous && (start.turn <= previous.turn || start.at < previous.at)) {
      return 'carried.turnStarts is not in order';
    }
    previous = start;
  }
  return undefined;
}

export function outcomeTurn(outcome: TurnOutcome): number {
  return outcome.kind === 'reply' ? outcome.result.turn : outcome.turn;
}

/** `1–3, 5, 7–9`: a list of turn numbers, short. */
function describeTurns(turns: readonly number[]): string {
  const ranges: string[] = [];
  let from = turns[0]!;
  let to = from;
  for (const turn of [...turns.slice(1), Number.NaN]) {
    if (turn === to + 1) {
      to = turn;
      continue;
    }
    ranges.push(from === to ? String(from) : `${from}–${to}`);
    from = to = turn;
  }
  return ranges.join(', ');
}
