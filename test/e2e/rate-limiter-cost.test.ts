// What the fleet rate limiter costs (docs/rate-limits.md, "What it costs"): with capacity to spare, a conversation's
// history is the same with the limiter on as off (the reservation lives in the model activity), and each model call
// pays a round trip to the limiter. Prints the figures: history events and bytes per conversation, time per call.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, test } from 'node:test';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import { rateLimiterId } from '../../common/rate-limiter-messages';
import { crashRig, type CrashRig } from '../support/crash-rig';
import { uniquePrompt } from '../support/harness';

const QUESTION = 'What is the current stock price of General Motors?';
const CONVERSATIONS = 6;

interface Figures {
  events: number;
  bytes: number;
  msPerCall: number;
  /** The limiter's history events per model call (limiter on). */
  limiterEventsPerCall?: number;
}

/** Runs CONVERSATIONS conversations of three model calls one after another; their history size and time per call. */
async function measure(rig: CrashRig, scope?: string): Promise<Figures> {
  // Limits far above what the test sends: the API's headers name them, so the limiter is used (a worker that has
  // seen no rate-limit header never asks it), and no call ever waits.
  rig.mock.setRateLimits({ requestsPerMinute: 1_000_000, inputTokensPerMinute: 1_000_000_000 });
  await rig.startWorker();
  // A first conversation warms the worker (and starts the limiter): not measured.
  const warm = await rig.conversations.startConversation({
    firstMessage: uniquePrompt(QUESTION),
    tools: STOCK_TOOLS,
    closeAfterFirstReply: true,
  });
  await rig.conversations.waitForResult(warm);
  const limiterEvents = async () =>
    scope ? ((await rig.client.workflow.getHandle(rateLimiterId(scope)).fetchHistory()).events?.length ?? 0) : 0;
  const limiterBefore = await limiterEvents();
  let events = 0;
  let bytes = 0;
  const started = Date.now();
  for (let i = 0; i < CONVERSATIONS; i++) {
    const id = await rig.conversations.startConversation({
      firstMessage: uniquePrompt(QUESTION),
      tools: STOCK_TOOLS,
      closeAfterFirstReply: true,
    });
    assert.equal((await rig.conversations.waitForResult(id)).status, 'completed');
    const history = await rig.client.workflow.getHandle(id).fetchHistory();
    events += history.events?.length ?? 0;
    bytes += temporal.api.history.v1.History.encode(history).finish().length;
  }
  const msPerCall = (Date.now() - started) / (CONVERSATIONS * 3);
  const limiterEventsPerCall = ((await limiterEvents()) - limiterBefore) / (CONVERSATIONS * 3);
  return { events: events / CONVERSATIONS, bytes: bytes / CONVERSATIONS, msPerCall, limiterEventsPerCall };
}

async function terminateLimiter(client: Client | undefined, scope: string): Promise<void> {
  await client?.workflow
    .getHandle(rateLimiterId(scope))
    .terminate('test over')
    .catch(() => undefined);
}

const figures: Partial<Record<'on' | 'off', Figures>> = {};

describe('the limiter on, capacity to spare', () => {
  const scope = `cost-on-${randomUUID().slice(0, 8)}`;
  const rig = crashRig('rate-limiter-cost-on', { workerEnv: { ANTHROPIC_RATE_LIMIT_SCOPE: scope } });
  after(() => terminateLimiter(rig.client, scope));
  test('conversations answer', async () => {
    figures.on = await measure(rig, scope);
  });
});

describe('the limiter on, an API that sends no rate-limit headers', () => {
  const scope = `cost-unlimited-${randomUUID().slice(0, 8)}`;
  const rig = crashRig('rate-limiter-cost-unlimited', { workerEnv: { ANTHROPIC_RATE_LIMIT_SCOPE: scope } });
  test('no call asks the limiter: it never starts', async () => {
    await rig.startWorker();
    const id = await rig.conversations.startConversation({
      firstMessage: uniquePrompt(QUESTION),
      tools: STOCK_TOOLS,
      closeAfterFirstReply: true,
    });
    assert.equal((await rig.conversations.waitForResult(id)).status, 'completed');
    await assert.rejects(rig.client.workflow.getHandle(rateLimiterId(scope)).describe(), /not found/i);
  });
});

describe('the limiter off', () => {
  const rig = crashRig('rate-limiter-cost-off', { workerEnv: { ANTHROPIC_RATE_LIMITER: 'off' } });
  test('conversations answer', async () => {
    figures.off = await measure(rig);
  });
});

describe('compared', () => {
  test('the same history events per conversation; the figures printed', () => {
    const { on, off } = figures;
    assert.ok(on && off, 'both measured');
    assert.equal(on.events, off.events, 'the limiter adds no event to a conversation that does not wait');
    console.log(
      `# per conversation (3 model calls): on ${on.events} events ${Math.round(on.bytes)} B, ` +
        `off ${off.events} events ${Math.round(off.bytes)} B; ms per call on ${on.msPerCall.toFixed(1)}, ` +
        `off ${off.msPerCall.toFixed(1)}, added ${(on.msPerCall - off.msPerCall).toFixed(1)}; ` +
        `limiter history events per call ${on.limiterEventsPerCall?.toFixed(1)}`,
    );
  });
});
