// Prompt caching accounted as the API documents it: prefix order tools → system → messages, breakpoints at
// cache_control blocks, reads of the longest earlier prefix within 20 blocks of a breakpoint, writes up to the last
// breakpoint, a 1024-token minimum, a 5-minute (or 1-hour) TTL refreshed on every hit.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type {
  MessageCreateParamsNonStreaming,
  MessageParam,
  MessageStreamEvent,
  Usage,
} from '@anthropic-ai/sdk/resources/messages';
import { DEMO_MODEL, DEMO_TOOLS } from '../../testing/messages-api/fixtures';
import { countInputTokens, PromptCache } from '../../testing/messages-api/prompt-cache';
import { withMessagesApi } from '../../testing/messages-api/sdk-client';

const ephemeral = { type: 'ephemeral' as const };
/** ~1250 tokens at 4 characters a token: above the 1024-token minimum. */
const LONG_SYSTEM = 'You are a meticulous financial analyst. '.repeat(125);
const SHORT_SYSTEM = 'You are terse.';

function request(
  system: string,
  question: string,
  extra: Partial<MessageCreateParamsNonStreaming> = {},
): MessageCreateParamsNonStreaming {
  return {
    model: DEMO_MODEL,
    max_tokens: 256,
    system: [{ type: 'text', text: system, cache_control: ephemeral }],
    messages: [{ role: 'user', content: question }],
    ...extra,
  };
}

function cacheFields(usage: Usage): [number, number, number] {
  return [usage.input_tokens, usage.cache_creation_input_tokens ?? 0, usage.cache_read_input_tokens ?? 0];
}

