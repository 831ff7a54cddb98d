// The local Messages API rejects malformed requests the way the real API does: 400 invalid_request_error with a
// message naming the problem, seen through the real SDK as BadRequestError.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import type {
  ContentBlockParam,
  MessageCreateParamsNonStreaming,
  MessageParam,
} from '@anthropic-ai/sdk/resources/messages';
import { DEMO_MODEL, DEMO_TOOLS, GET_TICKER_SYMBOL, STOCK_QUESTION } from '../../testing/messages-api/fixtures';
import { withMessagesApi } from '../../testing/messages-api/sdk-client';
import { maxOutputTokens, validateRequest } from '../../testing/messages-api/validate-request';

const user = (content: MessageParam['content']): MessageParam => ({ role: 'user', content });
const assistant = (content: MessageParam['content']): MessageParam => ({ role: 'assistant', content });
const base = { model: DEMO_MODEL, max_tokens: 1024, messages: [user('Hello')] };

const toolUse = (id: string) => ({
  type: 'tool_use' as const,
  id,
  name: 'get_ticker_symbol',
  input: { company_name: 'General Motors' },
});
const toolResult = (id: string) => ({ type: 'tool_result' as const, tool_use_id: id, content: 'GM' });

/** Sends `body` as is (the SDK's types would refuse most of these) and returns the 400 it must produce. */
async function rejects(body: Record<string, unknown>): Promise<InstanceType<typeof Anthropic.BadRequestError>> {
  return withMessagesApi(async (server, client) => {
    const error: unknown = await client.messages
      // an explicit timeout keeps the SDK from checking max_tokens itself
      .create(body as unknown as MessageCreateParamsNonStreaming, { timeout: 10_000 })
      .then(
        () => assert.fail('expected a 400'),
        (err: unknown) => err,
      );
    assert.ok(error instanceof Anthropic.BadRequestError, `expected BadRequestError, got ${String(error)}`);
    assert.equal(error.status, 400);
    assert.equal(error.type, 'invalid_request_error');
    assert.match(error.requestID ?? '', /^req_/);
    assert.equal(server.requests[0]?.status, 400);
    return error;
  });
}

async function expect400(body: Record<string, unknown>, pattern: RegExp): Promise<void> {
  const error = await rejects(body);
  assert.match(error.apiMessage ?? '', pattern);
  assert.match(error.message, /^400 /);
}

describe('local Messages API validation: required fields', () => {
  test('model missing → "model: Field required"', async () => {
    await expect400({ max_tokens: 10, messages: [user('Hi')] }, /^model: Field required$/);
  });
  test('model not a string → 400', async () => {
    await expect400({ ...base, model: 42 }, /^model: Input should be a valid string$/);
  });
  test('max_tokens missing → "max_tokens: Field required"', async () => {
    await expect400({ model: DEMO_MODEL, messages: [user('Hi')] }, /^max_tokens: Field required$/);
  });
  test('max_tokens 0 → must be at least 1', async () => {
    await expect400({ ...base, max_tokens: 0 }, /^max_tokens: Input should be greater than or equal to 1$/);
  });
  test('max_tokens not an integer → 400', async () => {
    await expect400({ ...base, max_tokens: 10.5 }, /^max_tokens: Input should be a valid integer$/);
  });
  test("max_tokens above the model's cap → names the cap and the model", async () => {
    await expect400(
      { ...base, model: 'claude-opus-4-6', max_tokens: 32001 },
      /^max_tokens: 32001 > 32000, which is the maximum allowed number of output tokens for claude-opus-4-6$/,
    );
    await expect400({ ...base, model: 'claude-3-5-haiku-20241022', max_tokens: 8193 }, /8193 > 8192/);
  });
  test('the max_tokens cap table', () => {
    assert.equal(maxOutputTokens('claude-opus-4-1-20250805'), 32000);
    assert.equal(maxOutputTokens('claude-sonnet-4-6'), 64000);
    assert.equal(maxOutputTokens('claude-3-7-sonnet-20250219'), 64000);
    assert.equal(maxOutputTokens('claude-3-5-haiku-20241022'), 8192);
    assert.equal(maxOutputTokens('claude-haiku-4-5'), 64000);
    assert.equal(maxOutputTokens('claude-sonnet-5-5'), 64000);
  });
});

