// Batch mode end to end (docs/batches.md): a conversation whose model calls go through the local Messages API's Message
// Batches, on the real dev server and worker. The chain answers as it does interactively at half the cost; calls of
// conversations started together share batches; the max_tokens ladder, expired and errored requests, garbage results,
// cancellation and a per-turn switch behave as the interactive path does.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { SUBMIT_BATCHED_CALL_ACTIVITY } from '../../common/activity-contracts';
import { demoTools } from '../../testing/demo-tools';
import { researchCompany } from '../../testing/demo-tools/research-agents';
import { callsTools, says } from '../support/script-steps';
import { modelOutputCap, nextMaxTokens } from '../../common/max-tokens-ladder';
import { DEFAULT_MODEL } from '../../common/options';
import type { StreamEvent } from '../../streaming/stream-events';
import { assertNear } from '../support/assert-near';
import { activitiesOf, attemptsOf, type Harness, startHarness, uniquePrompt } from '../support/harness';
import { waitUntil } from '../support/wait-until';

let h: Harness;

before(async () => {
  h = await startHarness({
    tools: [...demoTools, researchCompany],
    batchWindowMs: 300,
    batchDelayMs: 100,
    activityInterceptors: [
      () => ({
        inbound: {
          // A submission of a conversation marked LOST_COMPLETION submits, then fails on its first attempt as if the
          // worker had died before reporting: the retry must find the batch, not submit again.
          async execute(input, next) {
            const info = Context.current().info;
            const result = await next(input);
            const marked = JSON.stringify(input.args[0] ?? '').includes(LOST_COMPLETION);
            if (info.activityType === SUBMIT_BATCHED_CALL_ACTIVITY && marked && info.attempt === 1) {
              throw ApplicationFailure.retryable('the completion was lost', 'LostCompletion');
            }
            return result;
          },
        },
      }),
    ],
  });
});
after(async () => {
  await h?.close();
});

const QUESTION = 'What is the current stock price of General Motors?';
const LOST_COMPLETION = '[lost-completion]';
const CHAIN = { tools: STOCK_TOOLS, closeAfterFirstReply: true, promptCaching: false } as const;

/** The batch submissions the local API received (POST /v1/messages/batches), with their custom ids. */
function submissions() {
  return h.mock.requests.filter((r) => r.method === 'POST' && r.path === '/v1/messages/batches');
}

function batchedRequestsFor(prompt: string) {
  return h.mock.requestsFor(prompt).filter((r) => r.headers['x-local-batch'] !== undefined);
}

