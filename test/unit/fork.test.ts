// The pure cut of a conversation's state at a fork point (common/fork.ts), on the state machine itself: where each
// turn's user message sits, through joined messages, failed turns, compaction and continue-as-new, and what a fork
// starts from — nothing under way, the origin's thread and container left behind.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { withDefaults } from '../../common/options';
import { forkAtSchema, forkedStateProblem, type ForkAt } from '../../common/fork';
import type { CarriedState } from '../../common/conversation-types';
import { ConversationState, KEPT_OUTCOMES } from '../../workflows/conversation-state';

const options = withDefaults({ tools: ['get_weather'] });
const usage = { inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };

/** A turn: the user's message, a tool call and its result, the answer. */
function toolTurn(state: ConversationState, text: string, n: number): void {
  state.enqueue(text);
  state.beginTurn();
  state.recordModelCall(usage);
  state.appendReply({
    message: { role: 'assistant', content: [{ type: 'tool_use', id: `t${n}`, name: 'get_weather', input: {} }] },
    replyId: `msg_${n}a`,
  });
  state.appendResults({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${n}`, content: 'sunny' }] });
  state.recordModelCall(usage);
  state.appendReply({ message: { role: 'assistant', content: `Answer ${n}` }, replyId: `msg_${n}b` });
  state.finishTurn({ text: `Answer ${n}`, status: 'awaiting_user' });
}

function threeTurns(): ConversationState {
  const state = new ConversationState({ options }, 'run-1');
  for (const n of [1, 2, 3]) toolTurn(state, `Question ${n}`, n);
  return state;
}

const assertInvalidPoint = (fn: () => unknown, pattern: RegExp) =>
  assert.throws(
    fn,
    (err: unknown) => err instanceof ApplicationFailure && err.type === 'InvalidForkPoint' && pattern.test(err.message),
  );

describe('the cut before a turn', () => {
  test("before turn 2: turn 1's messages, tool result included; numbering goes on at 2; counters start at zero", () => {
    const state = threeTurns();
    const { carried, turn } = state.forkPoint({ beforeTurn: 2 });
    assert.equal(turn, 2);
    assert.deepEqual(carried.transcript, state.transcript.slice(0, 4));
    assert.equal((carried.transcript[2]!.content as Array<{ type: string }>)[0]!.type, 'tool_result');
    assert.equal(carried.nextTurn, 2);
    assert.deepEqual(
      carried.outcomes.map((o) => (o.kind === 'reply' ? o.result.turn : o.turn)),
      [1],
    );
    assert.equal(carried.lastText, 'Answer 1');
    assert.equal(carried.modelCalls, 0);
    assert.equal(carried.costUsd, 0);
    assert.deepEqual(carried.pendingMessages, []);
    assert.equal(carried.currentTurn, undefined);
    assert.deepEqual(carried.turnStarts, [{ turn: 1, at: 0 }]);
    assert.equal(forkedStateProblem(carried, { workflowId: 'origin', runId: 'r', turn }, KEPT_OUTCOMES), undefined);
  });

  test('after turn n is before turn n + 1; after the last ended turn, the whole transcript', () => {
    const state = threeTurns();
    assert.deepEqual(state.forkPoint({ afterTurn: 1 }), state.forkPoint({ beforeTurn: 2 }));
    const end = state.forkPoint({ afterTurn: 3 });
    assert.equal(end.turn, 4);
    assert.deepEqual(end.carried.transcript, state.transcript);
    assert.deepEqual(state.forkPoint({ beforeTurn: 4 }), end);
    assert.equal(state.forkPoint({ beforeTurn: 1 }).carried.transcript.length, 0);
  });

  test('points past the end, or past a turn under way, are refused with the latest point', () => {
    const state = threeTurns();
    assertInvalidPoint(
      () => state.forkPoint({ beforeTurn: 5 }),
      /3 turns have ended; the latest point is before turn 4/,
    );
    assertInvalidPoint(() => state.forkPoint({ afterTurn: 4 }), /after turn 4/);
    state.enqueue('Question 4');
    state.beginTurn();
    state.enqueue('Question 5');
    assertInvalidPoint(() => state.forkPoint({ beforeTurn: 5 }), /turn 4 is under way/);
    // Before the turn under way: the transcript before its message, nothing of the turn or the queued message.
    const { carried } = state.forkPoint({ beforeTurn: 4 });
    assert.equal(carried.transcript.length, 12);
    assert.deepEqual(carried.pendingMessages, []);
    assert.equal(carried.currentTurn, undefined);
  });

  test('a message that joined the one before it (tool results a stopped turn left) is cut back to that one', () => {
    const { state, results } = withStoppedTurnResultsJoined();
    assert.equal((state.transcript[2]!.content as unknown[]).length, 2, 'the message joined the tool results');
    const { carried } = state.forkPoint({ beforeTurn: 2 });
    assert.deepEqual(carried.transcript, [state.transcript[0], state.transcript[1], results]);
    assert.deepEqual(carried.turnStarts, [{ turn: 1, at: 0 }]);
  });

  test('a failed turn leaves nothing to fork before; later turns still can be', () => {
    const state = threeTurns();
    state.enqueue('Question 4');
    state.beginTurn();
    state.failTurn({ type: 'ModelAuthentication', message: 'bad key' });
    assertInvalidPoint(() => state.forkPoint({ beforeTurn: 4 }), /turn 4: its messages are no longer/);
    toolTurn(state, 'Question 5', 5);
    const { carried } = state.forkPoint({ beforeTurn: 5 });
    assert.equal(carried.transcript.length, 12);
    assert.ok(carried.outcomes.some((o) => o.kind === 'failed' && o.turn === 4));
  });

  test('a compaction: turns it replaced cannot be forked before, the others moved with the transcript', () => {
    const state = threeTurns();
    const summary: MessageParam = { role: 'user', content: [{ type: 'text', text: 'Summary of turns 1–2' }] };
    state.compactHead(8, [summary]);
    assertInvalidPoint(() => state.forkPoint({ beforeTurn: 2 }), /Turns it can be forked before: turns 3/);
    const { carried } = state.forkPoint({ beforeTurn: 3 });
    assert.deepEqual(carried.transcript, [summary]);
    assert.deepEqual(carried.turnStarts, []);
    assert.deepEqual(state.forkPoint({ beforeTurn: 4 }).carried.transcript, state.transcript);
  });

  test('turn starts are carried across continue-as-new', () => {
    const state = threeTurns();
    const next = new ConversationState({ options, carried: state.toCarriedState() }, 'run-2');
    assert.deepEqual(next.forkPoint({ beforeTurn: 3 }), state.forkPoint({ beforeTurn: 3 }));
  });

  test("a fork leaves its origin's thread and container behind, and starts as a new conversation's first run", () => {
    const state = threeTurns();
    state.setContainer({ id: 'container_1', expiresAt: '2099-01-01T00:00:00Z' });
    const { carried, turn } = state.forkPoint({ beforeTurn: 4 });
    assert.equal(carried.container, undefined);
    assert.equal(carried.threadAnchor, undefined);
    const forkedFrom = { workflowId: 'origin', runId: 'r', turn };
    const fork = new ConversationState(
      { options, carried: { ...carried, runs: 0, firstRunId: 'fork-run' }, forkedFrom, firstMessage: 'Again' },
      'fork-run',
    );
    assert.equal(fork.runs, 1);
    assert.equal(fork.firstRunId, 'fork-run');
    assert.equal(fork.status, 'running', 'its first message waits for its turn');
    assert.equal(fork.beginTurn().turn, 4);
    assert.deepEqual(fork.snapshot().forkedFrom, forkedFrom);
  });
});

describe('what a fork may start from', () => {
  const cut = (): CarriedState => threeTurns().forkPoint({ beforeTurn: 3 }).carried;
  const from = { workflowId: 'origin', runId: 'r', turn: 3 };

  test('a state with anything of a conversation under way, or numbered otherwise, is refused', () => {
    const cases: Array<[Partial<CarriedState>, RegExp]> = [
      [{ nextTurn: 5 }, /nextTurn/],
      [{ pendingMessages: [{ turn: 3, text: 'x' }] }, /queued/],
      [{ currentTurn: { turn: 3, modelCalls: 0, toolCalls: 0, usage, transcriptStart: 0 } }, /under way/],
      [{ endRequested: true }, /open/],
      [{ threadAnchor: { id: 'msg_1', fingerprint: 'f' } }, /thread/],
      [{ container: { id: 'c', expiresAt: 'x' } }, /container/],
      [{ turnStarts: [{ turn: 3, at: 0 }] }, /turnStarts/],
      [
        { outcomes: Array.from({ length: KEPT_OUTCOMES + 1 }, () => ({ kind: 'continued' as const, turn: 1 })) },
        /outcomes/,
      ],
      [{ turnStarts: [{ turn: 1, at: 99 }] }, /turnStarts/],
      [
        {
          turnStarts: [
            { turn: 2, at: 4 },
            { turn: 1, at: 0 },
          ],
        },
        /order/,
      ],
    ];
    for (const [change, pattern] of cases) {
      assert.match(
        forkedStateProblem({ ...cut(), ...change }, from, KEPT_OUTCOMES) ?? '',
        pattern,
        JSON.stringify(change),
      );
    }
    assert.equal(forkedStateProblem(cut(), from, KEPT_OUTCOMES), undefined);
  });

  test('fork points: one of beforeTurn (from 1) and afterTurn (from 0), whole numbers', () => {
    const good: ForkAt[] = [{ beforeTurn: 1 }, { afterTurn: 0 }, { beforeTurn: 12 }];
    for (const at of good) assert.deepEqual(forkAtSchema.parse(at), at);
    for (const bad of [
      {},
      { beforeTurn: 0 },
      { beforeTurn: -1 },
      { beforeTurn: 1.5 },
      { beforeTurn: Number.NaN },
      { beforeTurn: 1e12 },
      { beforeTurn: '2' },
      { beforeTurn: 1, afterTurn: 1 },
      { turn: 1 },
      null,
      [1],
      'before 2',
    ]) {
      assert.equal(forkAtSchema.safeParse(bad).success, false, JSON.stringify(bad));
    }
  });
});

/** A turn of three steps: two replies that call a tool (each with its result), then the answer. */
function threeStepTurn(state: ConversationState, text: string, n: number): void {
  state.enqueue(text);
  state.beginTurn();
  for (const k of [1, 2]) {
    state.recordModelCall(usage);
    state.appendReply({
      message: { role: 'assistant', content: [{ type: 'tool_use', id: `t${n}.${k}`, name: 'get_weather', input: {} }] },
      replyId: `msg_${n}.${k}`,
    });
    state.appendResults({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: `t${n}.${k}`, content: `result ${k}` }],
    });
  }
  state.recordModelCall(usage);
  state.appendReply({ message: { role: 'assistant', content: `Answer ${n}` }, replyId: `msg_${n}.3` });
  state.finishTurn({ text: `Answer ${n}`, status: 'awaiting_user' });
}

/** Turn 1 with a tool call, turn 2 of three steps, turn 3 with a tool call. */
function withThreeStepTurn(): ConversationState {
  const state = new ConversationState({ options }, 'run-1');
  toolTurn(state, 'Question 1', 1);
  threeStepTurn(state, 'Question 2', 2);
  toolTurn(state, 'Question 3', 3);
  return state;
}

describe('the cut after a step inside a turn', () => {
  test("after step 1 of turn 2: turn 1, turn 2's message, its first reply and that reply's results; turn 2 goes on", () => {
    const state = withThreeStepTurn();
    const { carried, turn, step } = state.forkPoint({ afterStep: { turn: 2, step: 1 } });
    assert.equal(turn, 2);
    assert.equal(step, 1);
    assert.deepEqual(carried.transcript, state.transcript.slice(0, 7));
    assert.equal(carried.transcript.at(-1)!.role, 'user');
    assert.deepEqual((carried.transcript.at(-1)!.content as Array<{ content: string }>)[0]!.content, 'result 1');
    assert.deepEqual(carried.currentTurn, {
      turn: 2,
      modelCalls: 0,
      toolCalls: 0,
      usage: carried.usage,
      costUsd: 0,
      transcriptStart: 4,
    });
    assert.equal(carried.nextTurn, 3);
    assert.deepEqual(
      carried.outcomes.map((o) => (o.kind === 'reply' ? o.result.turn : o.turn)),
      [1],
    );
    assert.deepEqual(carried.turnStarts, [
      { turn: 1, at: 0 },
      { turn: 2, at: 4 },
    ]);
    const from = { workflowId: 'origin', runId: 'r', turn, step: 1 };
    assert.equal(forkedStateProblem(carried, from, KEPT_OUTCOMES), undefined);
    assert.equal(state.forkPoint({ afterStep: { turn: 2, step: 2 } }).carried.transcript.length, 9);
  });

  test("a state started from the cut works on the turn at once; its answer is the turn's outcome, numbering goes on", () => {
    const origin = withThreeStepTurn();
    const { carried } = origin.forkPoint({ afterStep: { turn: 2, step: 1 } });
    const forkedFrom = { workflowId: 'origin', runId: 'r', turn: 2, step: 1 };
    const fork = new ConversationState({ options, carried, forkedFrom }, 'fork-run');
    assert.equal(fork.currentTurn?.turn, 2);
    assert.equal(fork.snapshot().status, 'running');
    fork.recordModelCall(usage);
    fork.appendReply({ message: { role: 'assistant', content: 'Another answer' }, replyId: 'msg_f' });
    fork.finishTurn({ text: 'Another answer', status: 'awaiting_user' });
    const outcome = fork.outcomeOf(2);
    assert.equal(outcome?.kind === 'reply' && outcome.result.text, 'Another answer');
    assert.equal(outcome?.kind === 'reply' && outcome.result.modelCalls, 1, "the fork's own calls");
    assert.equal(fork.enqueue('Next'), 3);
    // The fork can be forked again before the turn it went on with.
    assert.deepEqual(fork.forkPoint({ beforeTurn: 2 }).carried.transcript, origin.transcript.slice(0, 4));
  });

  test("tool results a stopped turn left, joined into the next turn's message, are that step's", () => {
    const { state, results } = withStoppedTurnResultsJoined();
    const { carried } = state.forkPoint({ afterStep: { turn: 1, step: 1 } });
    assert.deepEqual(carried.transcript, [state.transcript[0], state.transcript[1], results]);
  });

  test('a step that is the answer, past the turn, in a turn without tool calls, or not ended is refused', () => {
    const state = withThreeStepTurn();
    assertInvalidPoint(
      () => state.forkPoint({ afterStep: { turn: 2, step: 3 } }),
      /step 3 is its answer: fork after turn 2/,
    );
    assertInvalidPoint(() => state.forkPoint({ afterStep: { turn: 2, step: 4 } }), /in turn 2, steps 1–2 did/);
    assertInvalidPoint(() => state.forkPoint({ afterStep: { turn: 2, step: 1e9 } }), /in turn 2, steps 1–2 did/);
    assertInvalidPoint(() => state.forkPoint({ afterStep: { turn: 4, step: 1 } }), /turn 4 has not ended/);
    state.enqueue('Hello');
    state.beginTurn();
    assertInvalidPoint(() => state.forkPoint({ afterStep: { turn: 4, step: 1 } }), /turn 4 is under way/);
    state.recordModelCall(usage);
    state.appendReply({ message: { role: 'assistant', content: 'Hi' }, replyId: 'msg_4' });
    state.finishTurn({ text: 'Hi', status: 'awaiting_user' });
    assertInvalidPoint(() => state.forkPoint({ afterStep: { turn: 4, step: 1 } }), /none of its replies called tools/);
  });

  test("a typed answer given with the answer tool is the turn's answer, not a step", () => {
    const state = new ConversationState({ options }, 'run-1');
    state.enqueue('Quote GM.');
    state.beginTurn();
    const call = (id: string, name: string) => ({
      role: 'assistant' as const,
      content: [{ type: 'tool_use' as const, id, name, input: {} }],
    });
    const result = (id: string) => ({
      role: 'user' as const,
      content: [{ type: 'tool_result' as const, tool_use_id: id, content: 'ok' }],
    });
    state.appendReply({ message: call('t1', 'get_weather'), replyId: 'msg_1' });
    state.appendResults(result('t1'));
    state.appendReply({ message: call('a1', 'final_answer'), replyId: 'msg_2' });
    state.appendResults(result('a1'));
    state.finishTurn({ text: '{"price":1}', status: 'awaiting_user', answer: { output: { price: 1 } } });
    assert.equal(state.forkPoint({ afterStep: { turn: 1, step: 1 } }).carried.transcript.length, 3);
    assertInvalidPoint(
      () => state.forkPoint({ afterStep: { turn: 1, step: 2 } }),
      /step 2 is its answer: fork after turn 1/,
    );
  });

  test('a state a step point could not have given is refused', () => {
    const state = withThreeStepTurn();
    const from = { workflowId: 'origin', runId: 'r', turn: 2, step: 1 };
    const cut = () => structuredClone(state.forkPoint({ afterStep: { turn: 2, step: 1 } }).carried);
    const before = state.forkPoint({ beforeTurn: 2 }).carried;
    assert.match(forkedStateProblem(before, from, KEPT_OUTCOMES)!, /nextTurn/);
    assert.match(forkedStateProblem({ ...before, nextTurn: 3 }, from, KEPT_OUTCOMES)!, /currentTurn/);
    const noResults = cut();
    noResults.transcript.pop();
    assert.match(forkedStateProblem(noResults, from, KEPT_OUTCOMES)!, /up to tool results/);
    const otherTurn = cut();
    otherTurn.currentTurn!.turn = 1;
    assert.match(forkedStateProblem(otherTurn, from, KEPT_OUTCOMES)!, /currentTurn/);
    assert.match(
      forkedStateProblem(cut(), { ...from, step: undefined }, KEPT_OUTCOMES)!,
      /nextTurn/,
      'a step cut without forkedFrom.step',
    );
  });

  test('step points: { turn, step }, both whole numbers from 1, alone', () => {
    assert.deepEqual(forkAtSchema.parse({ afterStep: { turn: 2, step: 1 } }), { afterStep: { turn: 2, step: 1 } });
    for (const bad of [
      { afterStep: { turn: 2, step: 0 } },
      { afterStep: { turn: 0, step: 1 } },
      { afterStep: { turn: 2, step: 1.5 } },
      { afterStep: { turn: 2, step: 1e12 } },
      { afterStep: { turn: 2 } },
      { afterStep: { turn: 2, step: 1, more: 1 } },
      { afterStep: { turn: 2, step: 1 }, afterTurn: 2 },
      { afterStep: 2 },
    ]) {
      assert.equal(forkAtSchema.safeParse(bad).success, false, JSON.stringify(bad));
    }
  });
});

/**
 * Turn 1 stopped over budget after a tool call, its tool results last in the transcript; turn 2's message joined
 * them (one user message), and turn 2 is under way.
 */
function withStoppedTurnResultsJoined(): { state: ConversationState; results: MessageParam } {
  const state = new ConversationState({ options }, 'run-1');
  state.enqueue('Question 1');
  state.beginTurn();
  state.appendReply({
    message: { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'get_weather', input: {} }] },
    replyId: 'msg_1',
  });
  const results: MessageParam = {
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: 't1', content: 'sunny' }],
  };
  state.appendResults(results);
  state.finishTurnOverBudget('Out of budget.', 'turn');
  state.enqueue('Question 2');
  state.beginTurn();
  return { state, results };
}
