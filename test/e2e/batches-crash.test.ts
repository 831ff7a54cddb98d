// Batch mode through crashes (docs/batches.md): a worker SIGKILLed while its conversation waits for a Message Batch, and
// the Temporal server SIGKILLed and restarted meanwhile. The conversation answers, every model call was submitted once
// (no custom_id in two batches, each request answered once), and nothing fetched was lost.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import type { Client } from '@temporalio/client';
import { STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import { crashRig } from '../support/crash-rig';
import { uniquePrompt } from '../support/harness';
import { waitUntil } from '../support/wait-until';
import type { MessagesApi } from '../../testing/messages-api/types';

const QUESTION = 'What is the current stock price of General Motors?';
const START = { tools: STOCK_TOOLS, closeAfterFirstReply: true, batch: true } as const;

/** Every custom_id the API received, in submission order: a call submitted twice would show one twice. */
function customIds(mock: MessagesApi): string[] {
  return mock.requests
    .filter((r) => r.method === 'POST' && r.path === '/v1/messages/batches')
    .flatMap((r) => (r.body.requests as { custom_id: string }[]).map((q) => q.custom_id));
}

/** Whether the workflow's history has a completed submitBatchedModelCall. */
async function submissionRecorded(client: Client, id: string): Promise<boolean> {
  const events = (await client.workflow.getHandle(id).fetchHistory()).events ?? [];
  const submits = new Set(
    events
      .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'submitBatchedModelCall')
      .map((e) => String(e.eventId)),
  );
  return events.some((e) => submits.has(String(e.activityTaskCompletedEventAttributes?.scheduledEventId ?? '')));
}

function batched(mock: MessagesApi, prompt: string) {
  return mock.requestsFor(prompt).filter((r) => r.headers['x-local-batch'] !== undefined);
}

describe('batch mode: the worker SIGKILLed while its conversation waits for a batch', () => {
  const rig = crashRig('batches-worker-killed', { workerEnv: { WORKER_BATCH_WINDOW_MS: '200' } });

  test('a fresh worker polls on and the conversation answers; no call was submitted twice', async () => {
    rig.mock.setBatchDelay(6_000);
    await rig.startWorker();
    const prompt = uniquePrompt(QUESTION);
    const id = `batches-killed-${randomUUID().slice(0, 8)}`;
    await rig.conversations.startConversation({ id, firstMessage: prompt, ...START });
    // The first call is in a batch that will not end for 6 s: the worker dies once the workflow has recorded the
    // submission (its activity completed) and waits on its timer. Killed between the API's answer to batches.create and
    // that record — a window of milliseconds, docs/batches.md — the call would be submitted again.
    await waitUntil('the first submission recorded', () => submissionRecorded(rig.client, id), { everyMs: 50 });
    await rig.killAtRequest(prompt, 1);
    rig.mock.setBatchDelay(200);
    const result = await rig.conversations.waitForResult(id);
    assert.equal(result.status, 'completed');
    assert.match(result.text, /38\.50/);
    const ids = customIds(rig.mock);
    assert.equal(new Set(ids).size, ids.length, `a custom_id went into two batches: ${ids.join(', ')}`);
    assert.equal(ids.length, 3, 'three model calls, three submissions');
    assert.equal(batched(rig.mock, prompt).length, 3, 'each request answered once');
  });
});

describe('batch mode: the Temporal server SIGKILLed and restarted while a batch is in flight', () => {
  const rig = crashRig('batches-server-killed', { ownServer: true, workerEnv: { WORKER_BATCH_WINDOW_MS: '200' } });

  test('after the restart the conversation answers, each call submitted once', async () => {
    rig.mock.setBatchDelay(4_000);
    await rig.startWorker();
    const prompt = uniquePrompt(QUESTION);
    const id = `batches-server-${randomUUID().slice(0, 8)}`;
    await rig.conversations.startConversation({ id, firstMessage: prompt, ...START });
    await waitUntil('the first call is in a batch', () => batched(rig.mock, prompt).length >= 1, {
      timeoutMs: 60_000,
    });
    await rig.server!.kill();
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    await rig.server!.restart();
    rig.mock.setBatchDelay(200);
    const result = await rig.conversations.waitForResult(id);
    assert.equal(result.status, 'completed');
    assert.match(result.text, /38\.50/);
    const ids = customIds(rig.mock);
    assert.equal(new Set(ids).size, ids.length);
    assert.equal(batched(rig.mock, prompt).length, 3);
  });
});
