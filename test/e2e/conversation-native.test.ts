// The durable conversation in the native protocol, end to end: real dev server, real worker, the real SDK
// against the local Messages API server. Assertions are on what the model received and what the history shows.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import { activitiesOf, type Harness, lastUserBlocks, startHarness, uniquePrompt } from '../support/harness';

let h: Harness;

before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

describe('the ticker → price chain', () => {
  test('answers 38.50 after get_ticker_symbol and get_current_stock_price, each its own activity', async () => {
    const prompt = uniquePrompt('What is the current stock price of General Motors?');
    const id = `chain-${Date.now()}`;
    const reply = await h.conversations.sendMessage(id, prompt, {
      start: { tools: STOCK_TOOLS, closeAfterFirstReply: true },
    });
    assert.match(reply.text, /38\.50/);
    assert.equal(reply.toolCalls, 2);
    assert.equal(reply.modelCalls, 3);

    const requests = h.mock.requestsFor(prompt);
    assert.equal(requests.length, 3);
    assert.deepEqual(
      lastUserBlocks(requests[1]!).map((b) => [b.type, b.content]),
      [['tool_result', 'GM']],
    );
    assert.deepEqual(
      lastUserBlocks(requests[2]!).map((b) => [b.type, b.content]),
      [['tool_result', '38.50']],
    );
    assert.deepEqual(
      requests[0]!.body.tools.map((t: { name: string }) => t.name),
      STOCK_TOOLS,
    );

    const activities = await activitiesOf(h.client, id);
    assert.deepEqual(
      activities.map((a) => a.type),
      ['callModel', 'get_ticker_symbol', 'callModel', 'get_current_stock_price', 'callModel'],
    );
    assert.equal(activities[1]!.summary, 'get_ticker_symbol(company_name="General Motors")');
    assert.deepEqual(activities[1]!.result, { ok: true, content: 'GM' });
    assert.equal(activities[3]!.summary, 'get_current_stock_price(symbol="GM")');

    const result = await h.conversations.waitForResult(id);
    assert.equal(result.status, 'completed');
    assert.match(result.text, /38\.50/);
  });

  test('a TickerNotFound goes back to the model as an error result and the model recovers', async () => {
    const prompt = uniquePrompt('What is the current stock price of General Motors?');
    h.mock.script(prompt, [
      {
        reply: {
          content: [{ type: 'tool_use', name: 'get_ticker_symbol', input: { company_name: 'Genral Motors' } }],
          stop_reason: 'tool_use',
        },
      },
      {
        reply: {
          content: [{ type: 'tool_use', name: 'get_ticker_symbol', input: { company_name: 'General Motors' } }],
          stop_reason: 'tool_use',
        },
      },
    ]);
    const reply = await h.conversations.sendMessage(`recover-${Date.now()}`, prompt, { start: { tools: STOCK_TOOLS } });
    assert.match(reply.text, /38\.50/);
    const [, second] = h.mock.requestsFor(prompt);
    const [result] = lastUserBlocks(second!);
    assert.equal(result!.is_error, true);
    assert.equal(result!.content, 'TickerNotFound: no ticker for "Genral Motors"');
    const tickerRuns = h
      .executions()
      .filter((e) => e.tool === 'get_ticker_symbol' && e.event === 'error' && e.idempotencyKey.includes('recover-'));
    assert.equal(tickerRuns.length, 1, 'a business error is not retried');
  });
});

describe('tool calls that cannot run', () => {
  test('invalid input is reported to the model with what was wrong, and the conversation goes on', async () => {
    const prompt = uniquePrompt('Price of symbol 42?');
    h.mock.script(prompt, [
      {
        reply: {
          content: [{ type: 'tool_use', name: 'get_current_stock_price', input: { symbol: 42 } }],
          stop_reason: 'tool_use',
        },
      },
      { reply: { content: [{ type: 'text', text: 'That symbol is not valid.' }], stop_reason: 'end_turn' } },
    ]);
    const reply = await h.conversations.sendMessage(`invalid-${Date.now()}`, prompt, { start: { tools: STOCK_TOOLS } });
    assert.equal(reply.text, 'That symbol is not valid.');
    const [result] = lastUserBlocks(h.mock.requestsFor(prompt)[1]!);
    assert.equal(result!.is_error, true);
    assert.match(result!.content!, /^InvalidInput: get_current_stock_price symbol: .*string/);
  });

  test('an unknown tool name is reported with the tools that exist', async () => {
    const prompt = uniquePrompt('Horoscope please');
    h.mock.script(prompt, [
      {
        reply: {
          content: [{ type: 'tool_use', name: 'get_horoscope', input: { sign: 'leo' } }],
          stop_reason: 'tool_use',
        },
      },
      { reply: { content: [{ type: 'text', text: 'I cannot do horoscopes.' }], stop_reason: 'end_turn' } },
    ]);
    await h.conversations.sendMessage(`unknown-${Date.now()}`, prompt, { start: { tools: STOCK_TOOLS } });
    const [result] = lastUserBlocks(h.mock.requestsFor(prompt)[1]!);
    assert.equal(result!.is_error, true);
    assert.equal(
      result!.content,
      'Unknown tool "get_horoscope". Available tools: get_ticker_symbol, get_current_stock_price.',
    );
  });
});