describe('local Messages API validation: messages', () => {
  test('empty messages → 400', async () => {
    await expect400({ ...base, messages: [] }, /^messages: at least one message is required$/);
  });
  test('a role other than user/assistant → 400', async () => {
    await expect400(
      { ...base, messages: [{ role: 'system', content: 'Be brief' }, user('Hi')] },
      /^messages\.0\.role: Input should be 'user' or 'assistant'$/,
    );
  });
  test('first message from the assistant → 400', async () => {
    await expect400(
      { ...base, messages: [assistant('Hi'), user('Hello')] },
      /^messages: first message must use the "user" role$/,
    );
  });
  test('two user messages in a row → roles must alternate', async () => {
    await expect400(
      { ...base, messages: [user('Hi'), user('Hello?')] },
      /^messages: roles must alternate between "user" and "assistant", but found multiple "user" roles in a row$/,
    );
  });
  test('two assistant messages in a row → roles must alternate', async () => {
    await expect400(
      { ...base, messages: [user('Hi'), assistant('a'), assistant('b')] },
      /multiple "assistant" roles in a row/,
    );
  });
  test('an empty user message → 400', async () => {
    await expect400(
      { ...base, messages: [user('Hi'), assistant('Yes?'), user('')] },
      /^messages\.2: all messages must have non-empty content/,
    );
  });
});

describe('local Messages API validation: tools and tool_choice', () => {
  test('a tool name with a space → pattern error', async () => {
    await expect400(
      { ...base, tools: [{ ...GET_TICKER_SYMBOL, name: 'get ticker' }] },
      /^tools\.0\.custom\.name: String should match pattern '\^\[a-zA-Z0-9_-\]\{1,64\}\$'$/,
    );
  });
  test('a tool name longer than 64 characters → pattern error', async () => {
    await expect400(
      { ...base, tools: [DEMO_TOOLS[0], { ...GET_TICKER_SYMBOL, name: 'x'.repeat(65) }] },
      /^tools\.1\.custom\.name: String should match pattern/,
    );
  });
  test('duplicate tool names → "Tool names must be unique."', async () => {
    await expect400({ ...base, tools: [GET_TICKER_SYMBOL, GET_TICKER_SYMBOL] }, /^tools: Tool names must be unique\.$/);
  });
  test('a tool without input_schema → 400', async () => {
    await expect400(
      { ...base, tools: [{ name: 'lookup', description: 'x' }] },
      /^tools\.0\.custom\.input_schema: Field required$/,
    );
  });
  test("an input_schema whose type is not 'object' → 400", async () => {
    await expect400(
      { ...base, tools: [{ name: 'lookup', input_schema: { type: 'array' } }] },
      /^tools\.0\.custom\.input_schema\.type: Input should be 'object'$/,
    );
  });
  test('tool_choice naming a tool that is not offered → 400', async () => {
    await expect400(
      { ...base, tools: DEMO_TOOLS, tool_choice: { type: 'tool', name: 'get_news' } },
      /^tool_choice\.tool\.name: Tool 'get_news' not found in tools \(available: get_ticker_symbol, get_current_stock_price, get_weather\)$/,
    );
  });
  test('an unknown tool_choice type → 400 listing the valid ones', async () => {
    await expect400(
      { ...base, tools: DEMO_TOOLS, tool_choice: { type: 'required' } },
      /'required'.*'auto', 'any', 'tool', 'none'/,
    );
  });
});

