// Hostile `threads` options: through ConversationClient (refused before anything is sent, invalid_options) and raw
// through Temporal (the workflow refuses its own input: InvalidConversationInput at once, never a failed workflow task).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CONVERSATION_WORKFLOW } from '../../common/conversation-types';
import { type Harness, startHarness } from '../support/harness';
import { assertWorkerServes, conversationFailure, failedWorkflowTasks, HUGE, refusedOptions } from '../support/hostile';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h?.close());

describe('threads options through the client', () => {
  for (const [what, value] of [
    ['a string', 'yes'],
    ['a huge string', HUGE],
    ['a number', 1],
    ['an object', { enabled: true }],
    ['null', null],
  ] as const) {
    test(`threads as ${what}: invalid_options naming threads`, async () => {
      assert.match(await refusedOptions(h, { threads: value }), /threads/);
    });
  }
});

describe('threads options raw through Temporal', () => {
  for (const [what, threads] of [
    ['a string', 'true'],
    ['an array', [true]],
  ] as const) {
    test(`a start input with threads as ${what} fails the conversation with InvalidConversationInput at once`, async () => {
      const id = `raw-threads-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
      await h.client.workflow.start(CONVERSATION_WORKFLOW, {
        taskQueue: h.taskQueue,
        workflowId: id,
        args: [{ options: { threads } }],
      });
      const failure = await conversationFailure(h, id);
      assert.equal(failure.type, 'InvalidConversationInput');
      assert.ok(failure.message.length < 2_000);
      assert.equal(await failedWorkflowTasks(h, id), 0);
      await assertWorkerServes(h);
    });
  }
});
