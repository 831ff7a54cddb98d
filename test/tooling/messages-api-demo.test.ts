// The built-in demo model plays the reference documents' chain, natively (tool_use / tool_result) and in the legacy
// XML format (<function_calls> / <function_results>), through the real SDK.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type Anthropic from '@anthropic-ai/sdk';
import type { ContentBlock, Message, MessageParam, Tool, ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import { demoReply } from '../../testing/messages-api/demo-model';
import {
  DEMO_MODEL,
  DEMO_TOOLS,
  GET_CURRENT_STOCK_PRICE,
  GET_WEATHER,
  LEGACY_STOP_SEQUENCE,
  LEGACY_SYSTEM_PROMPT,
  STOCK_QUESTION,
  legacyError,
  legacyResult,
} from '../../testing/messages-api/fixtures';
import { withMessagesApi } from '../../testing/messages-api/sdk-client';

type Params = Omit<Anthropic.MessageCreateParamsNonStreaming, 'messages'>;
const native: Params = { model: DEMO_MODEL, max_tokens: 1024, tools: DEMO_TOOLS };
const legacy: Params = {
  model: DEMO_MODEL,
  max_tokens: 1024,
  system: LEGACY_SYSTEM_PROMPT,
  stop_sequences: [LEGACY_STOP_SEQUENCE],
};

function toolUses(message: Message): ToolUseBlock[] {
  return message.content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
}

function textOf(message: Message): string {
  return message.content.map((b: ContentBlock) => (b.type === 'text' ? b.text : '')).join('');
}

/** The assistant message as it goes back to the API, and the user message answering its (single) tool call. */
function turn(message: Message, result: string, isError = false): MessageParam[] {
  const call = toolUses(message)[0];
  assert.ok(call, 'expected a tool call');
  return [
    {
      role: 'assistant',
      content: message.content.map((b) =>
        b.type === 'tool_use'
          ? { type: 'tool_use', id: b.id, name: b.name, input: b.input }
          : { type: 'text', text: b.type === 'text' ? b.text : '' },
      ),
    },
    {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: call.id, content: result, ...(isError && { is_error: true }) }],
    },
  ];
}

