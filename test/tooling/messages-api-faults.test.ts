// Scripted faults, as the real SDK sees them: HTTP errors with their headers, a dropped connection, a stream that
// fails midway, a reply cut off inside a tool_use, and a slow reply kept alive by pings until the client gives up.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { DEMO_MODEL, DEMO_TOOLS } from '../../testing/messages-api/fixtures';
import { withMessagesApi } from '../../testing/messages-api/sdk-client';

const ask = (marker: string) => ({
  model: DEMO_MODEL,
  max_tokens: 512,
  tools: DEMO_TOOLS,
  messages: [{ role: 'user' as const, content: `${marker} What is the current stock price of General Motors?` }],
});

async function caught(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => assert.fail('expected the call to fail'),
    (err: unknown) => err,
  );
}

describe('local Messages API faults: HTTP status', () => {
  test('429 with retry-after: RateLimitError whose headers carry retry-after', async () => {
    await withMessagesApi(async (server, client) => {
      server.script('[f-429]', [{ fault: 'status', status: 429, headers: { 'retry-after': '7' } }]);
      const error = await caught(client.messages.create(ask('[f-429]')));
      assert.ok(error instanceof Anthropic.RateLimitError);
      assert.equal(error.status, 429);
      assert.equal(error.type, 'rate_limit_error');
      assert.equal(error.headers.get('retry-after'), '7');
      assert.match(error.requestID ?? '', /^req_/);
      assert.equal(server.requests[0]?.match, '[f-429]');
      assert.equal(server.requests[0]?.status, 429);
    });
  });

  test('529 with retry-after-ms and x-should-retry, custom message', async () => {
    await withMessagesApi(async (server, client) => {
      server.script('[f-529]', [
        {
          fault: 'status',
          status: 529,
          message: 'Overloaded, try later',
          headers: { 'retry-after-ms': '250', 'x-should-retry': 'true' },
        },
      ]);
      const error = await caught(client.messages.create(ask('[f-529]')));
      assert.ok(error instanceof Anthropic.InternalServerError);
      assert.equal(error.status, 529);
      assert.equal(error.type, 'overloaded_error');
      assert.equal(error.apiMessage, 'Overloaded, try later');
      assert.equal(error.headers.get('retry-after-ms'), '250');
      assert.equal(error.headers.get('x-should-retry'), 'true');
    });
  });

  test('each status gets the error type the API uses for it', async () => {
    const expected: Array<[number, string, new (...args: never[]) => Error]> = [
      [400, 'invalid_request_error', Anthropic.BadRequestError],
      [401, 'authentication_error', Anthropic.AuthenticationError],
      [402, 'billing_error', Anthropic.APIError],
      [403, 'permission_error', Anthropic.PermissionDeniedError],
      [404, 'not_found_error', Anthropic.NotFoundError],
      [408, 'timeout_error', Anthropic.APIError],
      [413, 'request_too_large', Anthropic.APIError],
      [429, 'rate_limit_error', Anthropic.RateLimitError],
      [500, 'api_error', Anthropic.InternalServerError],
      [503, 'api_error', Anthropic.InternalServerError],
      [504, 'timeout_error', Anthropic.InternalServerError],
      [529, 'overloaded_error', Anthropic.InternalServerError],
    ];
    await withMessagesApi(async (server, client) => {
      server.script(
        '[f-all]',
        expected.map(([status]) => ({ fault: 'status' as const, status })),
      );
      for (const [status, type, errorClass] of expected) {
        const error = await caught(client.messages.create(ask('[f-all]')));
        assert.ok(error instanceof errorClass, `${status}: ${String(error)}`);
        assert.ok(error instanceof Anthropic.APIError);
        assert.equal(error.status, status);
        assert.equal(error.type, type, `status ${status}`);
        const body = error.error as { type: string; error: { type: string; message: string }; request_id: string };
        assert.equal(body.type, 'error');
        assert.equal(body.request_id, error.requestID);
      }
    });
  });

  test('a status fault on a streaming request fails before the stream starts', async () => {
    await withMessagesApi(async (server, client) => {
      server.script('[f-s500]', [{ fault: 'status', status: 500, errorType: 'api_error', message: 'boom' }]);
      const error = await caught(client.messages.stream(ask('[f-s500]')).finalMessage());
      assert.ok(error instanceof Anthropic.InternalServerError);
      assert.equal(error.status, 500);
      assert.equal(error.apiMessage, 'boom');
    });
  });

  test('delayMs on a status fault answers that much later', async () => {
    await withMessagesApi(async (server, client) => {
      server.script('[f-late]', [{ fault: 'status', status: 429, delayMs: 300 }]);
      const started = Date.now();
      await caught(client.messages.create(ask('[f-late]')));
      assert.ok(Date.now() - started >= 300);
    });
  });
});

