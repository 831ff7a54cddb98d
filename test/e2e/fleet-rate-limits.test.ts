// The fleet's rate limits (docs/rate-limits.md): worker processes that share one organisation's limits through the
// limiter workflow. Two workers against the local Messages API's per-minute limits finish every conversation with
// hardly a 429; a call that waits for capacity (a retry Temporal starts after the wait) survives its worker's SIGKILL
// and a restart of the Temporal server, and is sent once; with the limiter off, calls go out as before.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import type { MessagesApi } from '../../testing/messages-api/types';
import { rateLimiterId, rateLimitStateQuery } from '../../common/rate-limiter-messages';
import { ModelFailureType } from '../../common/failure-types';
import { crashRig } from '../support/crash-rig';
import { uniquePrompt } from '../support/harness';
import { waitUntil } from '../support/wait-until';

const QUESTION = 'What is the current stock price of General Motors?';
const START = { tools: STOCK_TOOLS, closeAfterFirstReply: true } as const;

/** The API's answers to model calls: how many, and how many were 429s. */
function answered(mock: MessagesApi): { total: number; refused: number } {
  const calls = mock.requests.filter((r) => r.method === 'POST' && r.path === '/v1/messages' && r.status !== 0);
  return { total: calls.length, refused: calls.filter((r) => r.status === 429).length };
}

async function terminateLimiter(client: Client | undefined, scope: string): Promise<void> {
  await client?.workflow
    .getHandle(rateLimiterId(scope))
    .terminate('test over')
    .catch(() => undefined);
}

describe('two worker processes share the API limits through the limiter', () => {
  const scope = `fleet-${randomUUID().slice(0, 8)}`;
  const rig = crashRig('fleet-rate-limits', { workerEnv: { ANTHROPIC_RATE_LIMIT_SCOPE: scope } });
  after(() => terminateLimiter(rig.client, scope));

  test('16 conversations (48 model calls) against 30 requests per minute: all answer, at most 2 calls meet a 429', async () => {
    rig.mock.setRateLimits({ requestsPerMinute: 30 });
    await Promise.all([rig.startWorker(), rig.startWorker()]);
    const started = Date.now();
    const ids = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        rig.conversations.startConversation({
          id: `fleet-${scope}-${i}`,
          firstMessage: uniquePrompt(QUESTION),
          ...START,
        }),
      ),
    );
    const results = await Promise.all(ids.map((id) => rig.conversations.waitForResult(id)));
    const tookMs = Date.now() - started;
    for (const result of results) {
      assert.equal(result.status, 'completed');
      assert.match(result.text, /38\.50/);
    }
    const { total, refused } = answered(rig.mock);
    assert.ok(refused <= 2, `${refused} of ${total} model calls met a 429`);
    assert.equal(total - refused, 48, 'every call answered once');
    // 48 calls at 30 a minute (a full bucket of 30 at the start): the last ones had to wait for the refill.
    assert.ok(tookMs >= 25_000, `the calls took ${tookMs} ms: the limit was not honoured`);
    // The limiter is a workflow of its own on the workers' task queue, with what it learned from the headers; its
    // tasks go first (priority 1), ahead of the conversations' backlog.
    const limiter = rig.client.workflow.getHandle(rateLimiterId(scope));
    const history = await limiter.fetchHistory();
    assert.equal(history.events?.[0]?.workflowExecutionStartedEventAttributes?.priority?.priorityKey, 1);
    const state = await limiter.query(rateLimitStateQuery);
    const models = Object.values(state.models);
    assert.equal(models.length, 1);
    assert.equal(models[0]!.buckets.requests?.limit, 30);
    console.log(`# 48 calls, 2 workers, 30 requests/min: ${tookMs} ms, ${refused} 429s`);
  });

  test("a burst of first calls bigger than the limit waits for the first response's headers, not for 429s", async () => {
    // A model neither worker has called: each worker's first call goes alone, the others wait for its headers and
    // then reserve. 24 calls at once against 20 a minute: without that wait, 4 would meet a 429.
    const model = 'claude-haiku-4-5';
    rig.mock.reset();
    rig.mock.setRateLimits({ requestsPerMinute: 20 });
    const prompts = Array.from({ length: 24 }, () => uniquePrompt('Say hello.'));
    for (const prompt of prompts)
      rig.mock.script(prompt, [{ reply: { content: [{ type: 'text', text: 'Hello.' }], stop_reason: 'end_turn' } }]);
    const ids = await Promise.all(
      prompts.map((firstMessage) =>
        rig.conversations.startConversation({ firstMessage, model, tools: [], closeAfterFirstReply: true }),
      ),
    );
    for (const id of ids) assert.equal((await rig.conversations.waitForResult(id)).status, 'completed');
    const { total, refused } = answered(rig.mock);
    // The two workers' first calls are not reserved: one of them may find the other's last slot taken.
    assert.ok(refused <= 1, `${refused} of ${total} first calls met a 429`);
    assert.equal(total - refused, 24);
    const state = await rig.client.workflow.getHandle(rateLimiterId(scope)).query(rateLimitStateQuery);
    assert.equal(state.models[model]?.buckets.requests?.limit, 20);
    assert.ok(state.totals!.reserved >= 22, `${state.totals!.reserved} reservations: the waiting calls reserved`);
    console.log(`# 24 first calls, 2 workers, 20 requests/min: ${refused} 429s`);
  });
});