describe('local Messages API demo model: native tool use', () => {
  test('the reference chain: get_ticker_symbol → get_current_stock_price → the answer', async () => {
    await withMessagesApi(async (server, client) => {
      const messages: MessageParam[] = [{ role: 'user', content: STOCK_QUESTION }];
      const first = await client.messages.stream({ ...native, messages }).finalMessage();
      assert.equal(first.stop_reason, 'tool_use');
      assert.equal(first.content[0]?.type, 'text', 'a short text before the call, like the docs');
      assert.deepEqual(
        toolUses(first).map((c) => [c.name, c.input]),
        [['get_ticker_symbol', { company_name: 'General Motors' }]],
      );

      messages.push(...turn(first, 'GM'));
      const second = await client.messages.stream({ ...native, messages }).finalMessage();
      assert.equal(second.stop_reason, 'tool_use');
      assert.deepEqual(
        toolUses(second).map((c) => [c.name, c.input]),
        [['get_current_stock_price', { symbol: 'GM' }]],
      );

      messages.push(...turn(second, '38.50'));
      const third = await client.messages.create({ ...native, messages });
      assert.equal(third.stop_reason, 'end_turn');
      assert.equal(textOf(third), 'The current stock price of General Motors (GM) is $38.50.');
      assert.deepEqual(
        server.requests.map((r) => r.status),
        [200, 200, 200],
      );
    });
  });

  test('the symbol returned by the tool is the one used next', async () => {
    await withMessagesApi(async (_server, client) => {
      const messages: MessageParam[] = [{ role: 'user', content: 'What is the stock price of Acme Rockets?' }];
      const first = await client.messages.create({ ...native, messages });
      assert.deepEqual(toolUses(first)[0]?.input, { company_name: 'Acme Rockets' });
      messages.push(...turn(first, '{"symbol": "ACME"}'));
      const second = await client.messages.create({ ...native, messages });
      assert.deepEqual(toolUses(second)[0]?.input, { symbol: 'ACME' });
      messages.push(...turn(second, '12.5'));
      assert.equal(
        textOf(await client.messages.create({ ...native, messages })),
        'The current stock price of Acme Rockets (ACME) is $12.50.',
      );
    });
  });

  test('a tool_result with is_error → a plain end_turn answer quoting the error', async () => {
    await withMessagesApi(async (_server, client) => {
      const messages: MessageParam[] = [{ role: 'user', content: STOCK_QUESTION }];
      const first = await client.messages.create({ ...native, messages });
      messages.push(...turn(first, 'TickerNotFound: no ticker symbol matches "General Motors"', true));
      const answer = await client.messages.create({ ...native, messages });
      assert.equal(answer.stop_reason, 'end_turn');
      assert.equal(toolUses(answer).length, 0);
      assert.equal(
        textOf(answer),
        'I couldn\'t look that up: TickerNotFound: no ticker symbol matches "General Motors"',
      );
    });
  });

  test('weather in X → get_weather({location: X}) → an answer with its result', async () => {
    await withMessagesApi(async (_server, client) => {
      const messages: MessageParam[] = [{ role: 'user', content: "What's the weather like in San Francisco, CA?" }];
      const first = await client.messages.create({ ...native, messages });
      assert.deepEqual(
        toolUses(first).map((c) => [c.name, c.input]),
        [['get_weather', { location: 'San Francisco, CA' }]],
      );
      messages.push(...turn(first, '15 degrees, sunny'));
      assert.equal(
        textOf(await client.messages.create({ ...native, messages })),
        'The weather in San Francisco, CA: 15 degrees, sunny.',
      );
    });
  });

  test('only offered tools are called', async () => {
    await withMessagesApi(async (_server, client) => {
      const onlyPrice = await client.messages.create({
        ...native,
        tools: [GET_CURRENT_STOCK_PRICE],
        messages: [{ role: 'user', content: STOCK_QUESTION }],
      });
      assert.deepEqual(
        toolUses(onlyPrice).map((c) => [c.name, c.input]),
        [['get_current_stock_price', { symbol: 'GM' }]],
      );
      const noStockTools = await client.messages.create({
        ...native,
        tools: [GET_WEATHER],
        messages: [{ role: 'user', content: STOCK_QUESTION }],
      });
      assert.equal(noStockTools.stop_reason, 'end_turn');
      assert.equal(textOf(noStockTools), "I don't have a tool to look up the stock price of General Motors.");
    });
  });

  test('tool_choice: tool forces that tool (no text), none forbids tools, any forces some tool', async () => {
    await withMessagesApi(async (_server, client) => {
      const messages: MessageParam[] = [{ role: 'user', content: STOCK_QUESTION }];
      const forced = await client.messages.create({
        ...native,
        messages,
        tool_choice: { type: 'tool', name: 'get_current_stock_price' },
      });
      assert.equal(forced.stop_reason, 'tool_use');
      assert.deepEqual(
        forced.content.map((b) => b.type),
        ['tool_use'],
      );
      assert.deepEqual(toolUses(forced)[0]?.input, { symbol: 'GM' });

      const none = await client.messages.create({ ...native, messages, tool_choice: { type: 'none' } });
      assert.equal(none.stop_reason, 'end_turn');
      assert.equal(toolUses(none).length, 0);

      const chat: MessageParam[] = [{ role: 'user', content: 'Hello!' }];
      const any = await client.messages.create({ ...native, messages: chat, tool_choice: { type: 'any' } });
      assert.equal(any.stop_reason, 'tool_use');
      assert.equal(toolUses(any)[0]?.name, 'get_ticker_symbol');

      const forcedWeather = await client.messages.create({
        ...native,
        messages: chat,
        tool_choice: { type: 'tool', name: 'get_weather' },
      });
      assert.deepEqual(toolUses(forcedWeather)[0]?.input, { location: 'Hello!' }, 'the best input it can infer');
    });
  });

  test('anything else is echoed, and multi-turn chats answer the latest user message', async () => {
    await withMessagesApi(async (_server, client) => {
      const messages: MessageParam[] = [{ role: 'user', content: 'Hello there' }];
      const first = await client.messages.create({ ...native, messages });
      assert.equal(textOf(first), 'You said: Hello there');
      messages.push(
        { role: 'assistant', content: textOf(first) },
        { role: 'user', content: [{ type: 'text', text: 'How are you?' }] },
      );
      const second = await client.messages.create({ ...native, messages });
      assert.equal(textOf(second), 'You said: How are you?');
      messages.push({ role: 'assistant', content: textOf(second) }, { role: 'user', content: STOCK_QUESTION });
      const third = await client.messages.create({ ...native, messages });
      assert.equal(toolUses(third)[0]?.name, 'get_ticker_symbol');
    });
  });

  test('a too-small max_tokens cuts the reply: stop_reason max_tokens, no complete tool call', async () => {
    await withMessagesApi(async (_server, client) => {
      const cut = await client.messages
        .stream({ ...native, max_tokens: 20, messages: [{ role: 'user', content: STOCK_QUESTION }] })
        .finalMessage();
      assert.equal(cut.stop_reason, 'max_tokens');
      assert.equal(cut.usage.output_tokens, 20, 'a reply stopped by max_tokens used all of them');
      assert.ok(toolUses(cut).every((c) => Object.keys(c.input as object).length === 0));
      const enough = await client.messages.create({
        ...native,
        max_tokens: 100,
        messages: [{ role: 'user', content: STOCK_QUESTION }],
      });
      assert.equal(enough.stop_reason, 'tool_use');
    });
  });
});

