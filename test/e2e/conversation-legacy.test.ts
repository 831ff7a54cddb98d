// Legacy prompt-based XML tool use end to end: the same loop, activities, retries and error handling as the
// native protocol, with tools described in the system prompt and calls read from `<function_calls>` text.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import { activitiesOf, type Harness, startHarness, uniquePrompt } from '../support/harness';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

const lastText = (request: { body: { messages: { content: unknown }[] } }): string => {
  const content = request.body.messages.at(-1)!.content;
  return typeof content === 'string' ? content : (content as { text: string }[]).map((b) => b.text).join('');
};

test('the ticker → price chain runs in the legacy protocol: tools in the prompt, results in <function_results>', async () => {
  const prompt = uniquePrompt('What is the current stock price of General Motors?');
  const id = `legacy-chain-${Date.now()}`;
  const reply = await h.conversations.sendMessage(id, prompt, {
    start: {
      tools: STOCK_TOOLS,
      protocol: 'legacy-xml',
      closeAfterFirstReply: true,
    },
  });
  assert.equal(reply.text, 'The current stock price of General Motors is $38.50.', 'the <answer> is extracted');

  const requests = h.mock.requestsFor(prompt);
  assert.equal(requests.length, 3);
  const first = requests[0]!.body;
  assert.equal(first.tools, undefined, 'no native tools');
  assert.deepEqual(first.stop_sequences, ['</function_calls>']);
  const system = JSON.stringify(first.system);
  assert.match(system, /<tool_name>get_ticker_symbol<\/tool_name>/);
  assert.match(system, /TickerNotFound/, 'raised errors are described');
  assert.match(
    lastText(requests[1]!),
    /<function_results>\s*<result>\s*<tool_name>get_ticker_symbol<\/tool_name>\s*<stdout>\s*GM\s*<\/stdout>/,
  );
  assert.match(lastText(requests[2]!), /<stdout>\s*38\.50\s*<\/stdout>/);
  // The swallowed stop sequence is put back, so the transcript reads as a complete exchange.
  const assistant = requests[1]!.body.messages[1];
  assert.match(JSON.stringify(assistant.content), /<\/invoke>\\n<\/function_calls>/);

  const activities = await activitiesOf(h.client, id);
  assert.deepEqual(
    activities.map((a) => a.type),
    ['callModel', 'get_ticker_symbol', 'callModel', 'get_current_stock_price', 'callModel'],
  );
  assert.equal(activities[1]!.summary, 'get_ticker_symbol(company_name="General Motors")');
});

test('a failing tool goes back as <error> and the model answers', async () => {
  const prompt = uniquePrompt('What is the current stock price of Initech?');
  const reply = await h.conversations.sendMessage(`legacy-error-${Date.now()}`, prompt, {
    start: {
      tools: STOCK_TOOLS,
      protocol: 'legacy-xml',
    },
  });
  const [, second] = h.mock.requestsFor(prompt);
  assert.match(
    lastText(second!),
    /<function_results>\s*<error>\s*get_ticker_symbol: TickerNotFound: no ticker for "Initech/,
  );
  assert.match(reply.text, /TickerNotFound/);
});

test('parameters are coerced from their declared types; a bad one goes back as an error the model can fix', async () => {
  const prompt = uniquePrompt('Buy some GM');
  h.mock.script(prompt, [
    {
      reply: {
        content: [
          {
            type: 'text',
            text: '<function_calls>\n<invoke>\n<tool_name>get_weather</tool_name>\n<parameters>\n<location>San Francisco, CA</location>\n<unit>kelvin</unit>\n</parameters>\n</invoke>\n',
          },
        ],
        stop_reason: 'stop_sequence',
        stop_sequence: '</function_calls>',
      },
    },
    {
      reply: {
        content: [
          {
            type: 'text',
            text: '<function_calls>\n<invoke>\n<tool_name>get_weather</tool_name>\n<parameters>\n<location>San Francisco, CA</location>\n<unit>fahrenheit</unit>\n</parameters>\n</invoke>\n',
          },
        ],
        stop_reason: 'stop_sequence',
        stop_sequence: '</function_calls>',
      },
    },
    { reply: { content: [{ type: 'text', text: '<answer>59°F and foggy.</answer>' }], stop_reason: 'end_turn' } },
  ]);
  const reply = await h.conversations.sendMessage(`legacy-coerce-${Date.now()}`, prompt, {
    start: {
      tools: ['get_weather'],
      protocol: 'legacy-xml',
    },
  });
  assert.equal(reply.text, '59°F and foggy.');
  const [, second, third] = h.mock.requestsFor(prompt);
  assert.match(lastText(second!), /<error>[\s\S]*InvalidInput[\s\S]*unit/);
  assert.match(lastText(third!), /<stdout>\s*\{"temperature":59,"unit":"fahrenheit","conditions":"foggy"\}/);
});

test('a malformed block and an unknown tool come back as errors, never a crash', async () => {
  const prompt = uniquePrompt('Do odd things');
  h.mock.script(prompt, [
    {
      reply: {
        content: [
          {
            type: 'text',
            text: '<function_calls>\n<invoke>\n<parameters>\n<a>1</a>\n</parameters>\n</invoke>\n<invoke>\n<tool_name>get_horoscope</tool_name>\n<parameters>\n<sign>leo</sign>\n</parameters>\n</invoke>\n',
          },
        ],
        stop_reason: 'stop_sequence',
        stop_sequence: '</function_calls>',
      },
    },
    { reply: { content: [{ type: 'text', text: '<answer>Sorry.</answer>' }], stop_reason: 'end_turn' } },
  ]);
  const reply = await h.conversations.sendMessage(`legacy-malformed-${Date.now()}`, prompt, {
    start: {
      tools: STOCK_TOOLS,
      protocol: 'legacy-xml',
    },
  });
  assert.equal(reply.text, 'Sorry.');
  const results = lastText(h.mock.requestsFor(prompt)[1]!);
  assert.match(results, /<error>[\s\S]*Malformed tool call[\s\S]*<\/error>/);
  assert.match(results, /<error>[\s\S]*Unknown tool "get_horoscope"/);
});

test('truncation inside <function_calls> is retried with a higher max_tokens, never executed', async () => {
  const prompt = uniquePrompt('What is the current stock price of General Motors?');
  const id = `legacy-truncated-${Date.now()}`;
  h.mock.script(prompt, [
    {
      reply: {
        content: [
          {
            type: 'text',
            text: '<function_calls>\n<invoke>\n<tool_name>get_ticker_symbol</tool_name>\n<parameters>\n<company_name>Gen',
          },
        ],
        stop_reason: 'max_tokens',
      },
    },
  ]);
  const reply = await h.conversations.sendMessage(id, prompt, {
    start: {
      tools: STOCK_TOOLS,
      protocol: 'legacy-xml',
      maxTokens: 256,
    },
  });
  assert.match(reply.text, /38\.50/);
  const requests = h.mock.requestsFor(prompt);
  assert.deepEqual(
    requests.slice(0, 2).map((r) => r.body.max_tokens),
    [256, 1024],
  );
  const started = h.executions(id).filter((e) => e.event === 'start');
  assert.deepEqual(
    started.map((e) => e.tool),
    ['get_ticker_symbol', 'get_current_stock_price'],
    'only complete calls ran',
  );
});
