// Entry point: a running conversation and its start, reached straight through Temporal — the Temporal CLI or a raw SDK
// client, without ConversationClient's checks. Whatever is sent, the outcome is a refusal with a clear message or a
// status of the conversation; never a failed workflow task, never a worker that stops taking work.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { WorkflowFailedError, WorkflowUpdateFailedError, WorkflowUpdateStage } from '@temporalio/client';
import { ApplicationFailure, RawValue } from '@temporalio/common';
import { encode } from '@temporalio/common/lib/encoding';
import { encryptingDataConverter } from '../../codec/data-converter';
import { parseKeyRing } from '../../codec/keys';
import { CONVERSATION_WORKFLOW } from '../../common/conversation-types';
import { FailureType } from '../../common/failure-types';
import { approveToolCallUpdate, awaitTurnUpdate } from '../../common/workflow-messages';
import { MAX_TURN_WAITERS } from '../../workflows/turn-waiters';
import { type Harness, startHarness, uniquePrompt } from '../support/harness';
import {
  answeredConversation,
  assertUnharmed,
  assertWorkerServes,
  conversationFailure,
  failedWorkflowTasks,
  skipWithoutCli,
  startFromCli,
  temporalCli,
  updateFromCli,
} from '../support/hostile';
import { approvalAskedFor } from '../support/awaiting-approval';

const LONE_SURROGATE = '\ud800';
const THREE_MIB = 'x'.repeat(3 * 2 ** 20);
/** A payload that says it is JSON and is not. */
const NOT_JSON = RawValue.fromPayload({ metadata: { encoding: encode('json/plain') }, data: encode('{"options": ') });

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

/** Sends an update by name through the raw client; resolves with the refusal's message (fails if it was accepted). */
async function refusal(id: string, update: string, args: [unknown, ...unknown[]]): Promise<string> {
  const error = await h.client.workflow
    .getHandle(id)
    .executeUpdate(update, { args })
    .then(
      () => assert.fail(`${update} was accepted`),
      (err: unknown) => err,
    );
  assert.ok(error instanceof WorkflowUpdateFailedError, String(error));
  assert.ok(error.cause instanceof ApplicationFailure, String(error.cause));
  // A validator's refusal: of the call, or (InvalidMessageOptions) of a message's own options.
  assert.ok(['Rejected', 'InvalidMessageOptions'].includes(error.cause.type ?? ''), String(error.cause.type));
  return error.cause.message;
}

describe('updates with arguments that cannot be sent back', () => {
  test('awaitTurn with a lone surrogate is refused without quoting it, and the queue keeps working', async () => {
    const id = await answeredConversation(h, 'await-surrogate');
    const message = await refusal(id, 'awaitTurn', [LONE_SURROGATE]);
    assert.equal(message, 'A turn is a whole number from 1 on.');
    await assertUnharmed(h, id);
    assert.match((await h.conversations.sendMessage(id, 'Still there?')).text, /Still there/);
  });

  test('approveToolCall with a lone-surrogate callId or reason is refused, the field named', async () => {
    const id = await answeredConversation(h, 'approve-surrogate');
    for (const decision of [
      { callId: LONE_SURROGATE, argumentsDigest: 'x', approve: true },
      { callId: 'toolu_1', argumentsDigest: 'x', approve: false, reason: `no ${LONE_SURROGATE}` },
      { callId: `toolu_${LONE_SURROGATE}`.repeat(100), argumentsDigest: 'x', approve: true },
    ]) {
      const message = await refusal(id, 'approveToolCall', [decision]);
      assert.match(message, /Invalid approval decision: (callId|reason): /);
      assert.ok(!message.includes(LONE_SURROGATE), 'the refusal holds no lone surrogate');
    }
    await assertUnharmed(h, id);
  });

  test('sendMessage and submitMessage with a lone surrogate are refused: the API could not read the text', async () => {
    const id = await answeredConversation(h, 'message-surrogate');
    for (const update of ['sendMessage', 'submitMessage']) {
      assert.equal(
        await refusal(id, update, [`hi ${LONE_SURROGATE}`]),
        'The message is not well-formed Unicode (it has a lone surrogate).',
      );
    }
    await assertUnharmed(h, id);
  });

  for (const [what, update, args] of [
    ['awaitTurn with a 1 MiB turn', 'awaitTurn', ['9'.repeat(2 ** 20)]],
    ['sendMessage with a 1 MiB text', 'sendMessage', ['y'.repeat(2 ** 20)]],
    [
      'an approval reason of 1 MiB',
      'approveToolCall',
      [{ callId: 't', argumentsDigest: 'd', approve: false, reason: 'r'.repeat(2 ** 20) }],
    ],
    ['an unknown key of 1 MiB in the message options', 'sendMessage', ['hi', { ['k'.repeat(2 ** 20)]: 1 }]],
  ] as const) {
    test(`${what} is refused with a short message naming the limit`, async () => {
      const id = await answeredConversation(h, 'big-argument');
      const message = await refusal(id, update, [...args] as [unknown, ...unknown[]]);
      assert.ok(message.length < 10_000, `the refusal has ${message.length} characters`);
      await assertUnharmed(h, id);
    });
  }

  test('an argument over the payload limit (3 MiB) costs the caller its update, and nothing else', async () => {
    // Temporal's core sends a rejected update's request back with the rejection, and the server refuses a task
    // completion over its 2 MB blob limit: the update is dropped (FAILED_PRECONDITION to the caller) and the
    // server schedules the next workflow task without it. The conversation must go on as before.
    const id = await answeredConversation(h, 'three-mib');
    for (const [update, args] of [
      ['awaitTurn', [THREE_MIB]],
      ['sendMessage', [THREE_MIB]],
    ] as const) {
      await assert.rejects(h.client.workflow.getHandle(id).executeUpdate(update, { args: [...args] }));
    }
    const next = await h.conversations.sendMessage(id, 'Still there?', { timeoutMs: 30_000 });
    assert.match(next.text, /Still there/);
    assert.equal((await h.conversations.getState(id)).status, 'awaiting_user');
    // One failed task per dropped update (the server's, not the workflow's), never a failing loop.
    assert.ok((await failedWorkflowTasks(h, id)) <= 2);
    await assertWorkerServes(h);
  });
});

