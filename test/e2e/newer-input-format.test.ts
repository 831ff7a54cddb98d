// A fleet that mixes builds without Worker Deployments (a rolling deploy, a rollback): a run whose input a newer build
// wrote is not refused by an older worker as if it were hostile; its workflow task fails retryably, naming the input
// format, and waits until a worker of a build that reads it takes it (common/input-format.ts, docs/upgrading.md). Input
// that no build wrote is still refused at once with InvalidConversationInput.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { temporal } from '@temporalio/proto';
import { CONVERSATION_WORKFLOW, type ConversationResult } from '../../common/conversation-types';
import type { ConversationInput } from '../../common/conversation-input';
import { FailureType } from '../../common/failure-types';
import { INPUT_FORMAT } from '../../common/input-format';
import { type Harness, startHarness, uniquePrompt } from '../support/harness';
import { conversationFailure } from '../support/hostile';
import { type ModifiedBuild, modifiedBuild, removeBuild } from '../support/modified-workflow-bundle';
import { startWorkerProcess } from '../support/worker-process';
import { waitUntil } from '../support/wait-until';

const EventType = temporal.api.enums.v1.EventType;

/** The next build: it writes and reads the next input format (a real edit of a copy of this checkout's source). */
const NEXT_FORMAT = INPUT_FORMAT + 1;
const nextBuild = () =>
  modifiedBuild([
    {
      file: 'common/input-format.ts',
      from: `export const INPUT_FORMAT = ${INPUT_FORMAT};`,
      to: `export const INPUT_FORMAT = ${NEXT_FORMAT};`,
    },
  ]);

let h: Harness;
let next: Promise<ModifiedBuild>;
before(async () => {
  next = nextBuild();
  next.catch(() => undefined); // awaited by the test that needs it
  h = await startHarness();
});
after(async () => {
  await h?.close();
  await removeBuild(next);
});

async function startedInput(id: string): Promise<ConversationInput> {
  const history = await h.client.workflow.getHandle(id).fetchHistory();
  const payload = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
  return h.client.options.loadedDataConverter.payloadConverter.fromPayload<ConversationInput>(payload);
}

/** The failure messages of the run's failed workflow tasks so far. */
async function failedTaskMessages(id: string): Promise<string[]> {
  const history = await h.client.workflow.getHandle(id).fetchHistory();
  return (history.events ?? [])
    .filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED)
    .map((e) => e.workflowTaskFailedEventAttributes?.failure?.message ?? '');
}

test('a conversation the client starts carries the input format this build writes', async () => {
  const id = `format-client-${Date.now()}`;
  await h.conversations.startConversation({ id });
  assert.equal((await startedInput(id)).v, INPUT_FORMAT);
  await h.conversations.end(id);
  assert.equal((await h.conversations.waitForResult(id)).status, 'completed');
});

describe('a version no build writes is refused like any bad input', () => {
  for (const [what, v] of [
    ['a string', '2'],
    ['zero', 0],
    ['a fraction', 1.5],
  ] as const) {
    test(`v as ${what}: InvalidConversationInput at once`, async () => {
      const id = `format-garbage-${Date.now()}-${String(v).replace('.', '_')}`;
      await h.client.workflow.start(CONVERSATION_WORKFLOW, {
        taskQueue: h.taskQueue,
        workflowId: id,
        args: [{ v, options: {} }],
      });
      const failure = await conversationFailure(h, id);
      assert.equal(failure.type, FailureType.InvalidConversationInput);
      assert.match(failure.message, /^Invalid conversation input: v: /);
      assert.deepEqual(await failedTaskMessages(id), [], 'no workflow task failed');
    });
  }
});

test('a run whose input a newer build wrote waits for that build: its task fails retryably, naming the format, and the newer build answers it', async () => {
  const id = `format-newer-${Date.now()}`;
  const prompt = uniquePrompt('Hello from the next build');
  const handle = await h.client.workflow.start(CONVERSATION_WORKFLOW, {
    taskQueue: h.taskQueue,
    workflowId: id,
    // What the next build's client writes: its format, and (for this build) a key it does not know yet.
    args: [{ v: NEXT_FORMAT, options: { closeAfterFirstReply: true }, firstMessage: prompt }],
  });
  const messages = await waitUntil('a failed workflow task', async () => {
    const failed = await failedTaskMessages(id);
    return failed.length > 0 && failed;
  });
  assert.match(
    messages[0]!,
    new RegExp(`input format ${NEXT_FORMAT} by a newer build; this build reads formats up to ${INPUT_FORMAT}\\.`),
  );
  assert.equal((await handle.describe()).status.name, 'RUNNING', 'the conversation is kept, not failed');

  // The rollout goes on: this build's worker stops, one of the next build (its workflow code and activities, a process
  // of its own) takes the queue and answers.
  h.worker.shutdown();
  const build = await next;
  const worker = await startWorkerProcess({
    entry: build.workerEntry,
    workflowBundlePath: build.workflowBundlePath,
    taskQueue: h.taskQueue,
    anthropicBaseUrl: h.mock.url,
    executionLog: h.executionLog,
  });
  try {
    const result = (await handle.result()) as ConversationResult;
    assert.equal(result.status, 'completed');
    assert.match(result.text, /Hello from the next build/);
  } finally {
    await worker.stop();
  }
});