describe('local Messages API faults: connection reset', () => {
  test('the socket is destroyed without an answer → APIConnectionError (JSON and stream)', async () => {
    await withMessagesApi(async (server, client) => {
      server.script('[f-reset]', [{ fault: 'connection-reset' }, { fault: 'connection-reset', delayMs: 100 }]);
      const json = await caught(client.messages.create(ask('[f-reset]')));
      assert.ok(json instanceof Anthropic.APIConnectionError);
      assert.ok(!(json instanceof Anthropic.APIConnectionTimeoutError));
      const streamed = await caught(client.messages.stream(ask('[f-reset]')).finalMessage());
      assert.ok(streamed instanceof Anthropic.APIConnectionError);
      assert.deepEqual(
        server.requests.map((r) => r.status),
        [0, 0],
      );
      // the server keeps serving
      const message = await client.messages.create(ask('[f-reset]'));
      assert.equal(message.stop_reason, 'tool_use');
    });
  });
});

describe('local Messages API faults: stream error midway', () => {
  test('the stream starts (200, text) then `event: error` → the SDK stream throws with the error type', async () => {
    await withMessagesApi(async (server, client) => {
      server.script('[f-mid]', [{ fault: 'stream-error', afterBlocks: 1 }]);
      const stream = client.messages.stream(ask('[f-mid]'));
      let text = '';
      stream.on('text', (delta) => (text += delta));
      const error = await caught(stream.finalMessage());
      assert.ok(error instanceof Anthropic.APIError);
      assert.equal(error.status, undefined, 'a mid-stream error has no HTTP status');
      assert.equal(error.type, 'overloaded_error');
      assert.equal(error.apiMessage, 'Overloaded');
      assert.match(text, /before the stream failed/);
      assert.equal(server.requests[0]?.status, 200);
    });
  });

  test('the raw stream: message_start, ping, one block, then event: error and the end', async () => {
    await withMessagesApi(async (server) => {
      server.script('[f-raw]', [
        { fault: 'stream-error', afterBlocks: 0, errorType: 'api_error', message: 'Internal server error' },
      ]);
      const response = await fetch(`${server.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'k' },
        body: JSON.stringify({ ...ask('[f-raw]'), stream: true }),
      });
      const text = await response.text();
      const events = [...text.matchAll(/^event: (.*)$/gm)].map((m) => m[1]);
      assert.deepEqual(events, ['message_start', 'ping', 'error']);
      const data = JSON.parse(/event: error\ndata: (.*)\n/.exec(text)?.[1] ?? '{}') as {
        type: string;
        error: { type: string };
      };
      assert.equal(data.type, 'error');
      assert.equal(data.error.type, 'api_error');
    });
  });

  test('for a non-streaming request the same fault is an HTTP error', async () => {
    await withMessagesApi(async (server, client) => {
      server.script('[f-json]', [{ fault: 'stream-error' }]);
      const error = await caught(client.messages.create(ask('[f-json]')));
      assert.ok(error instanceof Anthropic.InternalServerError);
      assert.equal(error.status, 529);
      assert.equal(error.type, 'overloaded_error');
    });
  });
});

describe('local Messages API faults: truncated tool_use', () => {
  const tool = { name: 'get_ticker_symbol', input: { company_name: 'General Motors', exchange: 'NYSE' } };

  test('streamed: the input JSON stops midway, stop_reason max_tokens, the SDK keeps the complete fields only', async () => {
    await withMessagesApi(async (server, client) => {
      const json = JSON.stringify(tool.input);
      server.script('[f-cut]', [
        { fault: 'truncated-tool-use', text: 'Let me look that up.', tool, cutAt: 38 },
        { fault: 'truncated-tool-use', tool, cutAt: 27 },
      ]);
      const stream = client.messages.stream(ask('[f-cut]'));
      let streamedJson = '';
      stream.on('inputJson', (delta) => (streamedJson += delta));
      const message = await stream.finalMessage();
      assert.equal(message.stop_reason, 'max_tokens');
      assert.equal(streamedJson, json.slice(0, 38));
      assert.equal(streamedJson, '{"company_name":"General Motors","exch');
      const call = message.content[1];
      assert.ok(call?.type === 'tool_use' && call.name === 'get_ticker_symbol');
      // Beware: the SDK's lenient parse makes a cut-off call look plausible (complete fields kept, the rest dropped).
      assert.deepEqual(call.input, { company_name: 'General Motors' });
      assert.equal(message.usage.output_tokens, 512, 'the reply used all of max_tokens');

      // cut inside the first value: nothing complete survives
      const second = await client.messages.stream(ask('[f-cut]')).finalMessage();
      assert.equal(second.stop_reason, 'max_tokens');
      assert.deepEqual(second.content[0]?.type === 'tool_use' && second.content[0].input, {});
    });
  });

  test('as JSON: the tool_use block with an empty input and stop_reason max_tokens', async () => {
    await withMessagesApi(async (server, client) => {
      server.script('[f-cut-json]', [{ fault: 'truncated-tool-use', tool }]);
      const message = await client.messages.create(ask('[f-cut-json]'));
      assert.equal(message.stop_reason, 'max_tokens');
      assert.equal(message.content.length, 1);
      const call = message.content[0];
      assert.ok(call?.type === 'tool_use');
      assert.deepEqual(call.input, {});
    });
  });
});

describe('local Messages API faults: slow replies', () => {
  test('a slow stream sends headers and message_start at once, then pings every 500 ms, then the content', async () => {
    await withMessagesApi(async (server) => {
      server.script('[f-slow]', [
        { reply: { content: [{ type: 'text', text: 'finally' }], stop_reason: 'end_turn' }, delayMs: 3000 },
      ]);
      const started = Date.now();
      const response = await fetch(`${server.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'k' },
        body: JSON.stringify({ ...ask('[f-slow]'), stream: true }),
      });
      // Bounds as wide as the delay: a busy machine may hold this process up for a second or two.
      assert.ok(Date.now() - started < 3000, 'headers arrive before the delay is over');
      const text = await response.text();
      assert.ok(Date.now() - started >= 3000);
      const events = [...text.matchAll(/^event: (.*)$/gm)].map((m) => m[1]);
      // One ping with message_start, then one after each 500 ms of the delay but its end.
      assert.deepEqual(events.slice(0, 7), ['message_start', 'ping', 'ping', 'ping', 'ping', 'ping', 'ping']);
      assert.equal(events[7], 'content_block_start');
      const deltas = [...text.matchAll(/"text_delta","text":"([^"]*)"/g)].map((m) => m[1]).join('');
      assert.equal(deltas, 'finally');
    });
  });

  test('a slow stream with the SDK: the connection stays up until the client aborts', async () => {
    await withMessagesApi(async (server, client) => {
      server.script('[f-abort]', [
        { reply: { content: [{ type: 'text', text: 'too late' }], stop_reason: 'end_turn' }, delayMs: 5000 },
      ]);
      const started = Date.now();
      // The client aborts a little after the response started (not on a timer from the start: on a busy machine the
      // timer could fire before the headers arrive).
      const abort = new AbortController();
      const stream = client.messages.stream(ask('[f-abort]'), { signal: abort.signal });
      let connected = false;
      stream.on('connect', () => {
        connected = true;
        setTimeout(() => abort.abort(), 300);
      });
      const error = await caught(stream.finalMessage());
      assert.ok(error instanceof Anthropic.APIUserAbortError, String(error));
      assert.ok(connected, 'the response had started');
      assert.ok(Date.now() - started < 5000, 'aborted before the reply came');
      assert.equal(server.requests[0]?.status, 200);
    });
  });

  test('a slow JSON reply trips the SDK timeout → APIConnectionTimeoutError', async () => {
    await withMessagesApi(async (server, client) => {
      server.script('[f-timeout]', [{ demo: true, delayMs: 3000 }]);
      const started = Date.now();
      const error = await caught(client.messages.create(ask('[f-timeout]'), { timeout: 300 }));
      assert.ok(error instanceof Anthropic.APIConnectionTimeoutError, String(error));
      assert.ok(Date.now() - started < 3000, 'timed out before the reply came');
    });
  });

  test('a slow demo reply still answers normally when the client waits', async () => {
    await withMessagesApi(async (server, client) => {
      server.script('[f-wait]', [{ demo: true, delayMs: 600 }]);
      const started = Date.now();
      const message = await client.messages.stream(ask('[f-wait]')).finalMessage();
      assert.ok(Date.now() - started >= 600);
      assert.equal(message.stop_reason, 'tool_use');
      assert.equal(server.requests[0]?.match, '[f-wait]');
    });
  });
});
