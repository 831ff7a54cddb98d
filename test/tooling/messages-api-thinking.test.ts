// The local Messages API and thinking, through the real SDK: a request with thinking on gets a reply that opens with a
// signed thinking block (JSON, and SSE with thinking_delta + signature_delta); thinking blocks sent back must be the
// ones it issued, unchanged; and the combinations the API refuses are its own 400s.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import type {
  ContentBlock,
  MessageCreateParamsNonStreaming,
  MessageParam,
  RawMessageStreamEvent,
} from '@anthropic-ai/sdk/resources/messages';
import { DEMO_MODEL, DEMO_TOOLS as STOCK_TOOLS, STOCK_QUESTION } from '../../testing/messages-api/fixtures';
import { withMessagesApi } from '../../testing/messages-api/sdk-client';

const adaptive = { type: 'adaptive' } as const;
const request = (messages: MessageParam[], extra: Partial<MessageCreateParamsNonStreaming> = {}) =>
  ({ model: DEMO_MODEL, max_tokens: 4096, messages, ...extra }) as MessageCreateParamsNonStreaming;

async function badRequest(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => assert.fail('expected a 400'),
    (err: unknown) => err,
  );
  assert.ok(error instanceof Anthropic.BadRequestError, String(error));
  assert.equal((error.error as { error: { type: string } }).error.type, 'invalid_request_error');
  return (error.error as { error: { message: string } }).error.message;
}