describe('batch mode: one conversation', () => {
  test('the ticker → price chain answers through batches, at half the interactive cost', async () => {
    const interactive = await h.conversations.sendMessage(`chain-i-${Date.now()}`, uniquePrompt(QUESTION), {
      start: CHAIN,
    });
    const prompt = uniquePrompt(QUESTION);
    const id = `chain-b-${Date.now()}`;
    const before = submissions().length;
    const reply = await h.conversations.sendMessage(id, prompt, { start: { ...CHAIN, batch: true } });
    assert.match(reply.text, /38\.50/);
    assert.equal(reply.modelCalls, 3);
    assert.equal(reply.toolCalls, 2);
    // Every model call went through a batch: three submissions, three requests answered inside them, none streamed.
    assert.equal(submissions().length - before, 3);
    const batched = batchedRequestsFor(prompt);
    assert.equal(batched.length, 3);
    assert.equal(h.mock.requestsFor(prompt).length, 3);
    assert.ok(batched.every((r) => r.stream === false));
    assert.deepEqual(reply.usage, interactive.usage);
    assertNear(reply.costUsd, interactive.costUsd! / 2);

    const activities = await activitiesOf(h.client, id);
    const types = activities.map((a) => a.type);
    assert.ok(!types.includes('callModel'), types.join(','));
    assert.deepEqual(
      types.filter((t) => t === 'submitBatchedModelCall' || !t.endsWith('BatchedModelCall')),
      [
        'submitBatchedModelCall',
        'get_ticker_symbol',
        'submitBatchedModelCall',
        'get_current_stock_price',
        'submitBatchedModelCall',
      ],
    );
    const poll = activities.find((a) => a.type === 'checkBatchedModelCall');
    assert.match(poll?.summary ?? '', /^batch msgbatch_\w+ · call 1$/);
    const result = await h.conversations.waitForResult(id);
    assert.equal(result.status, 'completed');

    // No tokens stream in batch mode; the step events are all there, each call's cost at the batch rate.
    const live: StreamEvent[] = [];
    const durable: StreamEvent[] = [];
    for await (const { event, live: isLive } of h.conversations.events(id, { fromOffset: 0, agents: 'none' })) {
      (isLive ? live : durable).push(event);
      if (event.type === 'conversation_ended') break;
    }
    assert.equal(live.length, 0);
    assert.equal(durable.filter((e) => e.type === 'model_call_started').length, 3);
    const finished = durable.filter((e) => e.type === 'model_call_finished');
    assert.equal(finished.length, 3);
    assertNear(
      finished.reduce((sum, e) => sum + (e.type === 'model_call_finished' ? (e.costUsd ?? 0) : 0), 0),
      reply.costUsd!,
    );
    assert.equal(durable.filter((e) => e.type === 'tool_call_input').length, 2);
  });

  test('a submission retried after its completion was lost finds its batch: the call is not submitted twice', async () => {
    const prompt = uniquePrompt(`${QUESTION} ${LOST_COMPLETION}`);
    const id = `lost-completion-${Date.now()}`;
    const before = submissions().length;
    const reply = await h.conversations.sendMessage(id, prompt, { start: { ...CHAIN, batch: true } });
    assert.match(reply.text, /38\.50/);
    assert.equal(submissions().length - before, 3, 'three calls, three submissions: none repeated');
    assert.equal(batchedRequestsFor(prompt).length, 3);
    const attempts = await attemptsOf(h.client, id);
    assert.ok(
      attempts.some((a) => a.type === SUBMIT_BATCHED_CALL_ACTIVITY && a.attempt >= 2),
      'a submission was retried',
    );
  });

  test('a turn of its own in batch mode, the next one interactive again', async () => {
    const id = `per-turn-${Date.now()}`;
    const first = uniquePrompt(QUESTION);
    await h.conversations.sendMessage(id, first, { start: { tools: STOCK_TOOLS }, batch: true });
    assert.equal(batchedRequestsFor(first).length, 3);
    const second = await h.conversations.sendMessage(id, 'And again, please?', { batch: false });
    assert.ok(second.text.length > 0);
    const requests = h.mock.requestsFor(first);
    assert.ok(requests.length > 3);
    assert.ok(requests.slice(3).every((r) => r.headers['x-local-batch'] === undefined && r.stream === true));
    await h.conversations.end(id);
  });

  test('a reply cut off at max_tokens climbs the ladder through batches', async () => {
    const prompt = uniquePrompt(QUESTION);
    h.mock.script(prompt, [
      {
        fault: 'truncated-tool-use',
        text: 'Looking it up.',
        tool: { name: 'get_ticker_symbol', input: { company_name: 'General Motors' } },
      },
    ]);
    const reply = await h.conversations.sendMessage(`ladder-${Date.now()}`, prompt, {
      start: { ...CHAIN, batch: true, maxTokens: 256 },
    });
    assert.match(reply.text, /38\.50/);
    const batched = batchedRequestsFor(prompt);
    // The cut-off reply is asked again one rung up, in a batch of its own.
    assert.deepEqual(
      batched.slice(0, 2).map((r) => r.body.max_tokens),
      [256, nextMaxTokens(256, modelOutputCap(DEFAULT_MODEL))],
    );
    assert.notEqual(batched[0]!.headers['x-local-batch'], batched[1]!.headers['x-local-batch']);
  });

  test('an expired request and an errored one are submitted again; the answer comes', async () => {
    const prompt = uniquePrompt(QUESTION);
    h.mock.script(prompt, [
      { fault: 'batch-result', result: 'expired' },
      { fault: 'status', status: 529 },
    ]);
    const id = `retried-${Date.now()}`;
    const reply = await h.conversations.sendMessage(id, prompt, { start: { ...CHAIN, batch: true } });
    assert.match(reply.text, /38\.50/);
    assert.equal(batchedRequestsFor(prompt).length, 5);
    const submitted = (await activitiesOf(h.client, id)).filter((a) => a.type === 'submitBatchedModelCall');
    assert.equal(submitted.length, 5);
  });

  test('a request the API refuses for good fails the turn with its error, not a retry loop', async () => {
    const prompt = uniquePrompt(QUESTION);
    h.mock.script(prompt, [{ fault: 'status', status: 400, message: 'scripted refusal' }]);
    const id = `refused-${Date.now()}`;
    await assert.rejects(h.conversations.sendMessage(id, prompt, { start: { ...CHAIN, batch: true } }), (err: Error) =>
      /scripted refusal/.test(err.message),
    );
    assert.equal(batchedRequestsFor(prompt).length, 1);
  });

  test('garbage in the results (a malformed line, an unknown custom_id) is resubmitted, then answered', async () => {
    const prompt = uniquePrompt(QUESTION);
    h.mock.script(prompt, [
      { fault: 'batch-result', result: 'malformed' },
      { fault: 'batch-result', result: 'unknown_custom_id' },
    ]);
    const reply = await h.conversations.sendMessage(`garbage-${Date.now()}`, prompt, {
      start: { ...CHAIN, batch: true },
    });
    assert.match(reply.text, /38\.50/);
    assert.equal(batchedRequestsFor(prompt).length, 5);
  });

  test('garbage every time ends the turn with a clear failure after the bounded resubmissions', async () => {
    const prompt = uniquePrompt(QUESTION);
    h.mock.script(
      prompt,
      Array.from({ length: 4 }, () => ({ fault: 'batch-result' as const, result: 'malformed' as const })),
    );
    const id = `garbage-always-${Date.now()}`;
    await assert.rejects(h.conversations.sendMessage(id, prompt, { start: { ...CHAIN, batch: true } }), (err: Error) =>
      /4 Message Batches without a result.*could not be read/.test(err.message),
    );
  });

  test('cancelling the conversation mid-batch stops waiting and cancels its batch', async () => {
    await postBatchDelay(60_000);
    try {
      const prompt = uniquePrompt(QUESTION);
      const id = `cancel-${Date.now()}`;
      await h.conversations.submitMessage(id, prompt, { start: { ...CHAIN, batch: true } });
      await waitUntil('its call is in a batch', () => batchedRequestsFor(prompt).length === 1, { timeoutMs: 20_000 });
      const batchId = batchedRequestsFor(prompt)[0]!.headers['x-local-batch']!;
      await h.client.workflow.getHandle(id).cancel();
      const result = await h.conversations.waitForResult(id).catch((err: unknown) => err);
      assert.ok(result);
      await waitUntil('the batch is cancelled', async () => (await batchStatus(batchId)).cancel_initiated_at !== null, {
        timeoutMs: 20_000,
      });
      const activities = await activitiesOf(h.client, id);
      assert.ok(activities.some((a) => a.type === 'cancelBatchedModelCall'));
    } finally {
      await postBatchDelay(100);
    }
  });
});