describe('local Messages API demo model: legacy XML tool use', () => {
  const firstCall =
    '<function_calls>\n<invoke>\n<tool_name>get_ticker_symbol</tool_name>\n<parameters>\n<company_name>General Motors</company_name>\n</parameters>\n</invoke>\n';
  const secondCall =
    '<function_calls>\n<invoke>\n<tool_name>get_current_stock_price</tool_name>\n<parameters>\n<symbol>GM</symbol>\n</parameters>\n</invoke>\n';

  test('the reference chain as text, each call stopped by the </function_calls> stop sequence', async () => {
    await withMessagesApi(async (_server, client) => {
      const messages: MessageParam[] = [{ role: 'user', content: STOCK_QUESTION }];
      const first = await client.messages.stream({ ...legacy, messages }).finalMessage();
      assert.equal(textOf(first), firstCall);
      assert.equal(first.stop_reason, 'stop_sequence');
      assert.equal(first.stop_sequence, '</function_calls>');

      messages.push(
        { role: 'assistant', content: textOf(first) },
        { role: 'user', content: legacyResult('get_ticker_symbol', 'GM') },
      );
      const second = await client.messages.create({ ...legacy, messages });
      assert.equal(textOf(second), secondCall);
      assert.equal(second.stop_reason, 'stop_sequence');

      messages.push(
        { role: 'assistant', content: textOf(second) },
        { role: 'user', content: legacyResult('get_current_stock_price', '38.50') },
      );
      const third = await client.messages.create({ ...legacy, messages });
      assert.equal(textOf(third), '<answer>The current stock price of General Motors is $38.50.</answer>');
      assert.equal(third.stop_reason, 'end_turn');
      assert.equal(third.stop_sequence, null);
    });
  });

  test('an <error> in the function results → an answer quoting it', async () => {
    await withMessagesApi(async (_server, client) => {
      const messages: MessageParam[] = [
        { role: 'user', content: STOCK_QUESTION },
        { role: 'assistant', content: firstCall },
        { role: 'user', content: legacyError('TickerNotFound: no match for General Motors') },
      ];
      const answer = await client.messages.create({ ...legacy, messages });
      assert.equal(
        textOf(answer),
        "<answer>I couldn't look that up: TickerNotFound: no match for General Motors</answer>",
      );
      assert.equal(answer.stop_reason, 'end_turn');
    });
  });

  test('the question in another language (the Japanese reference) gives the same first call', async () => {
    await withMessagesApi(async (_server, client) => {
      const message = await client.messages.create({
        ...legacy,
        messages: [{ role: 'user', content: 'General Motorsの現在の株価はいくらですか?' }],
      });
      assert.equal(textOf(message), firstCall);
    });
  });

  test("the reference documents' prompt layout (a newline inside <tool_name>) offers the same tools", async () => {
    const documentsLayout = LEGACY_SYSTEM_PROMPT.replace(
      '<tool_name>get_current_stock_price</tool_name>',
      '<tool_name>get_current_stock_price\n</tool_name>',
    );
    assert.notEqual(documentsLayout, LEGACY_SYSTEM_PROMPT);
    await withMessagesApi(async (_server, client) => {
      const messages: MessageParam[] = [
        { role: 'user', content: STOCK_QUESTION },
        { role: 'assistant', content: firstCall },
        { role: 'user', content: legacyResult('get_ticker_symbol', 'GM') },
      ];
      const second = await client.messages.create({ ...legacy, system: documentsLayout, messages });
      assert.equal(textOf(second), secondCall);
    });
  });

  test('without the stop sequence the closing tag is written and the turn ends', async () => {
    await withMessagesApi(async (_server, client) => {
      const { stop_sequences: _none, ...noStop } = legacy;
      const message = await client.messages.create({
        ...noStop,
        messages: [{ role: 'user', content: STOCK_QUESTION }],
      });
      assert.equal(textOf(message), `${firstCall}</function_calls>`);
      assert.equal(message.stop_reason, 'end_turn');
    });
  });
});