describe('local Messages API: thinking', () => {
  test('thinking on: the reply opens with a signed thinking block, JSON and streamed (thinking_delta, signature_delta)', async () => {
    await withMessagesApi(async (server, client) => {
      server.script('Think GM', [
        {
          reply: {
            content: [
              { type: 'thinking', thinking: 'GM is General Motors; I need its ticker first.' },
              { type: 'text', text: 'GM trades as GM.' },
            ],
            stop_reason: 'end_turn',
          },
        },
      ]);
      const json = await client.messages.create(
        request([{ role: 'user', content: 'Think GM' }], { thinking: adaptive }),
      );
      const [thinking, text] = json.content as [ContentBlock, ContentBlock];
      assert.equal(thinking.type, 'thinking');
      assert.equal(thinking.type === 'thinking' && thinking.thinking, 'GM is General Motors; I need its ticker first.');
      assert.ok(thinking.type === 'thinking' && thinking.signature.length > 40);
      assert.equal(text.type, 'text');
      // Thinking is output: counted in output_tokens and broken out in output_tokens_details.
      const details = json.usage.output_tokens_details;
      assert.ok(details && details.thinking_tokens > 0 && details.thinking_tokens < json.usage.output_tokens);

      // Unscripted: the demo model thinks too, and streams it.
      const events: RawMessageStreamEvent[] = [];
      const stream = client.messages.stream(
        request([{ role: 'user', content: STOCK_QUESTION }], {
          thinking: adaptive,
          tools: STOCK_TOOLS,
        }),
      );
      stream.on('streamEvent', (event) => events.push(event));
      const final = await stream.finalMessage();
      const deltas = events.flatMap((e) => (e.type === 'content_block_delta' ? [e.delta.type] : []));
      assert.ok(deltas.includes('thinking_delta') && deltas.includes('signature_delta'), deltas.join());
      assert.equal(final.content[0]!.type, 'thinking');
      assert.equal(final.content.at(-1)!.type, 'tool_use');
      const streamedThinking = final.content[0] as { thinking: string; signature: string };
      assert.ok(streamedThinking.thinking.length > 0 && streamedThinking.signature.length > 40);
    });
  });

  test('without thinking in the request, a scripted thinking block still comes (a model that thinks by default); none is made up', async () => {
    await withMessagesApi(async (server, client) => {
      server.script('Default thinker', [
        {
          reply: {
            content: [{ type: 'thinking', thinking: 'By default I think.' }, { type: 'redacted_thinking' }],
            stop_reason: 'end_turn',
          },
        },
      ]);
      const scripted = await client.messages.create(request([{ role: 'user', content: 'Default thinker' }]));
      assert.deepEqual(
        scripted.content.map((b) => b.type),
        ['thinking', 'redacted_thinking'],
      );
      const plain = await client.messages.create(request([{ role: 'user', content: 'Hello there' }]));
      assert.ok(plain.content.every((b) => b.type !== 'thinking'));
    });
  });

  test('display omitted: the block carries its signature and no text; sent back as is, it is accepted', async () => {
    await withMessagesApi(async (_server, client) => {
      const thinking = { type: 'adaptive', display: 'omitted' } as const;
      const first = await client.messages.create(
        request([{ role: 'user', content: STOCK_QUESTION }], { thinking, tools: STOCK_TOOLS }),
      );
      const block = first.content[0] as { type: string; thinking: string; signature: string };
      assert.equal(block.type, 'thinking');
      assert.equal(block.thinking, '');
      const toolUse = first.content.find((b) => b.type === 'tool_use')!;
      const next = await client.messages.create(
        request(
          [
            { role: 'user', content: STOCK_QUESTION },
            { role: 'assistant', content: first.content },
            {
              role: 'user',
              content: [
                { type: 'tool_result', tool_use_id: toolUse.type === 'tool_use' ? toolUse.id : '', content: 'GM' },
              ],
            },
          ],
          { thinking, tools: STOCK_TOOLS },
        ),
      );
      assert.equal(next.content[0]!.type, 'thinking');
    });
  });

  test('thinking blocks sent back must be unchanged; in the tool loop they must be there', async () => {
    await withMessagesApi(async (_server, client) => {
      const question: MessageParam = { role: 'user', content: STOCK_QUESTION };
      const first = await client.messages.create(request([question], { thinking: adaptive, tools: STOCK_TOOLS }));
      const toolUse = first.content.find((b) => b.type === 'tool_use');
      assert.ok(toolUse?.type === 'tool_use');
      const results: MessageParam = {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: 'GM' }],
      };
      const withAssistant = (content: MessageParam['content']) => [
        question,
        { role: 'assistant' as const, content },
        results,
      ];

      // Unchanged: accepted.
      const ok = await client.messages.create(
        request(withAssistant(first.content), { thinking: adaptive, tools: STOCK_TOOLS }),
      );
      assert.equal(ok.content[0]!.type, 'thinking');

      // A changed text (same signature): refused, naming the block.
      const changed = first.content.map((b) =>
        b.type === 'thinking' ? { ...b, thinking: `${b.thinking} (edited)` } : b,
      );
      assert.equal(
        await badRequest(
          client.messages.create(request(withAssistant(changed), { thinking: adaptive, tools: STOCK_TOOLS })),
        ),
        'messages.1.content.0: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.',
      );

      // Left out: the API's "Expected thinking" 400.
      const without = first.content.filter((b) => b.type !== 'thinking');
      const missing = await badRequest(
        client.messages.create(request(withAssistant(without), { thinking: adaptive, tools: STOCK_TOOLS })),
      );
      assert.match(
        missing,
        /^messages\.1\.content\.0\.type: Expected `thinking` or `redacted_thinking`, but found `(text|tool_use)`\. When `thinking` is enabled, a final `assistant` message must start with a thinking block/,
      );
      // Without thinking in the request, leaving them out is allowed.
      await client.messages.create(request(withAssistant(without), { tools: STOCK_TOOLS }));

      // A block of an earlier turn with a signature this server never issued.
      const forged = [
        question,
        {
          role: 'assistant' as const,
          content: [
            { type: 'thinking' as const, thinking: 'x', signature: 'forged' },
            { type: 'text' as const, text: 'Hi' },
          ],
        },
        { role: 'user' as const, content: 'And Ford?' },
        { role: 'assistant' as const, content: 'Ford is F.' },
        { role: 'user' as const, content: 'Thanks' },
      ];
      assert.equal(
        await badRequest(client.messages.create(request(forged))),
        'messages.1.content.0: Invalid `signature` in `thinking` block',
      );
    });
  });

  test('wrong combinations are the API’s own 400s', async () => {
    await withMessagesApi(async (_server, client) => {
      const ask = [{ role: 'user' as const, content: STOCK_QUESTION }];
      assert.equal(
        await badRequest(client.messages.create(request(ask, { thinking: { type: 'enabled', budget_tokens: 1000 } }))),
        'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024',
      );
      assert.equal(
        await badRequest(
          client.messages.create(
            request(ask, { max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 2048 } }),
          ),
        ),
        '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size',
      );
      for (const tool_choice of [{ type: 'any' }, { type: 'tool', name: 'get_ticker_symbol' }] as const) {
        assert.equal(
          await badRequest(
            client.messages.create(request(ask, { thinking: adaptive, tools: STOCK_TOOLS, tool_choice })),
          ),
          'Thinking may not be enabled when tool_choice forces tool use.',
        );
      }
      assert.match(
        await badRequest(client.messages.create(request(ask, { thinking: { type: 'sometimes' } as never }))),
        /^thinking: Input tag 'sometimes' found using 'type' does not match any of the expected tags/,
      );
      // auto and none are fine with thinking; a budget below max_tokens too.
      await client.messages.create(
        request(ask, { thinking: adaptive, tools: STOCK_TOOLS, tool_choice: { type: 'auto' } }),
      );
      const enabled = await client.messages.create(
        request(ask, {
          max_tokens: 2049,
          thinking: { type: 'enabled', budget_tokens: 2048 },
          output_config: { effort: 'low' },
        }),
      );
      assert.equal(enabled.content[0]!.type, 'thinking');
    });
  });
});
