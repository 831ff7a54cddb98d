// The local Messages API's Message Batches, as the real SDK sees them: a batch is in_progress until its delay has
// passed and every request is answered, then ended with one JSONL line per request; each request answered as
// /v1/messages answers it (scripts included), an invalid one errored, scripted lines expired, malformed or under an
// unknown custom_id; cancel, list, and the API's refusals of a malformed create.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { DEMO_MODEL, DEMO_TOOLS } from '../../testing/messages-api/fixtures';
import { withMessagesApi } from '../../testing/messages-api/sdk-client';
import type { MessagesApi } from '../../testing/messages-api/types';

const params = (marker: string) => ({
  model: DEMO_MODEL,
  max_tokens: 512,
  tools: DEMO_TOOLS,
  messages: [{ role: 'user' as const, content: `${marker} What is the current stock price of General Motors?` }],
});

/** A clock the test moves: batches read their state from it. */
function clock() {
  let now = 1_800_000_000_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

async function resultLines(server: MessagesApi, id: string): Promise<string[]> {
  const response = await fetch(`${server.url}/v1/messages/batches/${id}/results`, { headers: { 'x-api-key': 'k' } });
  assert.equal(response.status, 200);
  return (await response.text()).trim().split('\n');
}

describe('local Messages API: Message Batches', () => {
  test('in_progress until the delay has passed, then ended with a result per request in request order', async () => {
    const time = clock();
    await withMessagesApi(
      async (server, client) => {
        server.script('[b-two]', [
          { reply: { content: [{ type: 'text', text: 'Scripted.' }], stop_reason: 'end_turn' } },
        ]);
        const created = await client.messages.batches.create({
          requests: [
            { custom_id: 'first', params: params('[b-one]') },
            { custom_id: 'second', params: params('[b-two]') },
          ],
        });
        assert.match(created.id, /^msgbatch_/);
        assert.equal(created.processing_status, 'in_progress');
        assert.deepEqual(created.request_counts, { processing: 2, succeeded: 0, errored: 0, canceled: 0, expired: 0 });
        assert.equal(created.results_url, null);
        await server.batchesAnswered();
        assert.equal((await client.messages.batches.retrieve(created.id)).processing_status, 'in_progress');
        time.advance(5_000);
        const ended = await client.messages.batches.retrieve(created.id);
        assert.equal(ended.processing_status, 'ended');
        assert.equal(ended.request_counts.succeeded, 2);
        assert.equal(ended.results_url, `${server.url}/v1/messages/batches/${created.id}/results`);
        const results = [];
        for await (const line of await client.messages.batches.results(created.id)) results.push(line);
        assert.deepEqual(
          results.map((r) => r.custom_id),
          ['first', 'second'],
        );
        const [first, second] = results;
        assert.equal(first?.result.type, 'succeeded');
        assert.equal(second?.result.type === 'succeeded' && second.result.message.content[0]?.type, 'text');
        // Each request went through /v1/messages, recorded with its batch id, and took its scripted step.
        const answered = server.requests.filter((r) => r.headers['x-local-batch'] === created.id);
        assert.equal(answered.length, 2);
        assert.equal(server.requestsFor('[b-two]')[0]?.match, '[b-two]');
      },
      { now: time.now, batchDelayMs: 2_000 },
    );
  });

  test('a request the API refuses is errored with its error; scripted lines expire, break or go astray', async () => {
    await withMessagesApi(
      async (server, client) => {
        server.script('[b-expire]', [{ fault: 'batch-result', result: 'expired' }]);
        server.script('[b-garbage]', [{ fault: 'batch-result', result: 'malformed' }]);
        server.script('[b-astray]', [{ fault: 'batch-result', result: 'unknown_custom_id' }]);
        server.script('[b-529]', [{ fault: 'status', status: 529 }]);
        const created = await client.messages.batches.create({
          requests: [
            { custom_id: 'invalid', params: { ...params('[b-bad]'), max_tokens: -1 } },
            { custom_id: 'overloaded', params: params('[b-529]') },
            { custom_id: 'expired', params: params('[b-expire]') },
            { custom_id: 'garbage', params: params('[b-garbage]') },
            { custom_id: 'astray', params: params('[b-astray]') },
          ],
        });
        await server.batchesAnswered();
        const ended = await client.messages.batches.retrieve(created.id);
        assert.equal(ended.processing_status, 'ended');
        assert.deepEqual(ended.request_counts, { processing: 0, succeeded: 2, errored: 2, canceled: 0, expired: 1 });
        const lines = await resultLines(server, created.id);
        assert.equal(lines.length, 5);
        const parsed = (i: number) => JSON.parse(lines[i]!) as { custom_id: string; result: Record<string, unknown> };
        assert.equal(parsed(0).result['type'], 'errored');
        assert.equal((parsed(0).result['error'] as { error: { type: string } }).error.type, 'invalid_request_error');
        assert.equal((parsed(1).result['error'] as { error: { type: string } }).error.type, 'overloaded_error');
        assert.deepEqual(parsed(2), { custom_id: 'expired', result: { type: 'expired' } });
        assert.throws(() => parsed(3), SyntaxError);
        assert.equal(parsed(4).custom_id, 'unknown-astray');
      },
      { batchDelayMs: 0 },
    );
  });

  test('cancel ends a batch at once with every request canceled; an ended batch stays as it was', async () => {
    await withMessagesApi(
      async (_server, client) => {
        const created = await client.messages.batches.create({ requests: [{ custom_id: 'a', params: params('[c]') }] });
        const canceled = await client.messages.batches.cancel(created.id);
        assert.equal(canceled.processing_status, 'ended');
        assert.notEqual(canceled.cancel_initiated_at, null);
        assert.equal(canceled.request_counts.canceled, 1);
        const again = await client.messages.batches.cancel(created.id);
        assert.equal(again.cancel_initiated_at, canceled.cancel_initiated_at);
      },
      { batchDelayMs: 60_000 },
    );
  });

  test('list is newest first; unknown ids are 404s; a malformed create is a 400 naming the field', async () => {
    await withMessagesApi(
      async (_server, client) => {
        const a = await client.messages.batches.create({ requests: [{ custom_id: 'a', params: params('[l]') }] });
        const b = await client.messages.batches.create({ requests: [{ custom_id: 'b', params: params('[l]') }] });
        const page = await client.messages.batches.list({ limit: 10 });
        assert.deepEqual(
          page.data.map((x) => x.id),
          [b.id, a.id],
        );
        await assert.rejects(client.messages.batches.retrieve('msgbatch_nope'), Anthropic.NotFoundError);
        await assert.rejects(
          client.messages.batches.create({ requests: [] }),
          (err: unknown) => err instanceof Anthropic.BadRequestError && /requests/.test(err.message),
        );
        await assert.rejects(
          client.messages.batches.create({
            requests: [
              { custom_id: 'same', params: params('[l]') },
              { custom_id: 'same', params: params('[l]') },
            ],
          }),
          (err: unknown) => err instanceof Anthropic.BadRequestError && /not unique/.test(err.message),
        );
        await assert.rejects(
          client.messages.batches.create({ requests: [{ custom_id: 'has space', params: params('[l]') }] }),
          (err: unknown) => err instanceof Anthropic.BadRequestError && /custom_id/.test(err.message),
        );
      },
      { batchDelayMs: 60_000 },
    );
  });
});
