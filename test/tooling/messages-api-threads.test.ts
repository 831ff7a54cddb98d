// The local Messages API and message threads, through the real SDK: the SDK's own thread helper runs a chain on it
// (create, then continues that send only the new messages), and each refusal is the API's, raised by the SDK as its
// typed error (ThreadNotFoundError, ThreadAlreadyContinuedError, ThreadContinueInFlightError,
// ThreadFingerprintMismatchError, ThreadUnsupportedRequestError).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { MessageCreateParamsNonStreaming } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import {
  ThreadAlreadyContinuedError,
  ThreadContinueInFlightError,
  ThreadFingerprintMismatchError,
  ThreadNotFoundError,
  ThreadUnsupportedRequestError,
} from '@anthropic-ai/sdk/resources/messages/messages';
import { DEMO_MODEL, DEMO_TOOLS, STOCK_QUESTION } from '../../testing/messages-api/fixtures';
import { withMessagesApi } from '../../testing/messages-api/sdk-client';
import { THREADS_BETA } from '../../testing/messages-api/threads';

const BETAS = [THREADS_BETA];
const base = { model: DEMO_MODEL, max_tokens: 1024, betas: BETAS } as const;

async function refusal<E>(promise: Promise<unknown>, type: abstract new (...args: never[]) => E): Promise<E> {
  const error = await promise.then(
    () => assert.fail('expected the API to refuse the request'),
    (err: unknown) => err,
  );
  assert.ok(error instanceof type, `expected ${type.name}, got ${String(error)}`);
  return error;
}

describe('local Messages API: message threads', () => {
  test("the SDK's thread helper runs the stock chain: a create with everything, then continues with only the new messages", async () => {
    await withMessagesApi(async (server, client) => {
      const thread = client.beta.messages.thread({ ...base, tools: DEMO_TOOLS, system: 'Be brief.' });
      let reply = await thread.send({ role: 'user', content: STOCK_QUESTION });
      while (reply.stop_reason === 'tool_use') {
        const results = reply.content.flatMap((block) =>
          block.type === 'tool_use'
            ? [
                {
                  type: 'tool_result' as const,
                  tool_use_id: block.id,
                  content: block.name.includes('ticker') ? 'GM' : '38.50',
                },
              ]
            : [],
        );
        reply = await thread.send({ role: 'user', content: results });
      }
      assert.match(reply.content.map((b) => (b.type === 'text' ? b.text : '')).join(''), /38\.50/);
      const requests = server.requestsFor(STOCK_QUESTION);
      assert.equal(requests.length, 3);
      assert.deepEqual(requests[0]!.body.thread, { type: 'create' });
      assert.ok(requests[0]!.body.tools && requests[0]!.body.system);
      for (const [i, request] of requests.slice(1).entries()) {
        assert.equal(request.body.thread.type, 'continue');
        assert.equal(request.body.messages.length, 1, `continue ${i + 1} sends only the tool results`);
        assert.equal(request.body.tools, undefined);
        assert.equal(request.body.system, undefined);
        assert.ok(request.headers['anthropic-beta']?.includes(THREADS_BETA));
      }
    });
  });

  test('each refusal is the API’s, with the typed error the SDK raises for it', async () => {
    await withMessagesApi(async (server, client) => {
      const create = (extra: Partial<MessageCreateParamsNonStreaming> = {}) =>
        client.beta.messages.create({
          ...base,
          messages: [{ role: 'user', content: 'Say hello [refusals]' }],
          thread: { type: 'create' },
          ...extra,
        });
      const next = (id: string, extra: Partial<MessageCreateParamsNonStreaming> = {}) =>
        client.beta.messages.create({
          ...base,
          messages: [{ role: 'user', content: 'And again.' }],
          thread: { type: 'continue', previous_message_id: id },
          ...extra,
        });
      const first = await create();
      // A response that was never stored (expired, or lost): 404.
      await refusal(next('msg_01NeverStoredAnywhere000000'), ThreadNotFoundError);
      // A model other than the thread's: the fingerprint names it.
      const mismatch = await refusal(next(first.id, { model: 'claude-haiku-5-5' }), ThreadFingerprintMismatchError);
      assert.match(mismatch.message, /model/);
      // Thinking is not threaded: the refusal names the feature.
      const unsupported = await refusal(create({ thinking: { type: 'adaptive' } }), ThreadUnsupportedRequestError);
      assert.deepEqual((unsupported.error as { error: { details: unknown } }).error.details, {
        error_code: 'thread_unsupported_request',
        unsupported: ['thinking'],
      });
      // Two continues from one response: the second while the first runs (the server has opened its thread and not
      // answered yet), then after it.
      server.script('[refusals]', [{ demo: true, delayMs: 3_000 }]);
      let settled = false;
      const slow = next(first.id).finally(() => (settled = true));
      const held = () => server.requests.some((request) => request.threadText !== undefined && request.status === 0);
      while (!held() && !settled) await new Promise((resolve) => setTimeout(resolve, 10));
      await refusal(next(first.id), ThreadContinueInFlightError);
      const second = await slow;
      await refusal(next(first.id), ThreadAlreadyContinuedError);
      // The new response continues, and a scripted fault is answered as the API would.
      server.script('Say hello [refusals]', [{ fault: 'thread', error: 'thread_not_found' }]);
      await refusal(next(second.id), ThreadNotFoundError);
      const third = await next(second.id);
      assert.ok(third.id.startsWith('msg_'));
    });
  });

  test('a continue that repeats system or tools, or a thread without the beta header, is a 400', async () => {
    await withMessagesApi(async (_server, client) => {
      const first = await client.beta.messages.create({
        ...base,
        messages: [{ role: 'user', content: 'Hi' }],
        thread: { type: 'create' },
      });
      const error = await client.beta.messages
        .create({
          ...base,
          system: 'Changed.',
          messages: [{ role: 'user', content: 'Hi again' }],
          thread: { type: 'continue', previous_message_id: first.id },
        })
        .catch((err: unknown) => err);
      assert.match(String(error), /system: leave it out when continuing a thread/);
      const noBeta = await client.beta.messages
        .create({
          model: DEMO_MODEL,
          max_tokens: 64,
          messages: [{ role: 'user', content: 'Hi' }],
          thread: { type: 'create' },
        })
        .catch((err: unknown) => err);
      assert.match(String(noBeta), new RegExp(`requires the anthropic-beta header ${THREADS_BETA}`));
    });
  });
});