describe('a call waiting for capacity, its worker SIGKILLed and the Temporal server restarted', () => {
  const scope = `fleet-crash-${randomUUID().slice(0, 8)}`;
  const rig = crashRig('fleet-rate-limits-crash', {
    ownServer: true,
    workerEnv: { ANTHROPIC_RATE_LIMIT_SCOPE: scope },
  });

  test('the conversation answers after the wait, each call sent once, none refused', async () => {
    // 6 a minute: one every 10 s once the first 6 are spent.
    rig.mock.setRateLimits({ requestsPerMinute: 6 });
    await rig.startWorker();
    // A first conversation spends the bucket (3 calls), and teaches the limiter the limit.
    const warmUp = uniquePrompt(QUESTION);
    const first = await rig.conversations.startConversation({ firstMessage: warmUp, ...START });
    assert.equal((await rig.conversations.waitForResult(first)).status, 'completed');
    const second = await rig.conversations.startConversation({ firstMessage: uniquePrompt(QUESTION), ...START });
    const third = await rig.conversations.startConversation({ firstMessage: uniquePrompt(QUESTION), ...START });
    // One of them waits: its model call ended its attempt and Temporal holds the next until the capacity is there.
    const waiting = async () => {
      for (const id of [second, third]) {
        const pending = (await rig.client.workflow.getHandle(id).describe()).raw.pendingActivities ?? [];
        const failure = pending[0]?.lastFailure?.applicationFailureInfo?.type;
        if (failure === ModelFailureType.WaitingForRateLimit) return true;
      }
      return false;
    };
    await waitUntil('a model call waits for capacity', waiting, { timeoutMs: 60_000, everyMs: 100 });
    await rig.killAtRequest(warmUp, 0); // SIGKILLs the worker and starts a fresh one
    await rig.server!.kill();
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await rig.server!.restart();
    for (const id of [second, third]) {
      const result = await rig.conversations.waitForResult(id);
      assert.equal(result.status, 'completed');
      assert.match(result.text, /38\.50/);
    }
    const { total, refused } = answered(rig.mock);
    assert.equal(refused, 0, 'no call met a 429');
    assert.equal(total, 9, 'three conversations of three calls, each sent once');
  });
});

describe('the limiter off (ANTHROPIC_RATE_LIMITER=off)', () => {
  const scope = `fleet-off-${randomUUID().slice(0, 8)}`;
  const rig = crashRig('fleet-rate-limits-off', {
    workerEnv: { ANTHROPIC_RATE_LIMITER: 'off', ANTHROPIC_RATE_LIMIT_SCOPE: scope },
  });
  after(() => terminateLimiter(rig.client, scope));

  test('calls go out as they come: 429s are retried as before, and no limiter runs', async () => {
    rig.mock.setRateLimits({ requestsPerMinute: 4 });
    await rig.startWorker();
    const ids = await Promise.all(
      [0, 1].map(() => rig.conversations.startConversation({ firstMessage: uniquePrompt(QUESTION), ...START })),
    );
    for (const id of ids) assert.equal((await rig.conversations.waitForResult(id)).status, 'completed');
    const { refused } = answered(rig.mock);
    assert.ok(refused >= 1, 'six calls at 4 a minute: the API refused some, as it does without the limiter');
    await assert.rejects(
      rig.client.workflow.getHandle(rateLimiterId(scope)).describe(),
      (err: unknown) => err instanceof WorkflowNotFoundError,
    );
  });
});
