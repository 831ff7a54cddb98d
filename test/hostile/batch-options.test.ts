// Hostile batch mode (docs/batches.md): bad `batch` options through ConversationClient (refused before anything is
// sent, invalid_options), raw through Temporal (a start fails at once with InvalidConversationInput; an update is
// refused by its validator), and garbage batch results from the API (every line malformed, or under custom_ids nobody
// sent): the turn fails with a clear status after its bounded resubmissions, never a failing workflow task loop.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ConversationError } from '../../client/errors';
import { CONVERSATION_WORKFLOW } from '../../common/conversation-types';
import { sendMessageUpdate } from '../../common/workflow-messages';
import { STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import { type Harness, startHarness, uniquePrompt } from '../support/harness';
import {
  assertUnharmed,
  assertWorkerServes,
  conversationFailure,
  failedWorkflowTasks,
  HUGE,
  refusedOptions,
} from '../support/hostile';

let h: Harness;
before(async () => {
  h = await startHarness({ batchWindowMs: 100, batchDelayMs: 50 });
});
after(() => h?.close());

const BAD_VALUES = [
  ['a string', 'yes'],
  ['a huge string', HUGE],
  ['a number', 1],
  ['null', null],
  ['a negative window', { windowMs: -1 }],
  ['a window of a day', { windowMs: 86_400_000 }],
  ['a fractional window', { windowMs: 1.5 }],
  ['an unknown key', { window: 5 }],
] as const;

describe('batch options through the client', () => {
  for (const [what, value] of BAD_VALUES) {
    test(`batch as ${what}: invalid_options naming batch`, async () => {
      assert.match(await refusedOptions(h, { batch: value }), /batch/);
    });
  }

  test("a message's own batch option, malformed: invalid_options, nothing started", async () => {
    const id = `hostile-batch-turn-${Date.now()}`;
    const error = await h.conversations.sendMessage(id, 'Hi', { start: {}, batch: { windowMs: 'soon' } } as never).then(
      () => assert.fail('accepted'),
      (err: unknown) => err,
    );
    assert.ok(error instanceof ConversationError, String(error));
    assert.equal(error.code, 'invalid_options');
    assert.match(error.message, /batch/);
    await assert.rejects(h.client.workflow.getHandle(id).describe(), /not found/i);
  });
});

describe('batch options raw through Temporal', () => {
  for (const [what, batch] of [
    ['a string', 'true'],
    ['an array', [true]],
    ['a window as text', { windowMs: '2s' }],
  ] as const) {
    test(`a start input with batch as ${what} fails the conversation with InvalidConversationInput at once`, async () => {
      const id = `raw-batch-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
      await h.client.workflow.start(CONVERSATION_WORKFLOW, {
        taskQueue: h.taskQueue,
        workflowId: id,
        args: [{ options: { batch } }],
      });
      const failure = await conversationFailure(h, id);
      assert.equal(failure.type, 'InvalidConversationInput');
      assert.match(failure.message, /batch/);
      assert.ok(failure.message.length < 2_000);
      assert.equal(await failedWorkflowTasks(h, id), 0);
      await assertWorkerServes(h);
    });
  }

  test('a raw sendMessage with a malformed batch option is refused by the validator; the conversation is unharmed', async () => {
    const id = await h.conversations.startConversation({ timeouts: { idle: '10 minutes' } });
    await assert.rejects(
      h.client.workflow
        .getHandle(id)
        .executeUpdate(sendMessageUpdate, { args: ['Hi', { batch: { windowMs: HUGE } }] as never }),
      (err: Error) => {
        const message = err.cause instanceof Error ? err.cause.message : err.message;
        return /Invalid message options: batch/.test(message) && !message.includes(HUGE.slice(0, 100));
      },
    );
    assert.equal((await h.conversations.getState(id)).status, 'awaiting_user');
    await assertUnharmed(h, id);
    await h.conversations.end(id);
  });
});

describe('garbage batch results from the API', () => {
  for (const result of ['malformed', 'unknown_custom_id'] as const) {
    test(`every result line ${result}: the turn fails with a clear status after the bounded resubmissions`, async () => {
      const prompt = uniquePrompt('What is the current stock price of General Motors?');
      h.mock.script(
        prompt,
        Array.from({ length: 4 }, () => ({ fault: 'batch-result' as const, result })),
      );
      const id = `hostile-garbage-${result}-${Date.now()}`;
      const error = await h.conversations.sendMessage(id, prompt, { start: { tools: STOCK_TOOLS, batch: true } }).then(
        () => assert.fail('answered'),
        (err: unknown) => err,
      );
      assert.ok(error instanceof ConversationError, String(error));
      assert.match(error.message, /went through 4 Message Batches without a result: batch msgbatch_\w+ has no result/);
      assert.equal(h.mock.requestsFor(prompt).length, 4, 'four submissions, then it stopped');
      const state = await h.conversations.getState(id);
      assert.equal(state.status, 'awaiting_user');
      await assertUnharmed(h, id);
      await h.conversations.end(id);
    });
  }
});
