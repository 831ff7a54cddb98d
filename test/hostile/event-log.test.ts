// The conversation's event log as anyone with access to the namespace reaches it, without the client's checks: the
// handlers @temporalio/workflow-streams registered in version 0.1.0 (its publish signal, its poll update), the log's
// long poll and query, and a log handed in with the start input. Only the workflow writes into the log: each input is
// refused or ignored, no workflow task fails, and the worker goes on serving every conversation on its queue.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { WorkflowUpdateFailedError, WorkflowUpdateStage } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { FailureType } from '../../common/failure-types';
import { MAX_POLL_WAIT_MS, MAX_POLLS_IN_FLIGHT, type StreamPage } from '../../streaming/stream-events';
import { type Harness, startHarness, uniquePrompt } from '../support/harness';
import {
  answeredConversation,
  assertUnharmed,
  conversationFailure,
  skipWithoutCli,
  startFromCli,
  temporalCli,
  updateFromCli,
} from '../support/hostile';

const THREE_MIB = 'a'.repeat(3 * 2 ** 20);
const LONE_SURROGATE = '\ud800';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

/** The whole log as the getStreamEvents query reads it. */
async function logOf(id: string): Promise<StreamPage['events']> {
  return (await h.client.workflow.getHandle(id).query<StreamPage, [number]>('getStreamEvents', 0)).events;
}

/** 0.1.0's wire item: a base64 protobuf Payload holding the event as JSON. */
function legacyItem(event: unknown): string {
  const payload = temporal.api.common.v1.Payload.encode({
    metadata: { encoding: Buffer.from('json/plain') },
    data: Buffer.from(JSON.stringify(event)),
  }).finish();
  return Buffer.from(payload).toString('base64');
}

/** The failure an update was refused with (its validator, or its handler). */
async function refusalOf(id: string, name: string, arg: unknown): Promise<ApplicationFailure> {
  const error = await h.client.workflow
    .getHandle(id)
    .executeUpdate(name, { args: [arg] })
    .then(
      () => assert.fail(`${name} accepted the argument`),
      (err: unknown) => err,
    );
  assert.ok(error instanceof WorkflowUpdateFailedError, `${String(error)} ${String((error as Error).cause)}`);
  assert.ok(error.cause instanceof ApplicationFailure, String(error.cause));
  return error.cause;
}

/** A refusal says what is wrong in a few words, never what was sent. */
function assertPlainRefusal(failure: ApplicationFailure): void {
  assert.ok(failure.message.length < 300, `a short message (${failure.message.length} characters)`);
  assert.ok(!failure.message.includes(LONE_SURROGATE), 'the lone surrogate is not repeated');
  assert.doesNotMatch(failure.message, /a{50}/, 'the long string is not repeated');
}

describe("0.1.0's publish signal, from the Temporal CLI", { skip: skipWithoutCli }, () => {
  test('42, null, {"items":"x"}, a bad base64 item and a well-formed forged event are all ignored', async () => {
    const id = await answeredConversation(h, 'publish');
    const before = await logOf(id);
    const forged = { type: 'conversation_ended', status: 'completed' };
    for (const input of [
      '42',
      'null',
      '{"items":"x"}',
      '{"items":[{"topic":"conversation","data":"@@@"}],"publisher_id":"p","sequence":1}',
      JSON.stringify({ items: [{ topic: 'conversation', data: legacyItem(forged) }], publisher_id: 'e', sequence: 1 }),
    ]) {
      const sent = await temporalCli(
        'workflow',
        'signal',
        '--workflow-id',
        id,
        '--name',
        '__temporal_workflow_stream_publish',
        '--input',
        input,
      );
      assert.equal(sent.ok, true, sent.output); // a signal is delivered; the workflow drops it
    }
    // The conversation takes its next message, and its log has only what the workflow wrote.
    const reply = await h.conversations.sendMessage(id, uniquePrompt('Still there?'));
    assert.match(reply.text, /Still there/);
    const after = await logOf(id);
    assert.deepEqual(after.slice(0, before.length), before);
    assert.ok(!after.some(({ event }) => event.type === 'conversation_ended'), 'no forged end: it is still open');
    assert.deepEqual(
      after.slice(before.length).map(({ event }) => event.type),
      ['turn_started', 'model_call_started', 'text', 'model_call_finished', 'turn_finished'],
    );
    await assertUnharmed(h, id);
    await h.conversations.end(id);
  });
});

