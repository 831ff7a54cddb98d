// The local Messages API's per-minute rate limits, as the real SDK meets them: a request past a limit is a 429
// RateLimitError with `retry-after` and the `anthropic-ratelimit-*` headers, the buckets refill with time, every
// response carries the headers, `GET /_test/requests` tells 429s from 200s, batches and count_tokens are not limited,
// the limits are set over HTTP while the server runs, and a malformed MESSAGES_API_RATE_LIMITS stops the command.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { DEMO_MODEL } from '../../testing/messages-api/fixtures';
import { withMessagesApi } from '../../testing/messages-api/sdk-client';
import type { RecordedRequest } from '../../testing/messages-api/types';

const MAIN = path.resolve(__dirname, '..', '..', 'testing', 'messages-api', 'main.ts');

/** A clock the test moves: the buckets refill by it. */
function clock() {
  let now = Date.UTC(2026, 11, 7, 20, 0, 0);
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

const question = (text = 'Hello') => ({
  model: DEMO_MODEL,
  max_tokens: 200,
  messages: [{ role: 'user' as const, content: text }],
});

async function refusal(promise: Promise<unknown>): Promise<InstanceType<typeof Anthropic.RateLimitError>> {
  const error = await promise.then(
    () => assert.fail('the request was answered, not refused'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof Anthropic.RateLimitError, `a RateLimitError: ${String(error)}`);
  return error;
}

describe('local Messages API: rate limits', () => {
  test('past the requests limit: 429 rate_limit_error with retry-after and headers; admitted again after refill', async () => {
    const time = clock();
    await withMessagesApi(
      async (server, client) => {
        for (let i = 0; i < 2; i++) await client.messages.create(question());
        const error = await refusal(client.messages.create(question()));
        assert.equal(error.status, 429);
        assert.equal((error.error as { error: { type: string } }).error.type, 'rate_limit_error');
        assert.match(error.message, /rate limit of 2 requests per minute/);
        assert.equal(error.headers?.get('retry-after'), '30', 'one request refills in 30 s at 2 per minute');
        assert.equal(error.headers?.get('anthropic-ratelimit-requests-limit'), '2');
        assert.equal(error.headers?.get('anthropic-ratelimit-requests-remaining'), '0');
        assert.equal(error.headers?.get('anthropic-ratelimit-requests-reset'), '2026-12-07T20:01:00Z');

        time.advance(29_000);
        await refusal(client.messages.create(question()));
        time.advance(1_000);
        const reply = await client.messages.create(question());
        assert.equal(reply.stop_reason, 'end_turn', 'refilled after 30 s');
        assert.deepEqual(
          server.requests.map((r) => r.status),
          [200, 200, 429, 429, 200],
        );
      },
      { now: time.now, rateLimits: { requestsPerMinute: 2 } },
    );
  });

  test('the buckets refill in real time too', async () => {
    await withMessagesApi(
      async (_server, client) => {
        await client.messages.create(question('x'.repeat(60_000 * 4))); // the whole minute's 60,000 tokens
        const error = await refusal(client.messages.create(question('y'.repeat(400 * 4))));
        assert.equal(error.headers?.get('retry-after'), '1', '400 tokens at 1,000 per second: 0.4 s, rounded up');
        await new Promise((resolve) => setTimeout(resolve, 550));
        const reply = await client.messages.create(question('y'.repeat(400 * 4)));
        assert.equal(reply.type, 'message', 'admitted after the refill');
      },
      { rateLimits: { inputTokensPerMinute: 60_000 } },
    );
  });

  test('input tokens: the prompt as the server counts it; a prompt over the limit is refused outright', async () => {
    const time = clock();
    await withMessagesApi(
      async (_server, client) => {
        const prompt = 'x'.repeat(4_000 * 4); // 4,000 tokens at 4 characters each
        const counted = await client.messages.countTokens({ model: DEMO_MODEL, messages: question(prompt).messages });
        assert.equal(counted.input_tokens, 4_000);
        await client.messages.create(question(prompt));
        await client.messages.create(question(prompt));
        const error = await refusal(client.messages.create(question(prompt)));
        assert.match(error.message, /rate limit of 10,000 input tokens per minute/);
        assert.equal(error.headers?.get('retry-after'), '12', '2,000 tokens missing at 10,000 per minute');
        assert.equal(error.headers?.get('anthropic-ratelimit-input-tokens-remaining'), '2000');
        const tooLarge = await refusal(client.messages.create(question('y'.repeat(12_000 * 4))));
        assert.match(tooLarge.message, /on its own/);
        time.advance(60_000);
        await client.messages.countTokens({ model: DEMO_MODEL, messages: question(prompt).messages });
        await client.messages.create(question(prompt));
      },
      { now: time.now, rateLimits: { inputTokensPerMinute: 10_000 } },
    );
  });

  test('output tokens: max_tokens is charged up front and the unused part given back when the reply ends', async () => {
    const time = clock();
    await withMessagesApi(
      async (server, client) => {
        const ask = (text: string) => ({ ...question(text), max_tokens: 3_000 });
        server.script('[slow]', [{ demo: true, delayMs: 400 }]);
        const slow = client.messages.create(ask('[slow] Hello')).withResponse();
        await new Promise((resolve) => setTimeout(resolve, 150));
        // 3,000 of 4,000 are held while the slow reply runs: another 3,000 do not fit.
        const error = await refusal(client.messages.create(ask('Hello')));
        assert.equal(error.headers?.get('anthropic-ratelimit-output-tokens-remaining'), '1000');
        const { data, response } = await slow;
        assert.equal(response.headers.get('anthropic-ratelimit-output-tokens-remaining'), '1000');
        assert.ok(data.usage.output_tokens < 100, 'the reply used far less than max_tokens');
        // Settled to its real output when it ended: 3,000 fit again at once (no time has passed on the clock).
        await client.messages.create(ask('Hello'));
        // A streamed reply is settled when its stream ends.
        await client.messages.stream(ask('Hello')).finalMessage();
        const { response: last } = await client.messages.create(ask('Hello')).withResponse();
        assert.equal(last.headers.get('anthropic-ratelimit-output-tokens-remaining'), '1000');
        assert.equal(time.now(), Date.UTC(2026, 11, 7, 20, 0, 0));
      },
      { now: time.now, rateLimits: { outputTokensPerMinute: 4_000 } },
    );
  });

  test('every response carries the configured dimensions: JSON, stream, 400 and 429', async () => {
    await withMessagesApi(
      async (_server, client) => {
        const { response } = await client.messages.create(question()).withResponse();
        const names: string[] = [];
        response.headers.forEach((_value, name) => {
          if (name.startsWith('anthropic-ratelimit-')) names.push(name);
        });
        names.sort();
        assert.deepEqual(names, [
          'anthropic-ratelimit-input-tokens-limit',
          'anthropic-ratelimit-input-tokens-remaining',
          'anthropic-ratelimit-input-tokens-reset',
          'anthropic-ratelimit-requests-limit',
          'anthropic-ratelimit-requests-remaining',
          'anthropic-ratelimit-requests-reset',
          'anthropic-ratelimit-tokens-limit',
          'anthropic-ratelimit-tokens-remaining',
          'anthropic-ratelimit-tokens-reset',
        ]);
        assert.equal(response.headers.get('anthropic-ratelimit-requests-remaining'), '99');
        assert.match(
          response.headers.get('anthropic-ratelimit-input-tokens-reset') ?? '',
          /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
        );
        const streamed = await client.messages.create({ ...question(), stream: true }).withResponse();
        for await (const _event of streamed.data) {
          // drain
        }
        assert.equal(streamed.response.headers.get('anthropic-ratelimit-requests-remaining'), '98');
        const invalid = await client.messages.create({ model: DEMO_MODEL, max_tokens: 10, messages: [] }).then(
          () => assert.fail('an empty conversation was answered'),
          (e: unknown) => e,
        );
        assert.ok(invalid instanceof Anthropic.BadRequestError);
        assert.equal(invalid.headers?.get('anthropic-ratelimit-requests-remaining'), '98', 'a 400 takes nothing');
      },
      { rateLimits: { requestsPerMinute: 100, inputTokensPerMinute: 100_000 } },
    );
  });

  test('GET /_test/requests gives each response status, so 429s can be counted', async () => {
    await withMessagesApi(
      async (server, client) => {
        await client.messages.create(question('[counted]'));
        await refusal(client.messages.create(question('[counted]')));
        const { requests } = (await (await fetch(`${server.url}/_test/requests?match=%5Bcounted%5D`)).json()) as {
          requests: RecordedRequest[];
        };
        assert.deepEqual(
          requests.map((r) => r.status),
          [200, 429],
        );
      },
      { rateLimits: { requestsPerMinute: 1 } },
    );
  });

  test('Message Batches are not limited: their requests are answered whatever the buckets hold', async () => {
    await withMessagesApi(
      async (server, client) => {
        await client.messages.create(question());
        const batch = await client.messages.batches.create({
          requests: ['a', 'b', 'c'].map((id) => ({ custom_id: id, params: question(`[batch-${id}]`) })),
        });
        await server.batchesAnswered();
        const batched = server.requests.filter((r) => r.headers['x-local-batch'] === batch.id);
        assert.deepEqual(
          batched.map((r) => r.status),
          [200, 200, 200],
        );
        assert.ok(batched.every((r) => !('anthropic-ratelimit-requests-limit' in r.headers)));
        await refusal(client.messages.create(question()));
      },
      { rateLimits: { requestsPerMinute: 1 }, batchDelayMs: 0 },
    );
  });

  test('POST /_test/rate-limits sets them while the server runs (full buckets), null turns them off, bad is 400', async () => {
    await withMessagesApi(async (server, client) => {
      const set = (body: string) =>
        fetch(`${server.url}/_test/rate-limits`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
      await client.messages.create(question());
      const on = await set(JSON.stringify({ requestsPerMinute: 1 }));
      assert.equal(on.status, 200);
      assert.deepEqual(await on.json(), { rateLimits: { requestsPerMinute: 1 } });
      await client.messages.create(question());
      await refusal(client.messages.create(question()));
      for (const bad of ['{"requestsPerMinute": 0}', '{"rpm": 5}', 'not json', '[]']) {
        const response = await set(bad);
        assert.equal(response.status, 400, bad);
      }
      await refusal(client.messages.create(question())); // still limited: a bad body changed nothing
      assert.equal((await set('null')).status, 200);
      const { response } = await client.messages.create(question()).withResponse();
      assert.equal(response.headers.get('anthropic-ratelimit-requests-limit'), null, 'no limits, no headers');
      server.setRateLimits({ requestsPerMinute: 1 });
      await client.messages.create(question());
      assert.equal((await set('{}')).status, 200);
      await client.messages.create(question());
      assert.throws(() => server.setRateLimits({ requestsPerMinute: -1 }), /setRateLimits/);
    });
  });
});

describe('local Messages API command: MESSAGES_API_RATE_LIMITS', () => {
  function run(value: string): Promise<{ code: number | null; output: string; url?: string; stop(): void }> {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
      env: { ...process.env, MESSAGES_API_PORT: '0', MESSAGES_API_RATE_LIMITS: value },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    return new Promise((resolve) => {
      const read = (chunk: Buffer): void => {
        output += chunk.toString();
        const url = /listening on (http:\/\/\S+)/.exec(output)?.[1];
        if (url) resolve({ code: null, output, url, stop: () => child.kill() });
      };
      child.stdout.on('data', read);
      child.stderr.on('data', read);
      child.once('exit', (code) => resolve({ code, output, stop: () => undefined }));
    });
  }

  test('a malformed value stops the command with exit code 2 and says what is wrong', async () => {
    const notJson = await run('{inputTokensPerMinute: 40000}');
    assert.equal(notJson.code, 2);
    assert.match(notJson.output, /MESSAGES_API_RATE_LIMITS is not JSON/);
    const negative = await run('{"inputTokensPerMinute": -1}');
    assert.equal(negative.code, 2);
    assert.match(negative.output, /MESSAGES_API_RATE_LIMITS is not rate limits:\ninputTokensPerMinute: /);
  });

  test('a good value is enforced by the server it starts', async () => {
    const started = await run('{"requestsPerMinute": 1}');
    try {
      assert.ok(started.url, started.output);
      const client = new Anthropic({ apiKey: 'test-key', baseURL: started.url, maxRetries: 0 });
      await client.messages.create(question());
      await refusal(client.messages.create(question()));
    } finally {
      started.stop();
    }
  });
});
