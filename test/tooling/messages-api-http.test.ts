// The local Messages API on the wire, seen through the real SDK: auth, routes, JSON and SSE framing, request
// recording, scripts matched per conversation, latency, count_tokens.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import type { MessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import { DEMO_MODEL, DEMO_TOOLS, STOCK_QUESTION } from '../../testing/messages-api/fixtures';
import { clientFor, withMessagesApi } from '../../testing/messages-api/sdk-client';

const hello = { model: DEMO_MODEL, max_tokens: 256, messages: [{ role: 'user' as const, content: 'Hello there' }] };

/** POSTs `body` to the server with fetch and returns the raw SSE events (event name and parsed data). */
async function rawEvents(
  url: string,
  body: unknown,
): Promise<{ response: Response; events: Array<{ event: string; data: { type: string } }> }> {
  const response = await fetch(`${url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer test-key' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const events = text
    .split('\n\n')
    .filter((chunk) => chunk.trim() !== '')
    .map((chunk) => {
      const event = /^event: (.*)$/m.exec(chunk)?.[1] ?? '';
      const data = JSON.parse(/^data: (.*)$/m.exec(chunk)?.[1] ?? 'null') as { type: string };
      return { event, data };
    });
  return { response, events };
}

describe('local Messages API http: auth', () => {
  test('no API key → 401 authentication_error', async () => {
    await withMessagesApi(async (server, client) => {
      const error: unknown = await client.messages
        .create(hello, { headers: { Authorization: null } })
        .catch((err: unknown) => err);
      assert.ok(error instanceof Anthropic.AuthenticationError);
      assert.equal(error.status, 401);
      assert.equal(error.type, 'authentication_error');
      assert.equal(error.apiMessage, 'x-api-key header is required');
      assert.equal(server.requests[0]?.headers['authorization'], undefined);
    });
  });

  test('a key starting with "invalid" → 401', async () => {
    await withMessagesApi(async (server) => {
      const error: unknown = await clientFor(server, { apiKey: 'invalid-key' })
        .messages.create(hello)
        .catch((err: unknown) => err);
      assert.ok(error instanceof Anthropic.AuthenticationError);
      assert.equal(error.apiMessage, 'invalid x-api-key');
    });
  });

  test('the SDK authenticates with Authorization: Bearer, and x-api-key (older clients) is accepted too', async () => {
    await withMessagesApi(async (server, client) => {
      await client.messages.create(hello);
      await client.messages.create(hello, { headers: { Authorization: null, 'X-Api-Key': 'test-key' } });
      await clientFor(server, { apiKey: null, authToken: 'token-123' }).messages.create(hello);
      const [bearer, apiKey, token] = server.requests;
      assert.equal(bearer?.headers['authorization'], 'Bearer test-key');
      assert.equal(bearer?.headers['x-api-key'], undefined);
      assert.equal(apiKey?.headers['x-api-key'], 'test-key');
      assert.equal(apiKey?.headers['authorization'], undefined);
      assert.equal(token?.headers['authorization'], 'Bearer token-123');
      assert.deepEqual(
        server.requests.map((r) => r.status),
        [200, 200, 200],
      );
    });
  });
});

describe('local Messages API http: routes', () => {
  test('an unknown route → 404 not_found_error', async () => {
    await withMessagesApi(async (server, client) => {
      const error: unknown = await client.models.list().catch((err: unknown) => err);
      assert.ok(error instanceof Anthropic.NotFoundError);
      assert.equal(error.type, 'not_found_error');
      assert.equal(server.requests[0]?.path, '/v1/models');
      assert.equal(server.requests[0]?.status, 404);
    });
  });

  test('a body that is not JSON → 400', async () => {
    await withMessagesApi(async (server) => {
      const response = await fetch(`${server.url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': 'k', 'content-type': 'application/json' },
        body: '{"model": ',
      });
      assert.equal(response.status, 400);
      const body = (await response.json()) as {
        type: string;
        error: { type: string; message: string };
        request_id: string;
      };
      assert.equal(body.type, 'error');
      assert.equal(body.error.type, 'invalid_request_error');
      assert.match(body.error.message, /request body/);
      assert.equal(body.request_id, response.headers.get('request-id'));
    });
  });

  test('count_tokens answers input_tokens without generating', async () => {
    await withMessagesApi(async (server, client) => {
      const counted = await client.messages.countTokens({
        model: DEMO_MODEL,
        messages: [{ role: 'user', content: 'x'.repeat(400) }],
      });
      assert.equal(counted.input_tokens, 100);
      assert.equal(server.requests[0]?.path, '/v1/messages/count_tokens');
    });
  });

  test('count_tokens refuses a request with max_tokens with a 400, as the API', async () => {
    await withMessagesApi(async (server, client) => {
      const body = { model: DEMO_MODEL, max_tokens: 10, messages: [{ role: 'user' as const, content: 'Hi' }] };
      await assert.rejects(client.messages.countTokens(body as never), (err: { status?: number; message: string }) => {
        assert.equal(err.status, 400);
        assert.match(err.message, /max_tokens: Extra inputs are not permitted/);
        return true;
      });
      assert.equal(server.requests[0]?.status, 400);
    });
  });
});