test("two tool calls in one reply run concurrently and their results keep the model's order", async () => {
  const prompt = uniquePrompt('Weather in Paris and Tokyo?');
  h.mock.script(prompt, [
    {
      reply: {
        content: [
          { type: 'tool_use', id: 'toolu_paris', name: 'get_weather', input: { location: 'Paris' } },
          { type: 'tool_use', id: 'toolu_tokyo', name: 'get_weather', input: { location: 'Tokyo' } },
        ],
        stop_reason: 'tool_use',
      },
    },
    { reply: { content: [{ type: 'text', text: 'Paris 14°C, Tokyo 19°C.' }], stop_reason: 'end_turn' } },
  ]);
  const id = `parallel-${Date.now()}`;
  await h.conversations.sendMessage(id, prompt, { start: { tools: ['get_weather'] } });
  const results = lastUserBlocks(h.mock.requestsFor(prompt)[1]!);
  assert.deepEqual(
    results.map((b) => b.tool_use_id),
    ['toolu_paris', 'toolu_tokyo'],
  );
  assert.match(results[0]!.content!, /"conditions":"partly cloudy"/);

  const history = await h.client.workflow.getHandle(id).fetchHistory();
  const kinds = (history.events ?? []).flatMap((e) =>
    e.activityTaskScheduledEventAttributes?.activityType?.name === 'get_weather'
      ? ['scheduled']
      : e.activityTaskCompletedEventAttributes
        ? ['completed']
        : [],
  );
  // Both tool activities were scheduled before either completed (the first completion belongs to callModel).
  assert.deepEqual(kinds.slice(0, 4), ['completed', 'scheduled', 'scheduled', 'completed']);
});

test('tool_choice forces the named tool on the first call of the turn, then lets the model answer', async () => {
  const prompt = uniquePrompt('Tell me about San Francisco');
  const reply = await h.conversations.sendMessage(`choice-${Date.now()}`, prompt, {
    start: {
      tools: ['get_weather', ...STOCK_TOOLS],
      toolChoice: { type: 'tool', name: 'get_weather' },
    },
  });
  const [first, second] = h.mock.requestsFor(prompt);
  assert.deepEqual(first!.body.tool_choice, { type: 'tool', name: 'get_weather' });
  assert.equal(second!.body.tool_choice, undefined);
  assert.equal(reply.toolCalls, 1);
  assert.match(reply.text, /San Francisco|15/);
});

test('a reply cut off by max_tokens inside a tool_use is asked again higher, and the cut-off call never runs', async () => {
  const prompt = uniquePrompt('What is the current stock price of General Motors?');
  const id = `truncated-${Date.now()}`;
  h.mock.script(prompt, [
    {
      fault: 'truncated-tool-use',
      text: 'Let me look that up.',
      tool: { name: 'get_ticker_symbol', input: { company_name: 'Ford Motor' } },
    },
  ]);
  const reply = await h.conversations.sendMessage(id, prompt, { start: { tools: STOCK_TOOLS, maxTokens: 512 } });
  assert.match(reply.text, /38\.50/);
  const requests = h.mock.requestsFor(prompt);
  // The cut-off reply raised the turn's limit: later calls of the same turn start from the higher rung.
  assert.deepEqual(
    requests.map((r) => r.body.max_tokens),
    [512, 2048, 2048, 2048],
  );
  assert.equal(requests[1]!.body.messages.length, 1, 'nothing of the cut-off reply entered the transcript');
  const tickers = h.executions(id, 'get_ticker_symbol').filter((e) => e.event === 'start');
  assert.equal(tickers.length, 1, 'only the complete call ran');
  const activities = await activitiesOf(h.client, id);
  assert.equal(activities.filter((a) => a.type === 'callModel').length, 4, 'the retry is visible in the history');
});

test('pause_turn: the paused content goes back to the model as it is, and the turn continues', async () => {
  const prompt = uniquePrompt('Research this for a while');
  h.mock.script(prompt, [
    { reply: { content: [{ type: 'text', text: 'Still working…' }], stop_reason: 'pause_turn' } },
    { reply: { content: [{ type: 'text', text: 'Done researching.' }], stop_reason: 'end_turn' } },
  ]);
  const reply = await h.conversations.sendMessage(`pause-${Date.now()}`, prompt, { start: { tools: [] } });
  assert.equal(reply.text, 'Done researching.');
  const second = h.mock.requestsFor(prompt)[1]!;
  assert.deepEqual(second.body.messages.at(-1), {
    role: 'assistant',
    content: [{ type: 'text', text: 'Still working…', cache_control: { type: 'ephemeral' } }],
  });
});

test('refusal ends the conversation with a clear status', async () => {
  const prompt = uniquePrompt('Do something bad');
  h.mock.script(prompt, [
    { reply: { content: [{ type: 'text', text: "I can't help with that." }], stop_reason: 'refusal' } },
  ]);
  const id = `refusal-${Date.now()}`;
  const reply = await h.conversations.sendMessage(id, prompt, { start: { tools: [] } });
  assert.equal(reply.status, 'refused');
  const result = await h.conversations.waitForResult(id);
  assert.equal(result.status, 'refused');
});

test("usage is summed over the conversation's model calls and returned with the result", async () => {
  const prompt = uniquePrompt('What is the current stock price of General Motors?');
  const id = `usage-${Date.now()}`;
  const reply = await h.conversations.sendMessage(id, prompt, {
    start: { tools: STOCK_TOOLS, closeAfterFirstReply: true },
  });
  const requests = h.mock.requestsFor(prompt);
  assert.equal(requests.length, 3);
  assert.ok(reply.usage.inputTokens > 0 && reply.usage.outputTokens > 0);
  const result = await h.conversations.waitForResult(id);
  assert.deepEqual(result.usage, reply.usage);
});
