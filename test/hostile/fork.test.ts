// Forking with careless or malicious input: bad fork points and options through the client (refused before anything
// is sent), the fork-point query sent raw with garbage, and a conversation started raw with a made-up `forkedFrom` or
// fork state. Every one ends with a clear refusal or an InvalidConversationInput failure; no workflow task fails.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { QueryNotRegisteredError } from '@temporalio/client';
import { ConversationError } from '../../client/errors';
import { CONVERSATION_WORKFLOW } from '../../common/conversation-types';
import { FailureType } from '../../common/failure-types';
import type { ForkPoint } from '../../common/fork';
import { forkPointQuery } from '../../common/workflow-messages';
import { type Harness, startHarness } from '../support/harness';
import { answeredConversation, assertUnharmed, conversationFailure, HUGE, LONE_SURROGATE } from '../support/hostile';
import { uniquePrompt } from '../support/harness';
import { callsTools, says } from '../support/script-steps';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

/** The client refuses the call with `code`, saying something that matches `pattern`. */
async function refused(call: Promise<unknown>, code: string, pattern: RegExp): Promise<void> {
  const error = await call.then(
    () => assert.fail('the fork was accepted'),
    (err: unknown) => err,
  );
  assert.ok(error instanceof ConversationError, String(error));
  assert.equal(error.code, code, error.message);
  assert.match(error.message, pattern);
  assert.ok(error.message.length < 1_500, 'a short message');
  assert.ok(!error.message.includes(HUGE), 'the value is not echoed');
}

describe('fork points and options through the client', () => {
  test('negative, zero, fractional, huge, non-numeric and two-sided points: invalid_options, nothing sent', async () => {
    const id = await answeredConversation(h, 'fork-points');
    for (const at of [
      { beforeTurn: -1 },
      { beforeTurn: 0 },
      { beforeTurn: 1.5 },
      { beforeTurn: 2 ** 53 },
      { beforeTurn: Number.POSITIVE_INFINITY },
      { beforeTurn: '1' },
      { afterTurn: -1 },
      { beforeTurn: 1, afterTurn: 1 },
      {},
      null,
    ]) {
      await refused(h.conversations.fork(id, { at } as never), 'invalid_options', /Invalid options for fork: at/);
    }
    await refused(h.conversations.fork(id, undefined as never), 'invalid_options', /fork options are an object/);
    await assertUnharmed(h, id);
  });

  test('step points at step 0, turn 0, negative, fractional, huge, non-numeric or beside another key: invalid_options', async () => {
    const id = await answeredConversation(h, 'fork-step-points');
    for (const afterStep of [
      { turn: 1, step: 0 },
      { turn: 0, step: 1 },
      { turn: 1, step: -1 },
      { turn: 1, step: 1.5 },
      { turn: 1, step: 2 ** 53 },
      { turn: 2 ** 53, step: 1 },
      { turn: 1, step: Number.NaN },
      { turn: 1, step: '1' },
      { turn: 1 },
      { turn: 1, step: 1, extra: HUGE },
      '1.1',
      null,
    ]) {
      await refused(
        h.conversations.fork(id, { at: { afterStep } } as never),
        'invalid_options',
        /Invalid options for fork: at/,
      );
    }
    await refused(
      h.conversations.fork(id, { at: { afterStep: { turn: 1, step: 1 }, afterTurn: 1 } } as never),
      'invalid_options',
      /one of beforeTurn, afterTurn and afterStep/,
    );
    await assertUnharmed(h, id);
  });

  test('a step in a turn without tool calls, past its steps, or in a turn not ended: rejected by the conversation', async () => {
    const id = await answeredConversation(h, 'fork-step-bounds');
    await refused(
      h.conversations.fork(id, { at: { afterStep: { turn: 1, step: 1 } } }),
      'rejected',
      /none of its replies called tools/,
    );
    await refused(
      h.conversations.fork(id, { at: { afterStep: { turn: 1, step: 1_000_000_000 } } }),
      'rejected',
      /after step 1000000000 of turn 1/,
    );
    await refused(
      h.conversations.fork(id, { at: { afterStep: { turn: 1_000_000_000, step: 1 } } }),
      'rejected',
      /turn 1000000000 has not ended/,
    );
    await assertUnharmed(h, id);
  });

  test('a point past the end is refused by the conversation, naming the latest point', async () => {
    const id = await answeredConversation(h, 'fork-past-end');
    await refused(
      h.conversations.fork(id, { at: { beforeTurn: 3 } }),
      'rejected',
      /1 turn has ended; the latest point is before turn 2/,
    );
    await refused(h.conversations.fork(id, { at: { afterTurn: 1_000_000 } }), 'rejected', /after turn 1000000/);
    await assertUnharmed(h, id);
  });

  test('bad options, messages and ids: invalid_options or invalid_message, no fork started', async () => {
    const id = await answeredConversation(h, 'fork-options');
    const at = { beforeTurn: 2 };
    await refused(
      h.conversations.fork(id, { at, options: { model: '' } }),
      'invalid_options',
      /Invalid conversation options: model/,
    );
    await refused(
      h.conversations.fork(id, { at, options: { tools: ['get_horoscope'] } }),
      'invalid_options',
      /unknown tool "get_horoscope"/,
    );
    await refused(
      h.conversations.fork(id, { at, options: { output: { schema: {} } } as never }),
      'invalid_options',
      /typed answer is given per message/,
    );
    await refused(h.conversations.fork(id, { at, options: 'opus' as never }), 'invalid_options', /options/);
    await refused(h.conversations.fork(id, { at, message: '  ' }), 'invalid_message', /empty/);
    await refused(h.conversations.fork(id, { at, message: LONE_SURROGATE }), 'invalid_message', /fork/);
    await refused(h.conversations.fork(id, { at, workflowId: `a\nb` }), 'invalid_options', /workflowId/);
    await refused(h.conversations.fork(id, { at, unknown: HUGE } as never), 'invalid_options', /unknown key/);
    await refused(
      h.conversations.fork(`no-such-${randomUUID()}`, { at: { beforeTurn: 1 } }),
      'not_found',
      /No open conversation/,
    );
    // An id taken already: the fork is not started over it.
    await refused(h.conversations.fork(id, { at, workflowId: id }), 'already_started', /already exists/);
    await assertUnharmed(h, id);
  });
});

