// Input formats (common/input-format.ts): a newer build's input is told apart from garbage, the workflow's start schema
// takes this build's `v` and refuses any other, and a model-side activity leaves a newer input for a newer build —
// failing its attempt retryably, before anything is sent. The activity runs in the SDK's own activity runtime
// (MockActivityEnvironment runs the worker's Activity class).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { CallModelInput } from '../../common/activity-contracts';
import { INPUT_FORMAT, NEWER_INPUT_FORMAT, newerInputFormat } from '../../common/input-format';
import { conversationInputSchema } from '../../common/workflow-messages';
import { withConversation } from '../../activities/model-context-cache';

const callInput = (v?: unknown) =>
  ({
    ...(v !== undefined && { v }),
    callNumber: 1,
    transcriptLength: 1,
    newMessages: [{ role: 'user', content: 'Hello' }],
    request: { model: 'claude-sonnet-5-5', maxTokens: 100, protocol: 'native', tools: [], promptCaching: false },
  }) as CallModelInput;

test('only a whole number past this build is a newer format; absent, older, or not a whole number is not', () => {
  assert.equal(newerInputFormat({ v: INPUT_FORMAT + 1 }), INPUT_FORMAT + 1);
  for (const input of [{}, { v: INPUT_FORMAT }, { v: '9' }, { v: 2.5 }, { v: Number.POSITIVE_INFINITY }, null, 'v', 7])
    assert.equal(newerInputFormat(input), undefined, JSON.stringify(input));
});

test("the start input's schema takes this build's format and refuses a v no build writes", () => {
  assert.equal(conversationInputSchema.safeParse({ v: INPUT_FORMAT }).success, true);
  assert.equal(conversationInputSchema.safeParse({}).success, true, 'absent: format 1');
  for (const v of ['1', 0, 1.5, -1, INPUT_FORMAT + 1])
    assert.equal(conversationInputSchema.safeParse({ v }).success, false, JSON.stringify(v));
});

test("a model call's input in a newer format fails its attempt retryably, naming the format, before any request", async () => {
  const env = new MockActivityEnvironment({ activityType: 'callModel' });
  const failure = await env
    .run(async () => withConversation(callInput(INPUT_FORMAT + 1)))
    .then(
      () => assert.fail('a newer input was read'),
      (err: unknown) => err,
    );
  assert.ok(failure instanceof ApplicationFailure, String(failure));
  assert.equal(failure.type, NEWER_INPUT_FORMAT);
  assert.equal(failure.nonRetryable, false, 'retried, so that a worker of a newer build takes it');
  assert.match(
    failure.message,
    new RegExp(`^The callModel activity's input was written in input format ${INPUT_FORMAT + 1} by a newer build`),
  );
});

test("a model call's input in this build's format, or none, is read and names its conversation", async () => {
  const env = new MockActivityEnvironment({ activityType: 'callModel' });
  for (const v of [INPUT_FORMAT, undefined]) {
    const input = (await env.run(async () => withConversation(callInput(v)))) as ReturnType<typeof withConversation>;
    assert.equal(typeof input.conversation.workflowId, 'string');
  }
});