describe('callers that wait on turns, more than a conversation takes', () => {
  test(`past ${MAX_TURN_WAITERS} waiting callers, awaitTurn and sendMessage are refused as busy, sending nothing; an approval and a known outcome still get in`, async () => {
    const id = `raw-busy-${Date.now()}`;
    await h.conversations.sendMessage(id, uniquePrompt('Hello there'), { start: { tools: ['buy_stock'] } });
    const { turn } = await h.conversations.submitMessage(id, uniquePrompt('Buy 3 shares of General Motors'));
    const pending = await approvalAskedFor(h.conversations, id);
    const handle = h.client.workflow.getHandle(id);
    const waiting = [];
    for (let i = 0; i < MAX_TURN_WAITERS; i++) {
      waiting.push(
        await handle.startUpdate(awaitTurnUpdate, { args: [turn], waitForStage: WorkflowUpdateStage.ACCEPTED }),
      );
    }
    const extra = uniquePrompt('One more');
    for (const [update, args] of [
      ['awaitTurn', [turn]],
      ['sendMessage', [extra]],
    ] as const) {
      // Refused at once; accepted, it would wait for the turn's end (the deadline ends the test's wait then).
      const error = await h.client
        .withDeadline(Date.now() + 20_000, () => handle.executeUpdate(update, { args: [...args] }))
        .then(
          () => assert.fail(`${update} was accepted`),
          (err: unknown) => err,
        );
      assert.ok(error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure, String(error));
      assert.equal(error.cause.type, FailureType.Busy);
      assert.match(
        error.cause.message,
        new RegExp(`^${MAX_TURN_WAITERS} callers wait on this conversation's turns already`),
      );
    }
    // Turn 1 is answered already: asking for it holds no slot.
    assert.equal((await handle.executeUpdate(awaitTurnUpdate, { args: [1] })).kind, 'reply');
    await handle.executeUpdate(approveToolCallUpdate, {
      args: [{ callId: pending.callId, argumentsDigest: pending.argumentsDigest, approve: true }],
    });
    for (const update of waiting) assert.equal((await update.result()).kind, 'reply');
    assert.ok(
      !JSON.stringify(await h.conversations.getTranscript(id)).includes(extra),
      'the refused message was not taken',
    );
    await assertUnharmed(h, id);
  });
});

describe('a conversation started raw under an id the client refuses', () => {
  for (const [what, character] of [
    ['a control character', '\u0007'],
    ['a line break at its end', '\n'],
    ['a Unicode line separator', '\u2028'],
  ] as const) {
    test(`${what}: the conversation fails at its start with InvalidConversationInput, saying why`, async () => {
      const id = `raw-start-bad-id-${Date.now()}${character}`;
      const handle = await h.client.workflow.start(CONVERSATION_WORKFLOW, {
        taskQueue: h.taskQueue,
        workflowId: id,
        args: [{ firstMessage: uniquePrompt('Hello there') }],
      });
      // Bounded: a conversation that took the id would run until its idle timeout.
      const ended = await Promise.race([
        handle.result().then(
          () => 'completed',
          (err: unknown) => err,
        ),
        delay(30_000, 'still running', { ref: false }),
      ]);
      if (!(ended instanceof Error)) await handle.terminate('test over');
      assert.ok(ended instanceof WorkflowFailedError && ended.cause instanceof ApplicationFailure, String(ended));
      assert.equal(ended.cause.type, FailureType.InvalidConversationInput);
      const code = character.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
      assert.match(
        ended.cause.message,
        new RegExp(
          `^Invalid conversation input: id: A conversation id is printable text; this one has a (control character|line break) \\(U\\+${code}\\) at position ${id.length - 1}\\. No client could address it: start it under another id\\.$`,
        ),
      );
      assert.equal((await handle.describe()).status.name, 'FAILED');
      await assertUnharmed(h, id);
    });
  }
});