describe('local Messages API http: JSON replies', () => {
  test('a non-streaming reply is a complete Message with a request-id header', async () => {
    await withMessagesApi(async (_server, client) => {
      const { data: message, response, request_id } = await client.messages.create(hello).withResponse();
      assert.match(message.id, /^msg_[0-9A-Za-z]{24,}$/);
      assert.equal(message.type, 'message');
      assert.equal(message.role, 'assistant');
      assert.equal(message.model, DEMO_MODEL);
      assert.deepEqual(message.content, [{ type: 'text', text: 'You said: Hello there', citations: null }]);
      assert.equal(message.stop_reason, 'end_turn');
      assert.equal(message.stop_sequence, null);
      assert.ok(message.usage.input_tokens > 0);
      assert.equal(message.usage.output_tokens, Math.ceil('You said: Hello there'.length / 4));
      assert.equal(message.usage.cache_read_input_tokens, 0);
      assert.match(request_id ?? '', /^req_[0-9A-Za-z]{24,}$/);
      assert.equal(response.headers.get('content-type'), 'application/json');
    });
  });

  test('a scripted reply comes back verbatim, with generated tool_use ids where none were given', async () => {
    await withMessagesApi(async (server, client) => {
      server.script('[conv-json]', [
        {
          reply: {
            content: [
              { type: 'text', text: 'Checking.' },
              { type: 'tool_use', name: 'get_ticker_symbol', input: { company_name: 'Ford' } },
              { type: 'tool_use', id: 'toolu_fixed', name: 'get_weather', input: { location: 'Paris' } },
            ],
            stop_reason: 'tool_use',
            usage: { input_tokens: 1234, output_tokens: 56 },
          },
        },
      ]);
      const message = await client.messages.create({
        ...hello,
        tools: DEMO_TOOLS,
        messages: [{ role: 'user', content: '[conv-json] go' }],
      });
      assert.equal(message.stop_reason, 'tool_use');
      const [text, first, second] = message.content;
      assert.deepEqual(text, { type: 'text', text: 'Checking.', citations: null });
      assert.ok(first?.type === 'tool_use' && /^toolu_[0-9A-Za-z]{24,}$/.test(first.id));
      assert.deepEqual(first.input, { company_name: 'Ford' });
      assert.ok(second?.type === 'tool_use' && second.id === 'toolu_fixed');
      assert.equal(message.usage.input_tokens, 1234);
      assert.equal(message.usage.output_tokens, 56);
    });
  });
});