describe('local Messages API demo model: pure function', () => {
  test('demoReply is deterministic and needs no server', () => {
    const body = {
      model: DEMO_MODEL,
      max_tokens: 100,
      tools: DEMO_TOOLS as Tool[],
      messages: [{ role: 'user', content: STOCK_QUESTION }],
    };
    assert.deepEqual(demoReply(body), demoReply(body));
    const reply = demoReply(body);
    assert.equal(reply.stop_reason, 'tool_use');
    assert.deepEqual(reply.content[1], {
      type: 'tool_use',
      name: 'get_ticker_symbol',
      input: { company_name: 'General Motors' },
    });
    const stopped = demoReply({
      model: DEMO_MODEL,
      max_tokens: 100,
      stop_sequences: ['said'],
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.deepEqual(stopped, {
      content: [{ type: 'text', text: 'You ' }],
      stop_reason: 'stop_sequence',
      stop_sequence: 'said',
    });
  });

  test('"Buy N shares of <company>" asks for buy_stock with the symbol and quantity, then quotes the order', () => {
    const buyStock = {
      name: 'buy_stock',
      description: 'Places a market order.',
      input_schema: {
        type: 'object',
        properties: { symbol: { type: 'string' }, quantity: { type: 'integer' } },
        required: ['symbol', 'quantity'],
      },
    } satisfies Tool;
    const question = 'Buy 3 shares of General Motors [order 1]';
    const body = {
      model: DEMO_MODEL,
      max_tokens: 200,
      tools: [buyStock],
      messages: [{ role: 'user', content: question }],
    };
    const reply = demoReply(body);
    assert.equal(reply.stop_reason, 'tool_use');
    const call = reply.content.find((b) => b.type === 'tool_use');
    assert.deepEqual(call && { name: call.name, input: call.input }, {
      name: 'buy_stock',
      input: { symbol: 'GM', quantity: 3 },
    });
    const after = (content: string, isError: boolean) =>
      demoReply({
        ...body,
        messages: [
          { role: 'user', content: question },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'buy_stock', input: call!.input }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content, is_error: isError }] },
        ],
      }).content[0];
    assert.deepEqual(after('Order o-1 filled: 3 GM at 38.50 = 115.50', false), {
      type: 'text',
      text: 'buy_stock returned: Order o-1 filled: 3 GM at 38.50 = 115.50.',
    });
    assert.match(JSON.stringify(after('ApprovalRejected: no', true)), /couldn't look that up: ApprovalRejected/);
    const without = demoReply({ ...body, tools: DEMO_TOOLS as Tool[] });
    assert.match(JSON.stringify(without.content), /don't have a tool to buy shares of General Motors/);
  });

  test('a coordinator offered an agent tool hands each company to a sub-agent in one reply, then combines the answers', () => {
    const researchCompany = {
      name: 'research_company',
      description: 'Researches one company.',
      input_schema: { type: 'object', properties: { task: { type: 'string' } }, required: ['task'] },
    } satisfies Tool;
    const question = 'Research General Motors and Ford, and buy 10 shares of Ford.';
    const body = {
      model: DEMO_MODEL,
      max_tokens: 400,
      tools: [...(DEMO_TOOLS as Tool[]), researchCompany],
      messages: [{ role: 'user', content: question }],
    };
    const reply = demoReply(body);
    assert.equal(reply.stop_reason, 'tool_use');
    const calls = reply.content.filter((b) => b.type === 'tool_use');
    assert.deepEqual(
      calls.map((b) => ({ name: b.name, input: b.input })),
      [
        { name: 'research_company', input: { task: 'What is the current stock price of General Motors?' } },
        { name: 'research_company', input: { task: 'Buy 10 shares of Ford.' } },
      ],
    );
    const answer = demoReply({
      ...body,
      messages: [
        { role: 'user', content: question },
        {
          role: 'assistant',
          content: calls.map((b, i) => ({ type: 'tool_use', id: `toolu_${i}`, name: b.name, input: b.input })),
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_0', content: 'GM is at $38.50.' },
            { type: 'tool_result', tool_use_id: 'toolu_1', content: 'buy_stock returned: Order o-1 filled' },
          ],
        },
      ],
    });
    assert.deepEqual(answer.content, [
      { type: 'text', text: 'The sub-agents found: GM is at $38.50. buy_stock returned: Order o-1 filled.' },
    ]);
    // Without an agent tool the same question plans as before (here: no buy_stock offered, so it says so).
    const plain = demoReply({ ...body, tools: DEMO_TOOLS as Tool[] });
    assert.deepEqual(plain.content, [{ type: 'text', text: "I don't have a tool to buy shares of Ford." }]);
  });

  test('a sub-agent whose task asks to buy calls buy_stock', () => {
    const reply = demoReply({
      model: DEMO_MODEL,
      max_tokens: 200,
      tools: [
        ...(DEMO_TOOLS as Tool[]),
        {
          name: 'buy_stock',
          input_schema: {
            type: 'object',
            properties: { symbol: { type: 'string' }, quantity: { type: 'integer' } },
            required: ['symbol', 'quantity'],
          },
        },
      ],
      messages: [{ role: 'user', content: 'Buy 10 shares of Ford.' }],
    });
    const call = reply.content.find((b) => b.type === 'tool_use');
    assert.deepEqual(call && { name: call.name, input: call.input }, {
      name: 'buy_stock',
      input: { symbol: 'F', quantity: 10 },
    });
  });
});
