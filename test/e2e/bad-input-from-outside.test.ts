// What users send from outside the TypeScript client — the Temporal CLI, a raw SDK client — must end with a clear
// status or be refused, never approve by accident, and never make a workflow task fail over and over. Each case
// checks the stored history for WorkflowTaskFailed events: there must be none.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { temporal } from '@temporalio/proto';
import { CONVERSATION_WORKFLOW } from '../../common/conversation-types';
import { FailureType } from '../../common/failure-types';
import { type Harness, startHarness, uniquePrompt } from '../support/harness';
import { approvalAskedFor } from '../support/awaiting-approval';
import { conversationFailure, skipWithoutCli, startFromCli, temporalCli, updateFromCli } from '../support/hostile';

const EventType = temporal.api.enums.v1.EventType;

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

async function failedWorkflowTasks(workflowId: string): Promise<number> {
  const history = await h.client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED).length;
}

describe('an approval sent from the Temporal CLI', { skip: skipWithoutCli }, () => {
  test('{"approve": "false"} (a string) is rejected, and the tool does not run', async () => {
    const id = `cli-approval-${Date.now()}`;
    const turn = h.conversations.sendMessage(id, uniquePrompt('Buy 3 shares of General Motors'), {
      start: {
        tools: ['buy_stock'],
      },
    });
    const pending = await approvalAskedFor(h.conversations, id);

    for (const approve of ['"false"', '"true"', '1', 'null']) {
      const decision = `{"callId":"${pending.callId}","argumentsDigest":"${pending.argumentsDigest}","approve":${approve}}`;
      const sent = await updateFromCli(id, 'approveToolCall', decision);
      assert.equal(sent.ok, false, `approve: ${approve} was accepted: ${sent.output}`);
      assert.match(sent.output, /approve/i, 'the rejection names the field');
    }
    const state = await h.conversations.getState(id);
    assert.deepEqual(
      state.pendingApprovals.map((a) => a.callId),
      [pending.callId],
      'the call still waits for a real decision',
    );
    assert.deepEqual(h.executions(id, 'buy_stock'), [], 'buy_stock never ran');

    // A real "no" from the CLI ends the wait, and the tool still never runs.
    const no = `{"callId":"${pending.callId}","argumentsDigest":"${pending.argumentsDigest}","approve":false}`;
    assert.equal((await updateFromCli(id, 'approveToolCall', no)).ok, true);
    const result = await turn;
    assert.doesNotMatch(result.text, /filled/);
    assert.deepEqual(h.executions(id, 'buy_stock'), []);
    assert.equal(await failedWorkflowTasks(id), 0);
    await h.conversations.end(id);
  });
});

describe('a conversation started from outside ConversationClient', { skip: skipWithoutCli }, () => {
  const start = (id: string, input: string) => startFromCli(h, id, '--input', input);

  test('with {} input runs with the default options, and end() from the CLI completes it', async () => {
    const id = `cli-empty-input-${Date.now()}`;
    assert.equal((await start(id, '{}')).ok, true);
    const reply = await h.conversations.sendMessage(id, uniquePrompt('Hello there'));
    assert.equal(reply.status, 'awaiting_user');
    assert.match(reply.text, /You said: Hello there/);
    assert.equal((await temporalCli('workflow', 'signal', '--workflow-id', id, '--name', 'endConversation')).ok, true);
    const result = await h.conversations.waitForResult(id);
    assert.equal(result.status, 'completed');
    assert.equal(await failedWorkflowTasks(id), 0);
  });

  for (const [what, input] of [
    ['a 100-digit duration', `{"options":{"timeouts":{"idle":"${'9'.repeat(100)} seconds"}}}`],
    ['modelCall "0 seconds"', '{"options":{"timeouts":{"modelCall":"0 seconds"}}}'],
    ['an option of the wrong type', '{"options":{"closeAfterFirstReply":"yes"}}'],
    ['not an object', '"hello"'],
  ]) {
    test(`with ${what} fails with InvalidConversationInput at once, its workflow task never failing`, async () => {
      const id = `cli-bad-input-${Date.now()}`;
      assert.equal((await start(id, input!)).ok, true);
      const failure = await conversationFailure(h, id);
      assert.equal(failure.type, FailureType.InvalidConversationInput);
      assert.match(failure.message, /Invalid conversation input/);
      assert.equal(await failedWorkflowTasks(id), 0);
    });
  }

  test('a raw SDK client with bad options gets the same clear failure', async () => {
    const id = `raw-client-bad-input-${Date.now()}`;
    const handle = await h.client.workflow.start(CONVERSATION_WORKFLOW, {
      taskQueue: h.taskQueue,
      workflowId: id,
      args: [{ options: { timeouts: { modelCall: '0 seconds', idle: `${'1'.repeat(100)} seconds` } } }],
    });
    const failure = await conversationFailure(h, handle.workflowId);
    assert.equal(failure.type, FailureType.InvalidConversationInput);
    assert.match(failure.message, /modelCall/);
    assert.match(failure.message, /idle/);
    assert.equal(await failedWorkflowTasks(id), 0);
  });
});