describe('start inputs and signals from outside', { skip: skipWithoutCli }, () => {
  const start = (id: string, ...flags: string[]) => startFromCli(h, id, ...flags);

  for (const [what, flags, reason] of [
    [
      'an unknown encoding',
      ['--input', '{}', '--input-meta', 'encoding=binary/evil'],
      /could not be decoded \(Unknown encoding: binary\/evil\)/,
    ],
    [
      'a carried state (only continue-as-new writes it)',
      [
        '--input',
        '{"carried":{"transcript":[],"outcomes":[{"kind":"reply"}],"pendingMessages":[],"nextTurn":1,"modelCalls":0,"toolCalls":0,"usage":{"inputTokens":0,"outputTokens":0,"cacheReadInputTokens":0,"cacheCreationInputTokens":0},"runs":1,"lastText":"","endRequested":false,"firstRunId":"x"}}',
      ],
      /carried|outcomes/,
    ],
  ] as const) {
    test(`a start input with ${what} fails the conversation with InvalidConversationInput at once`, async () => {
      const id = `cli-start-${Date.now()}`;
      const started = await start(id, ...flags);
      assert.equal(started.ok, true, started.output);
      const failure = await conversationFailure(h, id);
      assert.equal(failure.type, FailureType.InvalidConversationInput);
      assert.match(failure.message, reason);
      await assertUnharmed(h, id);
    });
  }

  for (const [what, flags] of [
    ['an unknown encoding', ['--input', '1', '--input-meta', 'encoding=binary/evil']],
  ] as const) {
    test(`endConversation with ${what} still ends the conversation, its argument ignored`, async () => {
      const id = await answeredConversation(h, 'signal');
      const sent = await temporalCli('workflow', 'signal', '--workflow-id', id, '--name', 'endConversation', ...flags);
      assert.equal(sent.ok, true, sent.output);
      assert.equal((await h.conversations.waitForResult(id)).status, 'completed');
      await assertUnharmed(h, id);
    });
  }

  test('json/plain bytes that are not JSON, as a start input (raw client): InvalidConversationInput at once', async () => {
    const id = `raw-start-not-json-${Date.now()}`;
    await h.client.workflow.start(CONVERSATION_WORKFLOW, { taskQueue: h.taskQueue, workflowId: id, args: [NOT_JSON] });
    const failure = await conversationFailure(h, id);
    assert.equal(failure.type, FailureType.InvalidConversationInput);
    assert.match(failure.message, /could not be decoded/);
    await assertUnharmed(h, id);
  });

  test('json/plain bytes that are not JSON, as the argument of endConversation (raw client): ignored, the end taken', async () => {
    const id = await answeredConversation(h, 'signal-not-json');
    await h.client.workflow.getHandle(id).signal('endConversation', NOT_JSON);
    assert.equal((await h.conversations.waitForResult(id)).status, 'completed');
    await assertUnharmed(h, id);
  });

  test('an update whose argument cannot be decoded is refused, the conversation unharmed', async () => {
    const id = await answeredConversation(h, 'update-undecodable');
    const sent = await updateFromCli(id, 'sendMessage', '"hi"', '--input-meta', 'encoding=binary/evil');
    assert.equal(sent.ok, false, sent.output);
    await assertUnharmed(h, id);
  });
});

describe(
  'a deployment that encrypts payloads, sent plain payloads from the Temporal CLI',
  { skip: skipWithoutCli },
  () => {
    let encrypted: Harness;
    before(async () => {
      const keys = parseKeyRing(`k1:${randomBytes(32).toString('base64')}`);
      encrypted = await startHarness({ dataConverter: encryptingDataConverter(keys) });
    });
    after(async () => {
      await encrypted?.close();
    });

    test('a plain start input fails the conversation with InvalidConversationInput, saying it was not encrypted', async () => {
      const id = `cli-plain-start-${Date.now()}`;
      const started = await temporalCli(
        'workflow',
        'start',
        '--type',
        CONVERSATION_WORKFLOW,
        '--task-queue',
        encrypted.taskQueue,
        '--workflow-id',
        id,
        '--input',
        '{}',
      );
      assert.equal(started.ok, true, started.output);
      const failure = await conversationFailure(encrypted, id);
      assert.equal(failure.type, FailureType.InvalidConversationInput);
      assert.match(failure.message, /could not be decoded \(Refusing a payload that is not encrypted/);
      await assertUnharmed(encrypted, id);
    });

    test('a plain endConversation argument is ignored and the conversation ends as asked', async () => {
      const id = `cli-plain-signal-${Date.now()}`;
      await encrypted.conversations.sendMessage(id, uniquePrompt('Hello there'), { start: {} });
      const sent = await temporalCli(
        'workflow',
        'signal',
        '--workflow-id',
        id,
        '--name',
        'endConversation',
        '--input',
        '1',
      );
      assert.equal(sent.ok, true, sent.output);
      assert.equal((await encrypted.conversations.waitForResult(id)).status, 'completed');
      await assertUnharmed(encrypted, id);
    });
  },
);