describe('local Messages API http: streaming', () => {
  test('the SDK assembles streamed text and tool_use input, events in the API order', async () => {
    await withMessagesApi(async (server, client) => {
      const input = { query: 'Grüße aus 東京 🎌', nested: { list: [1, 2, 3], flag: true }, long: 'y'.repeat(200) };
      server.script('[conv-sse]', [
        {
          reply: {
            content: [
              { type: 'text', text: 'Let me search for that — 一秒 ⏳.' },
              { type: 'tool_use', name: 'search', input },
            ],
            stop_reason: 'tool_use',
          },
        },
      ]);
      const tools = [{ name: 'search', input_schema: { type: 'object' as const } }];
      const stream = client.messages.stream({
        ...hello,
        tools,
        messages: [{ role: 'user', content: '[conv-sse] find it' }],
      });
      const events: MessageStreamEvent[] = [];
      stream.on('streamEvent', (event) => events.push(event));
      const message = await stream.finalMessage();

      assert.deepEqual(message.content[0], {
        type: 'text',
        text: 'Let me search for that — 一秒 ⏳.',
        citations: null,
      });
      const call = message.content[1];
      assert.ok(call?.type === 'tool_use');
      assert.deepEqual(call.input, input);
      assert.equal(message.stop_reason, 'tool_use');

      const types = events.map((e) => e.type);
      assert.equal(types[0], 'message_start');
      assert.deepEqual(types.slice(-2), ['message_delta', 'message_stop']);
      // blocks in order, each start → deltas → stop
      const blockEvents = events.filter((e) => e.type.startsWith('content_block'));
      const perBlock = [0, 1].map((i) => blockEvents.filter((e) => 'index' in e && e.index === i).map((e) => e.type));
      for (const sequence of perBlock) {
        assert.equal(sequence[0], 'content_block_start');
        assert.equal(sequence[sequence.length - 1], 'content_block_stop');
        assert.ok(sequence.slice(1, -1).every((t) => t === 'content_block_delta') && sequence.length >= 4);
      }
      assert.ok(types.lastIndexOf('content_block_stop') < types.indexOf('message_delta'));

      const start = events[0];
      // (the SDK uses message_start's message as its snapshot, so its content/stop_reason are filled in by now;
      // the raw framing test below checks them as sent)
      assert.ok(start?.type === 'message_start');
      assert.ok(start.message.usage.input_tokens > 0);
      const delta = events.find((e) => e.type === 'message_delta');
      assert.ok(delta?.type === 'message_delta');
      assert.equal(delta.usage.output_tokens, message.usage.output_tokens);
      assert.equal(delta.usage.input_tokens, start.message.usage.input_tokens);
    });
  });

  test('raw SSE framing: content-type, `event:` names matching data.type, an early ping', async () => {
    await withMessagesApi(async (server) => {
      const { response, events } = await rawEvents(server.url, { ...hello, stream: true });
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
      assert.match(response.headers.get('request-id') ?? '', /^req_/);
      for (const { event, data } of events) assert.equal(event, data.type);
      assert.deepEqual(
        events.map((e) => e.event),
        [
          'message_start',
          'ping',
          'content_block_start',
          'content_block_delta',
          'content_block_delta',
          'content_block_delta',
          'content_block_stop',
          'message_delta',
          'message_stop',
        ],
      );
    });
  });
});