describe('local Messages API validation: tool_use / tool_result pairing', () => {
  test('a tool_use without its tool_result in the next message → names the id', async () => {
    await expect400(
      { ...base, messages: [user(STOCK_QUESTION), assistant([toolUse('toolu_x')]), user('and?')] },
      /^messages\.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_x\. Each `tool_use` block must have a corresponding `tool_result` block in the next message\.$/,
    );
  });
  test('a tool_use as the last message → also unanswered', async () => {
    await expect400(
      { ...base, messages: [user(STOCK_QUESTION), assistant([toolUse('toolu_last')])] },
      /without `tool_result` blocks immediately after: toolu_last/,
    );
  });
  test('one of two parallel tool_uses unanswered → names only that one', async () => {
    await expect400(
      {
        ...base,
        messages: [
          user(STOCK_QUESTION),
          assistant([toolUse('toolu_a'), toolUse('toolu_b')]),
          user([toolResult('toolu_a')]),
        ],
      },
      /immediately after: toolu_b\./,
    );
  });
  test('tool_result blocks not first in the user message → 400', async () => {
    await expect400(
      {
        ...base,
        messages: [
          user(STOCK_QUESTION),
          assistant([toolUse('toolu_x')]),
          user([{ type: 'text', text: 'here:' }, toolResult('toolu_x')]),
        ],
      },
      /^messages\.2: Did not find 1 `tool_result` block\(s\) at the beginning of this message\./,
    );
  });
  test('a tool_result for an id the previous message did not use → 400', async () => {
    await expect400(
      {
        ...base,
        messages: [
          user(STOCK_QUESTION),
          assistant([toolUse('toolu_x')]),
          user([toolResult('toolu_x'), toolResult('toolu_zzz')]),
        ],
      },
      /^messages\.2\.content\.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_zzz\. Each `tool_result` block must have a corresponding `tool_use` block in the previous message\.$/,
    );
  });
  test('a tool_result in the first message → unexpected tool_use_id', async () => {
    await expect400(
      { ...base, messages: [user([toolResult('toolu_x')])] },
      /^messages\.0\.content\.0: unexpected `tool_use_id`/,
    );
  });
  test('a tool_use input that is not an object → 400', async () => {
    await expect400(
      {
        ...base,
        messages: [
          user(STOCK_QUESTION),
          assistant([{ type: 'tool_use', id: 't', name: 'x', input: 'GM' }]),
          user([toolResult('t')]),
        ],
      },
      /^messages\.1\.content\.0\.tool_use\.input: Input should be a valid dictionary$/,
    );
  });
  test('a tool_use id with characters outside [a-zA-Z0-9_-] → 400', async () => {
    for (const id of ['toolu_a.b', 'toolu a', 'toolu_\ud800', 'call:0']) {
      await expect400(
        { ...base, messages: [user(STOCK_QUESTION), assistant([toolUse(id)]), user([toolResult(id)])] },
        /^messages\.1\.content\.0\.tool_use\.id: String should match pattern '\^\[a-zA-Z0-9_-\]\+\$'$/,
      );
    }
  });
  test('the same tool_use id twice in one message or across messages → 400', async () => {
    await expect400(
      {
        ...base,
        messages: [
          user(STOCK_QUESTION),
          assistant([toolUse('toolu_1'), toolUse('toolu_1')]),
          user([toolResult('toolu_1')]),
        ],
      },
      /^messages\.1\.content\.1: `tool_use` ids must be unique$/,
    );
    await expect400(
      {
        ...base,
        messages: [
          user(STOCK_QUESTION),
          assistant([toolUse('toolu_1')]),
          user([toolResult('toolu_1')]),
          assistant([toolUse('toolu_1')]),
          user([toolResult('toolu_1')]),
        ],
      },
      /^messages\.3\.content\.0: `tool_use` ids must be unique$/,
    );
  });
});

