// Fallback models (common/fallback-models.ts): a model call whose model stays overloaded (529) for
// `fallbackAfterAttempts` attempts goes, as an activity of its own, to the next model of `fallbackModels`; the
// transcript, the Web UI summaries and the usage and cost per model say which model answered. Scripted by the local
// Messages API (529s), on the live path, when every model stays overloaded, with continue-as-new after every call,
// and after the worker process is SIGKILLed during the fallback call.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { ConversationError } from '../../client/errors';
import { StreamView } from '../../streaming/client/stream-view';
import type { TokenUsage } from '../../common/conversation-types';
import type { StreamItem } from '../../streaming/stream-events';
import type { UsageByModel } from '../../common/fallback-models';
import { costUsd, PUBLISHED_PRICES } from '../../common/pricing';
import { addUsage, ZERO_USAGE } from '../../common/usage';
import { STOCK_QUESTION, STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import type { RecordedRequest, ScriptStep } from '../../testing/messages-api/types';
import { activitiesOf, attemptsOf, type Harness, startHarness, uniquePrompt } from '../support/harness';
import { crashRig } from '../support/crash-rig';

const PRIMARY = 'claude-sonnet-5-5';
const FALLBACK = 'claude-opus-5-5';
const LAST = 'claude-haiku-4-5';
const OVERLOADED: ScriptStep = { fault: 'status', status: 529 };
const OPTIONS = {
  model: PRIMARY,
  fallbackModels: [FALLBACK],
  fallbackAfterAttempts: 2,
  tools: STOCK_TOOLS,
  closeAfterFirstReply: true,
};

const modelsOf = (requests: RecordedRequest[]) => requests.map((r) => [r.body.model as string, r.status]);

/** What the replies the local API answered billed, per model (its JSON or SSE usage, as the activity read it). */
function expectedByModel(byModel: UsageByModel): void {
  let total = ZERO_USAGE as TokenUsage;
  for (const [model, { usage, costUsd: cost }] of Object.entries(byModel)) {
    total = addUsage(total, usage);
    const prices = PUBLISHED_PRICES[model]!;
    assert.ok(cost !== null && Math.abs(cost - costUsd(usage, prices)) < 1e-12, `${model} priced at its own prices`);
  }
}

function sumCost(byModel: UsageByModel): number {
  return Object.values(byModel).reduce((sum, entry) => sum + (entry.costUsd ?? Number.NaN), 0);
}

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

describe('fallback models on the live path', () => {
  test('overloaded twice on the first model: the same call answered by the fallback, then the next call on the first model again', async () => {
    const prompt = uniquePrompt(STOCK_QUESTION);
    h.mock.script(prompt, [{ demo: true }, OVERLOADED, OVERLOADED]);
    const id = `fallback-live-${randomUUID().slice(0, 8)}`;
    const reply = await h.conversations.sendMessage(id, prompt, { start: OPTIONS });
    assert.match(reply.text, /38\.50/);
    assert.equal(reply.modelCalls, 3, 'the overloaded attempts and the switch are not model calls of their own');

    const requests = h.mock.requestsFor(prompt);
    assert.deepEqual(modelsOf(requests), [
      [PRIMARY, 200],
      [PRIMARY, 529],
      [PRIMARY, 529],
      [FALLBACK, 200],
      [PRIMARY, 200],
    ]);
    assert.deepEqual(
      requests[3]!.body.messages,
      requests[1]!.body.messages,
      'the fallback sends the same conversation',
    );

    // The transcript holds the fallback's reply where the second call's belongs; the third call read it.
    const transcript = await h.conversations.getTranscript(id);
    assert.equal(transcript.length, 6);
    assert.deepEqual(requests[4]!.body.messages.slice(0, 4), transcript.slice(0, 4));

    // Usage and cost per model: two calls of the first model, one of the fallback, each at its own prices.
    const byModel = reply.byModel!;
    assert.deepEqual(Object.keys(byModel).sort(), [FALLBACK, PRIMARY].sort());
    assert.equal(byModel[PRIMARY]!.calls, 2);
    assert.equal(byModel[FALLBACK]!.calls, 1);
    expectedByModel(byModel);
    assert.ok(Math.abs(sumCost(byModel) - reply.costUsd!) < 1e-12, 'the turn costs what its models cost');
    assert.deepEqual(addUsage(byModel[PRIMARY]!.usage, byModel[FALLBACK]!.usage), reply.usage);
    const state = await h.conversations.getState(id);
    assert.deepEqual(state.byModel, byModel);

    // The history: the overloaded call failed after 2 attempts (not retried further), the fallback is an activity
    // of its own whose summary names its model.
    const activities = (await activitiesOf(h.client, id)).filter((a) => a.type === 'callModel');
    assert.deepEqual(
      activities.map((a) => [a.summary?.split(' · ').slice(0, 2).join(' · '), a.failed === true]),
      [
        [`${PRIMARY} · call 1`, false],
        [`${PRIMARY} · call 2`, true],
        [`${FALLBACK} · call 2`, false],
        [`${PRIMARY} · call 3`, false],
      ],
    );
    assert.match(activities[2]!.summary!, new RegExp(`fallback 1 \\(${PRIMARY} overloaded\\)`));
    const attempts = (await attemptsOf(h.client, id)).filter((a) => a.type === 'callModel');
    assert.deepEqual(
      attempts.map((a) => a.attempt),
      [1, 2, 1, 1],
    );
    assert.equal(attempts[1]!.lastFailureType, 'ModelOverloaded');
  });

  test('streamed: what the overloaded model streamed before its error is dropped, the fallback streams the answer, its billed tokens count under the first model', async () => {
    const prompt = uniquePrompt('Say something.');
    const midStream: ScriptStep = {
      fault: 'stream-error',
      errorType: 'overloaded_error',
      text: 'Partial words of the overloaded model.',
      tokenDelayMs: 20,
      usage: { input_tokens: 100, output_tokens: 1 },
    };
    h.mock.script(prompt, [
      midStream,
      midStream,
      { reply: { content: [{ type: 'text', text: 'Answered by the fallback.' }], stop_reason: 'end_turn' } },
    ]);
    const id = `fallback-stream-${randomUUID().slice(0, 8)}`;
    const items: StreamItem[] = [];
    const options = {
      model: PRIMARY,
      fallbackModels: [FALLBACK],
      fallbackAfterAttempts: 2,
      closeAfterFirstReply: true,
    };
    for await (const item of h.conversations.streamMessage(id, prompt, { start: options })) items.push(item);

    const view = new StreamView();
    for (const item of items) view.apply(item.event);
    assert.equal(view.text(), 'Answered by the fallback.');
    const durable = items.filter((i) => !i.live).map((i) => i.event);
    const started = durable.filter((e) => e.type === 'model_call_started');
    assert.deepEqual(started, [
      { type: 'model_call_started', call: 1 },
      { type: 'model_call_started', call: 1, model: FALLBACK },
    ]);
    const discarded = durable.findIndex((e) => e.type === 'model_output_discarded' && e.reason === 'failed');
    assert.ok(discarded >= 0 && discarded < durable.indexOf(started[1]!), 'the overloaded call is dropped first');
    const finished = durable.find((e) => e.type === 'model_call_finished');
    assert.equal(finished?.type === 'model_call_finished' && finished.model, FALLBACK);

    const result = await h.conversations.waitForResult(id);
    assert.deepEqual(
      h.mock.requestsFor(prompt).map((r) => r.body.model),
      [PRIMARY, PRIMARY, FALLBACK],
    );
    // The two failed attempts billed their prompt and the token they streamed: the first model's, not a call of it.
    const primary = result.byModel![PRIMARY]!;
    assert.equal(primary.calls, 0);
    assert.equal(primary.usage.inputTokens, 200);
    assert.equal(result.byModel![FALLBACK]!.calls, 1);
    expectedByModel(result.byModel!);
  });

  test('a 500 does not switch models: Temporal retries it on the same model', async () => {
    const prompt = uniquePrompt(STOCK_QUESTION);
    h.mock.script(prompt, [
      { fault: 'status', status: 500 },
      { fault: 'status', status: 500 },
    ]);
    const id = `fallback-500-${randomUUID().slice(0, 8)}`;
    const reply = await h.conversations.sendMessage(id, prompt, { start: OPTIONS });
    assert.match(reply.text, /38\.50/);
    assert.deepEqual(
      modelsOf(h.mock.requestsFor(prompt)).map(([model]) => model),
      [PRIMARY, PRIMARY, PRIMARY, PRIMARY, PRIMARY],
    );
    assert.deepEqual(Object.keys(reply.byModel!), [PRIMARY]);
  });

  test('the budget checks the fallback call at its own model prices: a fallback with no price is not sent under a USD limit', async () => {
    const prompt = uniquePrompt(STOCK_QUESTION);
    h.mock.script(prompt, [{ demo: true }, OVERLOADED, OVERLOADED]);
    const id = `fallback-budget-${randomUUID().slice(0, 8)}`;
    const reply = await h.conversations.sendMessage(id, prompt, {
      start: { ...OPTIONS, fallbackModels: ['claude-unpriced-1'], budget: { perTurn: { usd: 1 } } },
    });
    assert.equal(reply.status, 'budget_exhausted');
    assert.match(reply.text, /cost of claude-unpriced-1 is unknown/);
    assert.deepEqual(
      modelsOf(h.mock.requestsFor(prompt)).map(([model]) => model),
      [PRIMARY, PRIMARY, PRIMARY],
      'the fallback model was never called',
    );
    assert.equal(reply.modelCalls, 1);
    assert.deepEqual(Object.keys(reply.byModel!), [PRIMARY]);
  });

  test('every model overloaded: the turn fails as ModelOverloaded naming them all; the conversation goes on', async () => {
    const prompt = uniquePrompt(STOCK_QUESTION);
    h.mock.script(prompt, [OVERLOADED, OVERLOADED, OVERLOADED, OVERLOADED, OVERLOADED, OVERLOADED]);
    const id = `fallback-all-${randomUUID().slice(0, 8)}`;
    const error = await h.conversations
      .sendMessage(id, prompt, { start: { ...OPTIONS, fallbackModels: [FALLBACK, LAST], closeAfterFirstReply: false } })
      .then(
        () => assert.fail('the turn was answered'),
        (err: unknown) => err,
      );
    assert.ok(error instanceof ConversationError, String(error));
    assert.equal(error.code, 'turn_failed');
    assert.equal(error.failureType, 'ModelOverloaded');
    assert.match(
      error.message,
      new RegExp(`Every model stayed overloaded \\(2 attempts each\\): ${PRIMARY}, ${FALLBACK}, ${LAST}`),
    );
    assert.deepEqual(
      modelsOf(h.mock.requestsFor(prompt)),
      [PRIMARY, PRIMARY, FALLBACK, FALLBACK, LAST, LAST].map((model) => [model, 529]),
    );
    const state = await h.conversations.getState(id);
    assert.equal(state.status, 'awaiting_user');
    assert.equal(state.transcriptLength, 0, 'the failed turn left nothing in the transcript');
    assert.deepEqual(state.byModel, {});

    // The next message is answered (the script is spent: the first model answers again).
    const next = await h.conversations.sendMessage(id, prompt);
    assert.match(next.text, /38\.50/);
    assert.deepEqual(Object.keys(next.byModel!), [PRIMARY]);
    await h.conversations.end(id);
  });

  test('continue-as-new after every call: the fallback, its usage and cost per model carried across runs', async () => {
    const prompt = uniquePrompt(STOCK_QUESTION);
    h.mock.script(prompt, [{ demo: true }, OVERLOADED, OVERLOADED, { demo: true }, OVERLOADED, OVERLOADED]);
    const id = `fallback-can-${randomUUID().slice(0, 8)}`;
    const reply = await h.conversations.sendMessage(id, prompt, {
      start: { ...OPTIONS, continueAsNewAfterModelCalls: 1 },
    });
    assert.match(reply.text, /38\.50/);
    assert.deepEqual(modelsOf(h.mock.requestsFor(prompt)), [
      [PRIMARY, 200],
      [PRIMARY, 529],
      [PRIMARY, 529],
      [FALLBACK, 200],
      [PRIMARY, 529],
      [PRIMARY, 529],
      [FALLBACK, 200],
    ]);
    const byModel = reply.byModel!;
    assert.equal(byModel[PRIMARY]!.calls, 1);
    assert.equal(byModel[FALLBACK]!.calls, 2);
    expectedByModel(byModel);
    assert.ok(Math.abs(sumCost(byModel) - reply.costUsd!) < 1e-12);
    const result = await h.conversations.waitForResult(id);
    assert.deepEqual(result.byModel, byModel);
    const state = await h.conversations.getState(id);
    assert.ok(state.runs >= 3, `a run per call (${state.runs} runs)`);
  });
});

describe('fallback models after a worker SIGKILL mid-chain', () => {
  const rig = crashRig('fallback-crash');

  test('killed during the fallback call: the fresh worker retries it on the fallback model, not the overloaded one', async () => {
    await rig.startWorker();
    const prompt = uniquePrompt(STOCK_QUESTION);
    rig.mock.script(prompt, [{ demo: true }, OVERLOADED, OVERLOADED, { demo: true, delayMs: 120_000 }]);
    const id = `fallback-crash-${randomUUID().slice(0, 8)}`;
    await rig.conversations.startConversation({
      id,
      firstMessage: prompt,
      ...OPTIONS,
      timeouts: { modelHeartbeat: '2 seconds' },
    });
    await rig.killAtRequest(prompt, 4);
    const result = await rig.conversations.waitForResult(id);
    assert.equal(result.status, 'completed');
    assert.match(result.text, /38\.50/);

    const requests = rig.mock.requestsFor(prompt);
    assert.deepEqual(
      requests.map((r) => r.body.model),
      [PRIMARY, PRIMARY, PRIMARY, FALLBACK, FALLBACK, PRIMARY],
      'the killed fallback attempt is retried on the fallback model',
    );
    assert.deepEqual(requests[4]!.body.messages, requests[1]!.body.messages, 'the retry sends the same conversation');
    const attempts = (await attemptsOf(rig.client, id)).filter((a) => a.type === 'callModel');
    assert.deepEqual(
      attempts.map((a) => a.attempt),
      [1, 2, 2, 1],
    );
    assert.equal(result.byModel![FALLBACK]!.calls, 1);
    assert.equal(result.byModel![PRIMARY]!.calls, 2);
    expectedByModel(result.byModel!);
  });
});