describe('batch mode: sub-agents', () => {
  test("a sub-agent inherits its parent's batch mode: its model calls go through batches too", async () => {
    const prompt = uniquePrompt('Research General Motors for me');
    const task = uniquePrompt(QUESTION);
    h.mock.script(prompt, [callsTools(['research_company', { task }]), says('GM is at $38.50.')]);
    const reply = await h.conversations.sendMessage(`agents-${Date.now()}`, prompt, {
      start: { tools: ['research_company'], closeAfterFirstReply: true, batch: true },
    });
    assert.equal(reply.text, 'GM is at $38.50.');
    assert.equal(batchedRequestsFor(prompt).length, 2);
    const child = h.mock.requestsFor(task);
    assert.equal(child.length, 3);
    assert.ok(child.every((r) => r.headers['x-local-batch'] !== undefined));
  });
});

describe('batch mode: shared batches', () => {
  test('ten conversations started together make one or two submissions per step', async () => {
    const prompts = Array.from({ length: 10 }, () => uniquePrompt(QUESTION));
    const before = submissions().length;
    const replies = await Promise.all(
      prompts.map((prompt, i) =>
        h.conversations.sendMessage(`shared-${i}-${Date.now()}`, prompt, {
          start: { ...CHAIN, batch: { windowMs: 2_000 } },
        }),
      ),
    );
    assert.ok(replies.every((r) => /38\.50/.test(r.text)));
    const made = submissions().length - before;
    // Three steps; each step's ten calls arrive within a window of each other, give or take a straggler.
    assert.ok(made >= 3 && made <= 6, `${made} submissions for 3 steps of 10 conversations`);
    const sizes = submissions()
      .slice(before)
      .map((r) => (r.body.requests as unknown[]).length);
    assert.equal(
      sizes.reduce((a, b) => a + b, 0),
      30,
    );
  });
});

async function postBatchDelay(ms: number): Promise<void> {
  const response = await fetch(`${h.mock.url}/_test/batch-delay`, { method: 'POST', body: JSON.stringify({ ms }) });
  assert.equal(response.status, 200);
}

async function batchStatus(id: string): Promise<{ processing_status: string; cancel_initiated_at: string | null }> {
  const response = await fetch(`${h.mock.url}/v1/messages/batches/${id}`, { headers: { 'x-api-key': 'test' } });
  return (await response.json()) as { processing_status: string; cancel_initiated_at: string | null };
}