describe('local Messages API http: recording, scripts, latency', () => {
  test('every request is recorded in order with what was answered', async () => {
    await withMessagesApi(async (server, client) => {
      server.script('[conv-rec]', [
        { reply: { content: [{ type: 'text', text: 'scripted' }], stop_reason: 'end_turn' } },
      ]);
      const before = Date.now();
      await client.messages.create({ ...hello, messages: [{ role: 'user', content: '[conv-rec] one' }] });
      await client.messages
        .stream({ ...hello, messages: [{ role: 'user', content: '[conv-rec] two' }] })
        .finalMessage();
      await client.messages.create({ ...hello, max_tokens: 0 }).catch(() => undefined);
      const [first, second, third] = server.requests;
      assert.equal(server.requests.length, 3);
      assert.equal(first?.method, 'POST');
      assert.equal(first?.path, '/v1/messages');
      assert.equal(first?.match, '[conv-rec]');
      assert.equal(first?.stream, false);
      assert.equal(first?.status, 200);
      assert.equal(first?.body.messages[0].content, '[conv-rec] one');
      assert.equal(first?.headers['anthropic-version'] !== undefined, true);
      assert.equal(second?.match, undefined, 'the queue was empty: the demo model answered');
      assert.equal(second?.stream, true);
      assert.equal(third?.status, 400);
      assert.ok(first && second && third && before <= first.at && first.at <= second.at && second.at <= third.at);
    });
  });

  test('scripts match on the first user message, the longest key wins, and reset() clears everything', async () => {
    await withMessagesApi(async (server, client) => {
      server.script('conv', [{ reply: { content: [{ type: 'text', text: 'short key' }], stop_reason: 'end_turn' } }]);
      server.script('conv-7', [{ reply: { content: [{ type: 'text', text: 'long key' }], stop_reason: 'end_turn' } }]);
      server.script('conv-7', [{ reply: { content: [{ type: 'text', text: 'appended' }], stop_reason: 'end_turn' } }]);
      const ask = async (first: string, later = 'ok'): Promise<string> => {
        const message = await client.messages.create({
          ...hello,
          messages: [
            { role: 'user', content: [{ type: 'text', text: first }] },
            { role: 'assistant', content: 'Yes?' },
            { role: 'user', content: later },
          ],
        });
        return message.content[0]?.type === 'text' ? message.content[0].text : '';
      };
      assert.equal(await ask('about conv-7 please'), 'long key');
      assert.equal(await ask('about conv-7 please'), 'appended');
      assert.equal(await ask('about conv-7 please'), 'short key');
      assert.equal(
        await ask('hello', 'conv-7 in a later message does not count'),
        'You said: conv-7 in a later message does not count',
      );
      server.reset();
      assert.equal(server.requests.length, 0);
      server.script('conv', []);
      assert.equal(await ask('conv'), 'You said: ok');
    });
  });

  test('concurrent conversations each get their own scripted replies', async () => {
    await withMessagesApi(async (server, client) => {
      const n = 100;
      for (let i = 0; i < n; i++) {
        server.script(`[c${i}]`, [
          {
            reply: { content: [{ type: 'text', text: `reply for ${i}` }], stop_reason: 'end_turn' },
            delayMs: (i % 5) * 20,
          },
        ]);
      }
      const replies = await Promise.all(
        Array.from({ length: n }, async (_, i) => {
          const message = await client.messages
            .stream({ ...hello, messages: [{ role: 'user', content: `[c${i}] hi` }] })
            .finalMessage();
          return message.content[0]?.type === 'text' ? message.content[0].text : '';
        }),
      );
      replies.forEach((text, i) => assert.equal(text, `reply for ${i}`));
      assert.equal(server.requests.length, n);
    });
  });

  test('latency is added to every reply, errors included', async () => {
    await withMessagesApi(
      async (server, client) => {
        const timed = async (call: () => Promise<unknown>): Promise<number> => {
          const started = Date.now();
          await call().catch(() => undefined);
          return Date.now() - started;
        };
        assert.ok((await timed(() => client.messages.create(hello))) >= 1_500);
        assert.ok(
          (await timed(() => client.messages.create({ ...hello, messages: [] }))) >= 1_500,
          'a 400 is delayed too',
        );
        // Under the latency, with room for a busy machine to hold this process up a while.
        server.setLatency(0);
        assert.ok((await timed(() => client.messages.create(hello))) < 1_500);
      },
      { latencyMs: 1_500 },
    );
  });

  test('the demo model answers the reference question without any script', async () => {
    await withMessagesApi(async (_server, client) => {
      const message = await client.messages.create({
        ...hello,
        tools: DEMO_TOOLS,
        messages: [{ role: 'user', content: STOCK_QUESTION }],
      });
      assert.equal(message.stop_reason, 'tool_use');
    });
  });
});