describe('local Messages API validation: server tool blocks and message order', () => {
  // Server tool blocks as the API writes them (the request types of the SDK list only some of them).
  const block = (fields: Record<string, unknown>) => fields as unknown as ContentBlockParam;
  const search = (id: string) => block({ type: 'server_tool_use', id, name: 'web_search', input: { query: 'GM' } });
  const searched = (id: string) => block({ type: 'web_search_tool_result', tool_use_id: id, content: [] });
  const fetchCall = (id: string) =>
    block({ type: 'server_tool_use', id, name: 'web_fetch', input: { url: 'https://gm.com' } });
  const fetched = (id: string) =>
    block({
      type: 'web_fetch_tool_result',
      tool_use_id: id,
      content: { type: 'web_fetch_tool_error', error_code: 'url_not_accessible' },
    });
  const text = (words: string) => block({ type: 'text', text: words });
  const accepted = (messages: unknown[]) =>
    assert.deepEqual(validateRequest({ ...base, messages }), { ok: true }, JSON.stringify(messages));

  test('a server_tool_use without its result, followed by a user message → names the tool, the id and the result it lacks', async () => {
    await expect400(
      {
        ...base,
        messages: [user(STOCK_QUESTION), assistant([text('Searching.'), search('srvtoolu_01lost')]), user('And?')],
      },
      /^messages\.1: `web_search` tool use with id `srvtoolu_01lost` was found without a corresponding `web_search_tool_result` block$/,
    );
  });
  test('a paused turn (its call still open) is accepted as the final message, refused once a user message follows', async () => {
    const paused = assistant([text('Searching.'), search('srvtoolu_01paused')]);
    accepted([user(STOCK_QUESTION), paused]);
    await expect400(
      { ...base, messages: [user(STOCK_QUESTION), paused, user('Never mind. What about Ford?')] },
      /^messages\.1: `web_search` tool use with id `srvtoolu_01paused` was found without/,
    );
  });
  test('a server tool result with no server_tool_use before it in its message → 400', async () => {
    await expect400(
      { ...base, messages: [user(STOCK_QUESTION), assistant([searched('srvtoolu_01nowhere'), text('GM.')])] },
      /^messages\.1\.content\.0: unexpected `tool_use_id` found in `web_search_tool_result` blocks: srvtoolu_01nowhere\. Each `web_search_tool_result` block must have a corresponding `server_tool_use` block before it\.$/,
    );
    await expect400(
      {
        ...base,
        messages: [user(STOCK_QUESTION), assistant([searched('srvtoolu_01late'), search('srvtoolu_01late')])],
      },
      /^messages\.1\.content\.0: unexpected `tool_use_id`/, // the result comes after its call
    );
  });
  test('server tool blocks in a user message → 400', async () => {
    await expect400(
      { ...base, messages: [user([search('srvtoolu_01user')])] },
      /^messages\.0\.content\.0: `server_tool_use` blocks can only be in "assistant" messages$/,
    );
  });
  test('a call deferred by client tool calls: open while the next message holds only tool_results; its result opens the reply after', async () => {
    const deferring = assistant([fetchCall('srvtoolu_01deferred'), toolUse('toolu_1')]);
    accepted([user(STOCK_QUESTION), deferring, user([toolResult('toolu_1')])]);
    accepted([
      user(STOCK_QUESTION),
      deferring,
      user([toolResult('toolu_1')]),
      assistant([fetched('srvtoolu_01deferred'), text('Fetched.')]),
      user('Thanks.'),
    ]);
    // Text after the tool_results ends the assistant turn: the open call is refused.
    await expect400(
      { ...base, messages: [user(STOCK_QUESTION), deferring, user([toolResult('toolu_1'), text('Go on.')])] },
      /^messages\.1: `web_fetch` tool use with id `srvtoolu_01deferred` was found without a corresponding `web_fetch_tool_result` block$/,
    );
    // The reply after must bring the result.
    await expect400(
      {
        ...base,
        messages: [
          user(STOCK_QUESTION),
          deferring,
          user([toolResult('toolu_1')]),
          assistant([text('Done.')]),
          user('Ok.'),
        ],
      },
      /^messages\.1: `web_fetch` tool use with id `srvtoolu_01deferred` was found without/,
    );
  });
  test('paired calls anywhere, a paused turn joined with its continuation, and code execution names are accepted', () => {
    accepted([
      user(STOCK_QUESTION),
      assistant([search('srvtoolu_01a'), searched('srvtoolu_01a'), text('GM is $38.50.')]),
      user('Fetch it.'),
      // a paused turn and its continuation, one message: the continuation opens with the paused call's result
      assistant([fetchCall('srvtoolu_01b'), fetched('srvtoolu_01b'), text('Could not fetch.')]),
      user('Run it.'),
      assistant([
        block({ type: 'server_tool_use', id: 'srvtoolu_01c', name: 'bash_code_execution', input: { command: 'ls' } }),
        block({ type: 'bash_code_execution_tool_result', tool_use_id: 'srvtoolu_01c', content: {} }),
      ]),
      user('Ok.'),
    ]);
    const verdict = validateRequest({
      ...base,
      messages: [
        user(STOCK_QUESTION),
        assistant([block({ type: 'server_tool_use', id: 'srvtoolu_01d', name: 'bash_code_execution', input: {} })]),
        user('Ok.'),
      ],
    });
    assert.ok(
      !verdict.ok && verdict.message.endsWith('`bash_code_execution_tool_result` block'),
      JSON.stringify(verdict),
    );
  });
  test('message order: two assistant messages in a row (a continuation after a paused turn, not joined) → 400', async () => {
    await expect400(
      {
        ...base,
        messages: [
          user(STOCK_QUESTION),
          assistant([search('srvtoolu_01e'), searched('srvtoolu_01e')]),
          assistant([text('GM is $38.50.')]),
        ],
      },
      /^messages: roles must alternate between "user" and "assistant", but found multiple "assistant" roles in a row$/,
    );
  });
});

describe('local Messages API validation: text', () => {
  test('an empty text block → 400', async () => {
    await expect400(
      { ...base, messages: [user(STOCK_QUESTION), assistant([{ type: 'text', text: '' }]), user('and?')] },
      /^messages: text content blocks must be non-empty$/,
    );
  });
  test('a message whose only text is blank → 400; blank text next to other text is accepted', async () => {
    await expect400(
      { ...base, messages: [user(STOCK_QUESTION), assistant([{ type: 'text', text: ' \n' }]), user('and?')] },
      /^messages: text content blocks must contain non-whitespace text$/,
    );
    await expect400(
      { ...base, messages: [user(STOCK_QUESTION), assistant(' \n'), user('and?')] },
      /^messages: text content blocks must contain non-whitespace text$/,
    );
    const blankAndText = [
      { type: 'text' as const, text: ' ' },
      { type: 'text' as const, text: 'Hello.' },
    ];
    assert.deepEqual(
      validateRequest({ ...base, messages: [user(STOCK_QUESTION), assistant(blankAndText), user('and?')] }),
      { ok: true },
    );
  });
});