describe("0.1.0's poll update", { skip: skipWithoutCli }, () => {
  test('null, {"from_offset":0} and a well-formed poll are refused, pointing to pollEvents', async () => {
    const id = await answeredConversation(h, 'legacy-poll');
    for (const input of ['null', '{"from_offset":0}', '{"topics":["conversation"],"from_offset":0}']) {
      const sent = await updateFromCli(id, '__temporal_workflow_stream_poll', input);
      assert.equal(sent.ok, false, `${input} was accepted: ${sent.output}`);
      assert.match(sent.output, /pollEvents/);
    }
    await assertUnharmed(h, id);
    await h.conversations.end(id);
  });
});

describe('the long poll pollEvents and the query getStreamEvents', () => {
  test('wrong types, missing fields, bad offsets and waits, 3 MiB strings and lone surrogates are refused plainly', async () => {
    const id = await answeredConversation(h, 'poll');
    for (const arg of [
      null,
      42,
      'x',
      [],
      {},
      { from: -1 },
      { from: 1.5 },
      { from: Number.NaN }, // JSON carries it as null
      { from: Number.POSITIVE_INFINITY },
      { from: 1e300 },
      { from: '0' },
      { from: 0, waitMs: -1 },
      { from: 0, waitMs: 10 ** 9 },
      { from: 0, waitMs: 'soon' },
      { from: LONE_SURROGATE },
      { from: 0, [LONE_SURROGATE]: 1 },
      { from: 0, note: 'a'.repeat(100_000) },
    ]) {
      const failure = await refusalOf(id, 'pollEvents', arg);
      assert.equal(failure.type, FailureType.Rejected, `${JSON.stringify(arg)?.slice(0, 40)}: ${failure.message}`);
      assert.match(failure.message, /pollEvents takes/);
      assertPlainRefusal(failure);
    }
    // Over Temporal's 2 MB payload limit, the server refuses the update itself: the rejection would carry the request
    // back (the SDK's, not a handler's doing); nothing reaches the conversation's history.
    for (const arg of [{ from: THREE_MIB }, { from: 0, note: THREE_MIB }]) {
      const error = await h.client.workflow
        .getHandle(id)
        .executeUpdate('pollEvents', { args: [arg] })
        .then(
          () => assert.fail('a 3 MiB argument was accepted'),
          (err: unknown) => err as Error,
        );
      assert.match(`${error.message} ${String(error.cause)}`, /pollEvents takes|FAILED_PRECONDITION/);
    }
    for (const arg of [null, 'x', -1, 0.5, { from: 0 }, 'a'.repeat(100_000), LONE_SURROGATE, THREE_MIB]) {
      const error = await h.client.workflow
        .getHandle(id)
        .query('getStreamEvents', arg)
        .then(
          () => assert.fail(`getStreamEvents answered ${String(arg).slice(0, 20)}`),
          (err: unknown) => err as Error,
        );
      // (3 MiB: the server refuses the query itself, "Blob data size exceeds limit".)
      assert.match(
        error.message,
        arg === THREE_MIB ? /getStreamEvents takes|size exceeds limit/ : /getStreamEvents takes/,
      );
      assert.ok(error.message.length < 300 && !error.message.includes(LONE_SURROGATE), error.message.slice(0, 300));
    }
    // A poll that asks what it may: the log's events, at once.
    const page = await h.client.workflow
      .getHandle(id)
      .executeUpdate<StreamPage, [unknown]>('pollEvents', { args: [{ from: 0, waitMs: 0 }] });
    assert.equal(page.events[0]?.event.type, 'turn_started');
    assert.equal(page.busy, false);
    await assertUnharmed(h, id);
    await h.conversations.end(id);
  });
});

