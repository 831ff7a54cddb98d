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
 * turn n is the last one that ended and no other has begun. Turns are numbered as `sendMessage` answers them.
 */
export type ForkAt = { beforeTurn: number } | { afterTurn: number };

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

/** Checked as one object with one of two keys, so that a bad value is named (`beforeTurn: Turns start at 1.`). */
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
      },
      { error: 'A fork point is an object: { beforeTurn: n } or { afterTurn: n }.' },
    )
    .refine(
      (at) => (at.beforeTurn === undefined) !== (at.afterTurn === undefined),
      'A fork point names one of beforeTurn and afterTurn.',
    )
    .transform((at): ForkAt =>
      at.beforeTurn !== undefined ? { beforeTurn: at.beforeTurn } : { afterTurn: at.afterTurn! },
    ),
);

export const forkedFromSchema = sharedOnce('fork.forkedFromSchema', () =>
  z.strictObject({
    workflowId: conversationIdSchema,
    runId: z.string().min(1).max(256),
    turn: forkTurnSchema,
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

/** The turn a fork point names as the fork's first, or why there is none. */
export function forkTurn(source: ForkSource, at: ForkAt): { turn: number } | { problem: string } {
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
  const outcomes = source.outcomes.filter((outcome) => outcomeTurn(outcome) < turn);
  const lastReply = [...outcomes].reverse().find((outcome) => outcome.kind === 'reply');
  return {
    carried: {
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
    },
  };
}

/**
 * Why a state a caller hands a new conversation as a fork's (ConversationInput.carried with forkedFrom) is not one a
 * fork point could have given, or undefined: it carries nothing of a conversation under way, numbers on from
 * `forkedFrom.turn`, and keeps no more turn outcomes than a conversation does (`maxOutcomes`).
 */
export function forkedStateProblem(
  carried: CarriedState,
  forkedFrom: ForkedFrom,
  maxOutcomes: number,
): string | undefined {
  if (carried.nextTurn !== forkedFrom.turn) return 'carried.nextTurn is not forkedFrom.turn';
  if (carried.outcomes.length > maxOutcomes)
    return `carried.outcomes has more than the ${maxOutcomes} a conversation keeps`;
  if (carried.pendingMessages.length > 0) return 'a fork starts with no queued message (carried.pendingMessages)';
  if (carried.currentTurn) return 'a fork starts with no turn under way (carried.currentTurn)';
  if (carried.endRequested) return 'a fork starts open (carried.endRequested)';
  if (carried.threadAnchor) return "a fork never continues its origin's thread (carried.threadAnchor)";
  if (carried.container) return "a fork never uses its origin's code execution container (carried.container)";
  if (carried.outcomes.some((outcome) => outcomeTurn(outcome) >= forkedFrom.turn)) {
    return 'carried.outcomes has a turn the fork has not had';
  }
  let previous: TurnStart | undefined;
  for (const start of carried.turnStarts ?? []) {
    if (start.turn >= forkedFrom.turn || start.at >= carried.transcript.length) {
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