describe('local Messages API validation: caching and sampling parameters', () => {
  test('five cache_control breakpoints → "A maximum of 4 blocks…"', async () => {
    const cached = (text: string) => ({ type: 'text' as const, text, cache_control: { type: 'ephemeral' as const } });
    await expect400(
      {
        ...base,
        tools: [{ ...GET_TICKER_SYMBOL, cache_control: { type: 'ephemeral' } }],
        system: [cached('a'), cached('b')],
        messages: [user([cached('c'), cached('d')])],
      },
      /^A maximum of 4 blocks with cache_control may be provided\. Found 5\.$/,
    );
  });
  test('stop_sequences not a list → 400', async () => {
    await expect400({ ...base, stop_sequences: '</function_calls>' }, /^stop_sequences: Input should be a valid list$/);
  });
  test('an empty stop sequence → 400', async () => {
    await expect400(
      { ...base, stop_sequences: ['ok', ''] },
      /^stop_sequences\.1: String should have at least 1 character$/,
    );
  });
  test('a stop sequence that is not a string → 400', async () => {
    await expect400({ ...base, stop_sequences: [7] }, /^stop_sequences\.0: Input should be a valid string$/);
  });
  test('temperature above 1 → 400', async () => {
    await expect400({ ...base, temperature: 1.5 }, /^temperature: Input should be less than or equal to 1$/);
  });
  test('temperature below 0 → 400', async () => {
    await expect400({ ...base, temperature: -0.5 }, /^temperature: Input should be greater than or equal to 0$/);
  });
});

describe('local Messages API validation: valid requests pass', () => {
  test('a complete tool conversation with every checked feature is accepted (200)', async () => {
    await withMessagesApi(async (server, client) => {
      const message = await client.messages.create(
        {
          model: DEMO_MODEL,
          max_tokens: 64000,
          stop_sequences: ['STOP'],
          system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }],
          tools: DEMO_TOOLS,
          tool_choice: { type: 'auto', disable_parallel_tool_use: true },
          messages: [
            user(STOCK_QUESTION),
            assistant([{ type: 'text', text: 'Looking it up.' }, toolUse('toolu_1')]),
            user([toolResult('toolu_1'), { type: 'text', text: 'Thanks' }]),
          ],
        },
        { timeout: 10_000 },
      );
      assert.equal(message.type, 'message');
      assert.equal(server.requests[0]?.status, 200);
    });
  });

  test('a temperature within 0..1 is accepted (SDK 1.12 no longer types it: sent as is)', async () => {
    await withMessagesApi(async (server, client) => {
      const body = { ...base, temperature: 0.7 } as unknown as MessageCreateParamsNonStreaming;
      await client.messages.create(body);
      assert.equal(server.requests[0]?.body.temperature, 0.7);
      assert.equal(server.requests[0]?.status, 200);
    });
  });

  test('validateRequest is a pure function usable without the server', () => {
    assert.deepEqual(validateRequest({ model: DEMO_MODEL, max_tokens: 5, messages: [user('Hi')] }), { ok: true });
    assert.deepEqual(validateRequest({ model: DEMO_MODEL, messages: [user('Hi')] }, { countTokens: true }), {
      ok: true,
    });
    assert.deepEqual(
      validateRequest({ model: DEMO_MODEL, max_tokens: 5, messages: [user('Hi')] }, { countTokens: true }),
      { ok: false, message: 'max_tokens: Extra inputs are not permitted' },
      'count_tokens takes no generation fields, as the API',
    );
    assert.equal(
      validateRequest({ model: DEMO_MODEL, stream: true, messages: [user('Hi')] }, { countTokens: true }).ok,
      false,
    );
    const verdict = validateRequest({ model: DEMO_MODEL, max_tokens: 5, messages: [user('Hi'), user('again')] });
    assert.equal(verdict.ok, false);
    assert.ok(!verdict.ok && /roles must alternate/.test(verdict.message));
    assert.equal(validateRequest('nope').ok, false);
  });
});