describe('local Messages API prompt cache', () => {
  test('a long cached prefix is written once, then read by the next request with the same prefix', async () => {
    await withMessagesApi(async (_server, client) => {
      const systemTokens = Math.ceil(LONG_SYSTEM.length / 4);
      const first = await client.messages.create(request(LONG_SYSTEM, 'First question?'));
      const questionTokens = Math.ceil('First question?'.length / 4);
      assert.deepEqual(cacheFields(first.usage), [questionTokens, systemTokens, 0]);
      assert.deepEqual(first.usage.cache_creation, {
        ephemeral_5m_input_tokens: systemTokens,
        ephemeral_1h_input_tokens: 0,
      });

      const second = await client.messages.create(request(LONG_SYSTEM, 'A different, longer second question?'));
      assert.deepEqual(cacheFields(second.usage), [
        Math.ceil('A different, longer second question?'.length / 4),
        0,
        systemTokens,
      ]);
    });
  });

  test('usage appears in message_start and message_delta of a stream, as the API sends it', async () => {
    await withMessagesApi(async (_server, client) => {
      await client.messages.create(request(LONG_SYSTEM, 'warm up'));
      const stream = client.messages.stream(request(LONG_SYSTEM, 'streamed'));
      const events: MessageStreamEvent[] = [];
      stream.on('streamEvent', (event) => events.push(event));
      const message = await stream.finalMessage();
      const start = events.find((e) => e.type === 'message_start');
      const delta = events.find((e) => e.type === 'message_delta');
      assert.ok(start?.type === 'message_start' && delta?.type === 'message_delta');
      const systemTokens = Math.ceil(LONG_SYSTEM.length / 4);
      assert.equal(start.message.usage.cache_read_input_tokens, systemTokens);
      assert.equal(delta.usage.cache_read_input_tokens, systemTokens);
      assert.equal(delta.usage.cache_creation_input_tokens, 0);
      assert.equal(delta.usage.input_tokens, Math.ceil('streamed'.length / 4));
      assert.equal(message.usage.cache_read_input_tokens, systemTokens);
    });
  });

  test('a prefix under 1024 tokens is simply not cached', async () => {
    await withMessagesApi(async (_server, client) => {
      const first = await client.messages.create(request(SHORT_SYSTEM, 'Hi'));
      const second = await client.messages.create(request(SHORT_SYSTEM, 'Hi'));
      for (const usage of [first.usage, second.usage]) {
        assert.equal(usage.cache_creation_input_tokens, 0);
        assert.equal(usage.cache_read_input_tokens, 0);
        assert.equal(usage.input_tokens, Math.ceil(SHORT_SYSTEM.length / 4) + 1);
      }
    });
  });

  test('the key is the exact prefix for one model: another model or a changed system misses', async () => {
    await withMessagesApi(async (_server, client) => {
      await client.messages.create(request(LONG_SYSTEM, 'q'));
      const otherModel = await client.messages.create(request(LONG_SYSTEM, 'q', { model: 'claude-opus-4-6' }));
      assert.equal(otherModel.usage.cache_read_input_tokens, 0);
      assert.ok((otherModel.usage.cache_creation_input_tokens ?? 0) > 0);
      const changed = await client.messages.create(request(`${LONG_SYSTEM}!`, 'q'));
      assert.equal(changed.usage.cache_read_input_tokens, 0);
      const again = await client.messages.create(request(LONG_SYSTEM, 'q'));
      assert.equal(again.usage.cache_read_input_tokens, Math.ceil(LONG_SYSTEM.length / 4));
    });
  });

  test('tools come first in the prefix: changing the tools invalidates the cached system prompt', async () => {
    await withMessagesApi(async (_server, client) => {
      const withTools = (tools: MessageCreateParamsNonStreaming['tools']) => request(LONG_SYSTEM, 'q', { tools });
      const first = await client.messages.create(withTools(DEMO_TOOLS));
      const written = first.usage.cache_creation_input_tokens ?? 0;
      assert.equal(written, countInputTokens({ tools: DEMO_TOOLS, system: LONG_SYSTEM }));
      const same = await client.messages.create(withTools(DEMO_TOOLS));
      assert.equal(same.usage.cache_read_input_tokens, written);
      const fewer = await client.messages.create(withTools(DEMO_TOOLS.slice(1)));
      assert.equal(fewer.usage.cache_read_input_tokens, 0);
    });
  });

  test('a growing conversation reads the previous turn and writes only what it added', async () => {
    await withMessagesApi(async (_server, client) => {
      const history = 'Here is a long document to discuss. '.repeat(120); // ~1080 tokens
      const turn1: MessageParam[] = [
        { role: 'user', content: [{ type: 'text', text: history, cache_control: ephemeral }] },
      ];
      const first = await client.messages.create({ model: DEMO_MODEL, max_tokens: 256, messages: turn1 });
      const prefix1 = Math.ceil(history.length / 4);
      assert.deepEqual(cacheFields(first.usage), [0, prefix1, 0]);

      const turn2: MessageParam[] = [
        { role: 'user', content: [{ type: 'text', text: history }] },
        { role: 'assistant', content: 'Understood.' },
        { role: 'user', content: [{ type: 'text', text: 'Summarise it.', cache_control: ephemeral }] },
      ];
      const second = await client.messages.create({ model: DEMO_MODEL, max_tokens: 256, messages: turn2 });
      const added = Math.ceil('Understood.'.length / 4) + Math.ceil('Summarise it.'.length / 4);
      assert.deepEqual(cacheFields(second.usage), [0, added, prefix1]);
    });
  });

  test('the lookback stops 20 blocks before a breakpoint', async () => {
    await withMessagesApi(async (_server, client) => {
      const big = 'x'.repeat(5000); // 1250 tokens
      // block 0 is the same everywhere; the others differ per request (`tag`), so only block 0 can be a hit
      const blocks = (n: number, tag: string) =>
        Array.from({ length: n }, (_, i) => ({
          type: 'text' as const,
          text: i === 0 ? big : `${tag} block ${i}`,
          ...(i === n - 1 && { cache_control: ephemeral }),
        }));
      const send = (n: number, tag: string) =>
        client.messages.create({
          model: DEMO_MODEL,
          max_tokens: 256,
          messages: [{ role: 'user', content: blocks(n, tag) }],
        });
      await send(1, 'seed');
      assert.equal(
        (await send(20, 'a')).usage.cache_read_input_tokens,
        1250,
        'block 0 is 19 blocks before the breakpoint: found',
      );
      assert.equal(
        (await send(21, 'b')).usage.cache_read_input_tokens,
        0,
        'block 0 is 20 blocks before the breakpoint: not found',
      );
    });
  });

  test('entries expire after 5 minutes without use; a hit refreshes them; ttl 1h lasts an hour', async () => {
    let now = 1_000_000;
    await withMessagesApi(
      async (_server, client) => {
        const tokens = Math.ceil(LONG_SYSTEM.length / 4);
        await client.messages.create(request(LONG_SYSTEM, 'q'));
        now += 4 * 60_000;
        assert.equal((await client.messages.create(request(LONG_SYSTEM, 'q'))).usage.cache_read_input_tokens, tokens);
        now += 4 * 60_000; // 8 minutes after the write, 4 after the refreshing hit
        assert.equal((await client.messages.create(request(LONG_SYSTEM, 'q'))).usage.cache_read_input_tokens, tokens);
        now += 5 * 60_000 + 1;
        const expired = await client.messages.create(request(LONG_SYSTEM, 'q'));
        assert.equal(expired.usage.cache_read_input_tokens, 0);
        assert.equal(expired.usage.cache_creation_input_tokens, tokens);

        const hour = (question: string): MessageCreateParamsNonStreaming => ({
          ...request(LONG_SYSTEM, question),
          system: [{ type: 'text', text: `${LONG_SYSTEM} (hourly)`, cache_control: { type: 'ephemeral', ttl: '1h' } }],
        });
        const written = await client.messages.create(hour('q'));
        assert.equal(
          written.usage.cache_creation?.ephemeral_1h_input_tokens,
          written.usage.cache_creation_input_tokens,
        );
        now += 30 * 60_000;
        assert.ok(((await client.messages.create(hour('q'))).usage.cache_read_input_tokens ?? 0) > 0);
      },
      { now: () => now },
    );
  });

  test('top-level cache_control caches up to the last block automatically', async () => {
    await withMessagesApi(async (_server, client) => {
      const body = {
        model: DEMO_MODEL,
        max_tokens: 256,
        system: LONG_SYSTEM,
        messages: [{ role: 'user' as const, content: 'q' }],
        cache_control: ephemeral,
      };
      const first = await client.messages.create(body);
      assert.deepEqual(cacheFields(first.usage), [0, countInputTokens(body), 0]);
      const second = await client.messages.create(body);
      assert.deepEqual(cacheFields(second.usage), [0, 0, countInputTokens(body)]);
    });
  });

  test('reset() empties the cache', async () => {
    await withMessagesApi(async (server, client) => {
      await client.messages.create(request(LONG_SYSTEM, 'q'));
      server.reset();
      const after = await client.messages.create(request(LONG_SYSTEM, 'q'));
      assert.equal(after.usage.cache_read_input_tokens, 0);
    });
  });

  test('PromptCache alone: input + creation + read always add up to the whole prompt', () => {
    const cache = new PromptCache(() => 0);
    const bodies = [
      request(LONG_SYSTEM, 'a'),
      request(LONG_SYSTEM, 'b'),
      request(SHORT_SYSTEM, 'c'),
      { ...request(LONG_SYSTEM, 'd'), tools: [{ ...DEMO_TOOLS[0], cache_control: ephemeral }] },
    ];
    for (const body of bodies) {
      const usage = cache.account(body as unknown as Record<string, unknown>);
      const total = countInputTokens(body as unknown as Record<string, unknown>);
      assert.equal(usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens, total);
    }
    // a's system prefix, and d's tools+system prefix (its tool-only breakpoint is under the 1024-token minimum)
    assert.equal(cache.size, 2);
  });
});