describe('the fork-point query and a fork start, raw', () => {
  test('garbage as the query argument: a refusal naming the problem, the conversation unharmed', async () => {
    const id = await answeredConversation(h, 'fork-query-raw');
    const handle = h.client.workflow.getHandle(id);
    for (const [arg, pattern] of [
      [undefined, /Invalid fork point/],
      ['before 2', /Invalid fork point/],
      [{ beforeTurn: -5 }, /beforeTurn: Turns start at 1/],
      [{ beforeTurn: 1e300 }, /beforeTurn/],
      [{ afterTurn: 'x'.repeat(10_000) }, /afterTurn: A turn is a number/],
      [{ beforeTurn: 1, extra: HUGE }, /Invalid fork point/],
      [{ beforeTurn: 5 }, /the latest point is before turn 2/],
    ] as const) {
      const error = await handle.query(forkPointQuery, arg as never).then(
        () => assert.fail(`${JSON.stringify(arg)?.slice(0, 40)} was answered`),
        (err: unknown) => err,
      );
      assert.ok(error instanceof QueryNotRegisteredError, String(error));
      assert.match(error.message, pattern);
      assert.ok(error.message.length < 1_500);
    }
    // A good point is answered.
    const point = await handle.query(forkPointQuery, { beforeTurn: 2 });
    assert.equal(point.forkedFrom.workflowId, id);
    await assertUnharmed(h, id);
  });

  /** Starts the conversation workflow raw with `input`; resolves with its failure. */
  async function rawStart(input: unknown) {
    const id = `hostile-fork-start-${randomUUID().slice(0, 8)}`;
    await h.client.workflow.start(CONVERSATION_WORKFLOW, { workflowId: id, taskQueue: h.taskQueue, args: [input] });
    const failure = await conversationFailure(h, id);
    assert.equal(failure.type, FailureType.InvalidConversationInput);
    assert.equal(await failedWorkflowTasksOf(id), 0);
    return failure.message;
  }
  const failedWorkflowTasksOf = async (id: string) => {
    const history = await h.client.workflow.getHandle(id).fetchHistory();
    return (history.events ?? []).filter((e) => e.workflowTaskFailedEventAttributes).length;
  };

  test('a start with garbage forkedFrom, or a fork state no fork point gives: InvalidConversationInput', async () => {
    const origin = await answeredConversation(h, 'fork-start-origin');
    const point: ForkPoint = await h.client.workflow.getHandle(origin).query(forkPointQuery, { beforeTurn: 2 });
    const good = { options: {}, carried: point.carried, forkedFrom: point.forkedFrom };
    const cases: Array<[unknown, RegExp]> = [
      [{ ...good, forkedFrom: 'origin' }, /forkedFrom/],
      [{ ...good, forkedFrom: { ...point.forkedFrom, turn: -1 } }, /forkedFrom\.turn/],
      [{ ...good, forkedFrom: { ...point.forkedFrom, workflowId: HUGE } }, /forkedFrom\.workflowId/],
      [{ ...good, forkedFrom: { ...point.forkedFrom, extra: 1 } }, /forkedFrom/],
      [{ options: {}, forkedFrom: point.forkedFrom }, /forkedFrom comes with carried/],
      [{ ...good, forkedFrom: { ...point.forkedFrom, turn: 7 } }, /carried\.nextTurn is not forkedFrom\.turn/],
      [{ ...good, carried: { ...point.carried, pendingMessages: [{ turn: 2, text: 'x' }] } }, /queued message/],
      [{ ...good, carried: { ...point.carried, endRequested: true } }, /starts open/],
      [{ ...good, carried: { ...point.carried, threadAnchor: { id: 'msg_1', fingerprint: 'f' } } }, /origin's thread/],
      [{ ...good, carried: { ...point.carried, turnStarts: [{ turn: 1, at: 50 }] } }, /turnStarts/],
      [
        {
          ...good,
          carried: {
            ...point.carried,
            outcomes: Array.from({ length: 5_000 }, () => ({ kind: 'continued', turn: 1 })),
          },
        },
        /carried\.outcomes has more than the 20/,
      ],
      [{ ...good, carried: { ...point.carried, transcript: 'x' } }, /carried\.transcript/],
      [{ ...good, agent: { parentId: origin, depth: 1, rootId: origin } }, /agent|a fork is no sub-agent/],
      [{ options: {}, carried: point.carried }, /never by a caller/],
    ];
    for (const [input, pattern] of cases) {
      assert.match(await rawStart(input), pattern, JSON.stringify(input).slice(0, 200));
    }
  });

  test('a step fork state started raw without its step, or cut short of its tool results: InvalidConversationInput', async () => {
    const prompt = uniquePrompt('Look up General Motors (hostile step).');
    h.mock.script(prompt, [callsTools(['get_ticker_symbol', { company_name: 'General Motors' }]), says('GM.')]);
    const origin = `hostile-fork-step-origin-${randomUUID().slice(0, 8)}`;
    await h.conversations.sendMessage(origin, prompt, { start: { tools: ['get_ticker_symbol'] } });
    const point: ForkPoint = await h.client.workflow
      .getHandle(origin)
      .query(forkPointQuery, { afterStep: { turn: 1, step: 1 } });
    assert.equal(point.forkedFrom.step, 1);
    const good = { options: {}, carried: point.carried, forkedFrom: point.forkedFrom };
    const { step: _step, ...withoutStep } = point.forkedFrom;
    const cases: Array<[unknown, RegExp]> = [
      [{ ...good, forkedFrom: withoutStep }, /carried\.nextTurn is not forkedFrom\.turn/],
      [{ ...good, forkedFrom: { ...point.forkedFrom, step: 0 } }, /forkedFrom\.step/],
      [
        { ...good, carried: { ...point.carried, transcript: point.carried.transcript.slice(0, 2) } },
        /up to tool results/,
      ],
      [{ ...good, carried: { ...point.carried, currentTurn: undefined } }, /carried\.currentTurn/],
    ];
    for (const [input, pattern] of cases) {
      assert.match(await rawStart(input), pattern, JSON.stringify(input).slice(0, 200));
    }
  });

  test('a well-formed fork started raw runs as a fork: its own run count, nothing of the origin under way', async () => {
    const origin = await answeredConversation(h, 'fork-start-raw-good');
    const point: ForkPoint = await h.client.workflow.getHandle(origin).query(forkPointQuery, { afterTurn: 1 });
    const id = `hostile-fork-raw-${randomUUID().slice(0, 8)}`;
    await h.client.workflow.start(CONVERSATION_WORKFLOW, {
      workflowId: id,
      taskQueue: h.taskQueue,
      args: [
        { options: {}, carried: { ...point.carried, runs: 40, firstRunId: 'stolen' }, forkedFrom: point.forkedFrom },
      ],
    });
    const state = await h.conversations.getState(id);
    assert.equal(state.runs, 1, 'the carried run count is not taken');
    assert.deepEqual(state.forkedFrom, point.forkedFrom);
    assert.equal(state.turns, 1);
    await h.conversations.cancel(id);
    await assertUnharmed(h, id);
  });
});
