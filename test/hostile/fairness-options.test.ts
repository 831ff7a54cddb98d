// Hostile tenants and priorities raw through Temporal (docs/fairness.md; the client's refusals are in
// client-calls.test.ts): a message's malformed priority sent as a raw update is refused by the conversation's
// validator and changes nothing; a start whose Priority Temporal itself refuses never becomes a conversation; a
// priority the server takes, started by the Temporal CLI, reaches the conversation's tasks. No workflow task fails.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CONVERSATION_WORKFLOW } from '../../common/conversation-types';
import { INPUT_FORMAT } from '../../common/input-format';
import { sendMessageUpdate, submitMessageUpdate } from '../../common/workflow-messages';
import { type Harness, startHarness } from '../support/harness';
import {
  assertUnharmed,
  assertWorkerServes,
  failedWorkflowTasks,
  HUGE,
  skipWithoutCli,
  startFromCli,
} from '../support/hostile';
import { waitUntil } from '../support/wait-until';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h?.close());

describe("a message's priority raw through Temporal", () => {
  for (const [what, priority] of [
    ['0', 0],
    ['6', 6],
    ['2.5', 2.5],
    ['NaN as null (JSON)', null],
    ['a huge string', HUGE],
    ['an object', { priorityKey: 1 }],
  ] as const) {
    test(`priority ${what}: refused by the validator, the conversation unharmed`, async () => {
      const id = await h.conversations.startConversation({ timeouts: { idle: '10 minutes' } });
      for (const update of [sendMessageUpdate, submitMessageUpdate] as (typeof sendMessageUpdate)[]) {
        await assert.rejects(
          h.client.workflow.getHandle(id).executeUpdate(update, { args: ['Hi', { priority }] as never }),
          (err: Error) => {
            const message = err.cause instanceof Error ? err.cause.message : err.message;
            return /Invalid message options: priority/.test(message) && !message.includes(HUGE.slice(0, 100));
          },
        );
      }
      assert.equal((await h.conversations.getState(id)).status, 'awaiting_user');
      await assertUnharmed(h, id);
      await h.conversations.end(id);
    });
  }
});

describe('a start whose Priority Temporal refuses', () => {
  for (const [what, priority] of [
    ['a fairness key of 65 bytes', { fairnessKey: 'k'.repeat(65) }],
    ['a negative priority key', { priorityKey: -1 }],
  ] as const) {
    test(`${what}: the start is refused, nothing runs`, async () => {
      const id = `raw-priority-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
      await assert.rejects(
        h.client.workflow.start(CONVERSATION_WORKFLOW, {
          taskQueue: h.taskQueue,
          workflowId: id,
          args: [{ v: INPUT_FORMAT, options: {} }],
          priority,
        }),
      );
      await assert.rejects(h.client.workflow.getHandle(id).describe());
      await assertWorkerServes(h);
    });
  }
});

describe('a start by the Temporal CLI with a priority, tenant and weight', { skip: skipWithoutCli }, () => {
  test("the conversation's model tasks carry them (the workflow reads its own start's Priority)", async () => {
    const id = `cli-priority-${Date.now()}`;
    const input = JSON.stringify({ v: INPUT_FORMAT, options: {}, firstMessage: 'Hello from the CLI' });
    const started = await startFromCli(
      h,
      id,
      '--input',
      input,
      '--priority-key',
      '2',
      '--fairness-key',
      'cli-tenant',
      '--fairness-weight',
      '4',
    );
    assert.ok(started.ok, started.output);
    await waitUntil(
      'the first turn answered',
      async () => (await h.conversations.getState(id)).status === 'awaiting_user',
    );
    const history = await h.client.workflow.getHandle(id).fetchHistory();
    const scheduled = (history.events ?? []).flatMap((e) => e.activityTaskScheduledEventAttributes ?? []);
    assert.ok(scheduled.length >= 1);
    for (const attributes of scheduled) {
      assert.equal(attributes.priority?.priorityKey, 2);
      assert.equal(attributes.priority?.fairnessKey, 'cli-tenant');
      assert.equal(attributes.priority?.fairnessWeight, 4);
    }
    assert.equal(await failedWorkflowTasks(h, id), 0);
    await h.conversations.end(id);
  });
});