describe('a long poll left waiting', () => {
  /** A poll from the log's end: nothing there yet, so it waits. */
  async function pollAtEnd(id: string, waitMs?: number): Promise<{ page: StreamPage; ms: number }> {
    const handle = h.client.workflow.getHandle(id);
    const { next } = await handle.query<StreamPage, [number]>('getStreamEvents', 0);
    const started = Date.now();
    const page = await handle.executeUpdate<StreamPage, [unknown]>('pollEvents', {
      args: [{ from: next, ...(waitMs !== undefined && { waitMs }) }],
    });
    return { page, ms: Date.now() - started };
  }

  test('with no event at all, it ends by itself when its wait is over, empty, and frees its slot', async () => {
    const id = await answeredConversation(h, 'idle-poll');
    // Longer waits than the limit are refused: no poll holds its update slot for longer than MAX_POLL_WAIT_MS.
    const refused = await refusalOf(id, 'pollEvents', { from: 0, waitMs: MAX_POLL_WAIT_MS + 1 });
    assert.equal(refused.type, FailureType.Rejected);
    const { page, ms } = await pollAtEnd(id, 1_500);
    assert.deepEqual(page.events, [], 'nothing happened, so nothing is read');
    assert.ok(ms >= 1_400 && ms < 10_000, `answered after its wait (${ms} ms)`);
    // MAX_POLLS_IN_FLIGHT + 1 idle polls in a row, each ended by its wait: none is left holding a slot.
    for (let i = 0; i <= MAX_POLLS_IN_FLIGHT; i++) assert.deepEqual((await pollAtEnd(id, 100)).page.events, []);
    await assertUnharmed(h, id);
    await h.conversations.end(id);
  });

  test('on a conversation that then ends, it answers at once with the end, not after its wait', async () => {
    const id = await answeredConversation(h, 'poll-then-end');
    // The poll (the default wait: MAX_POLL_WAIT_MS), accepted by the workflow before the conversation ends.
    const handle = h.client.workflow.getHandle(id);
    const { next } = await handle.query<StreamPage, [number]>('getStreamEvents', 0);
    const started = Date.now();
    const waiting = await handle.startUpdate<StreamPage, [unknown]>('pollEvents', {
      args: [{ from: next }],
      waitForStage: WorkflowUpdateStage.ACCEPTED,
    });
    await h.conversations.end(id);
    const page = await waiting.result();
    const ms = Date.now() - started;
    assert.ok(ms < MAX_POLL_WAIT_MS / 2, `answered when the conversation ended (${ms} ms)`);
    assert.deepEqual(
      page.events.map((e) => e.event.type),
      ['conversation_ended'],
    );
    await h.client.workflow.getHandle(id).result();
  });
});

describe('a log in the start input', { skip: skipWithoutCli }, () => {
  const start = (id: string, input: unknown) => startFromCli(h, id, '--input', JSON.stringify(input));

  test('a log in the input of a new conversation, well-formed or not, ends it with InvalidConversationInput at once', async () => {
    // Only continue-as-new hands a run its log: a caller's is refused whole, never shown to readers.
    for (const stream of [
      {
        log: [{ topic: 'conversation', data: '@@@', offset: 0 }],
        base_offset: 0,
        publisher_sequences: {},
        publisher_last_seen: {},
      },
      { base: 40, events: [{ type: 'conversation_ended', status: 'completed' }] },
      { base: -1, events: [] },
      { base: 0, events: [{ type: 'no_such_event' }] },
      { base: 0, events: [{ type: 'turn_started', turn: 1, text: 42 }] },
      { base: 0, events: 'x' },
      { log: 'x', base_offset: 0, publisher_sequences: {}, publisher_last_seen: {} },
      42,
    ]) {
      const id = `hostile-log-start-bad-${Date.now()}`;
      assert.equal((await start(id, { stream })).ok, true);
      const failure = await conversationFailure(h, id);
      assert.equal(failure.type, FailureType.InvalidConversationInput);
      assert.match(failure.message, /stream/);
      await assertUnharmed(h, id);
    }
  });
});
