// Server tool calls left open: a `server_tool_use` whose result never came. The API leaves one open only where its
// result will still come — the final message of a paused turn sent back to continue, or a message that stopped for the
// conversation's own tool calls (the reply after their results opens with it) — and refuses it with a 400 anywhere
// else, on every later request. The local Messages API refuses the same (validate-request.ts), so each conversation
// here would fail its next turn if the orchestrator sent the call on: a reply that ended with a call left open, a
// budget that stopped the turn right after a `pause_turn`, and one that stopped it after the tool results of a
// deferring reply. Real Temporal dev server, real SDK, the local Messages API.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import type { RecordedRequest, ScriptUsage } from '../../testing/messages-api/types';
import { type Harness, startHarness, uniquePrompt } from '../support/harness';

type Block = Record<string, unknown> & { type: string };
type Message = { role: string; content: Block[] | string };

/** 1,100 tokens a call: a turn budget of 2,000 lets one call through and refuses the next. */
const USAGE: ScriptUsage = { input_tokens: 1_000, output_tokens: 100 };
const TURN_BUDGET = { perTurn: { tokens: 2_000 } };

const SEARCH = { type: 'server_tool_use', name: 'web_search', input: { query: 'GM stock price' } } as const;

function messagesOf(request: RecordedRequest | undefined): Message[] {
  return (request?.body.messages ?? []) as Message[];
}

/** Each message's role and block types, `user:text` for plain text. */
function shape(messages: readonly { role: string; content: string | readonly { type: string }[] }[]): string[] {
  return messages.map((m) =>
    typeof m.content === 'string' ? `${m.role}:text` : `${m.role}:${m.content.map((b) => b.type).join('+')}`,
  );
}

describe('server tool calls left open', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h?.close());

  const id = (name: string) => `open-server-call-${name}-${randomUUID().slice(0, 8)}`;

  test('a reply that ended with a server tool call and no result: the call leaves the transcript, the next turn is answered', async () => {
    const prompt = uniquePrompt('What is GM trading at?');
    h.mock.script(prompt, [
      {
        reply: {
          content: [
            { type: 'text', text: 'Let me search.' },
            { ...SEARCH, id: 'srvtoolu_01lost' },
            { type: 'text', text: 'GM trades at $38.50.' },
          ],
          stop_reason: 'end_turn',
        },
      },
      { reply: { content: [{ type: 'text', text: 'Ford trades at $12.' }], stop_reason: 'end_turn' } },
    ]);
    const conversation = id('ended');
    const first = await h.conversations.sendMessage(conversation, prompt, {
      start: { tools: [], serverTools: { webSearch: {} } },
    });
    assert.equal(first.status, 'awaiting_user');
    assert.equal(first.text, 'Let me search.\nGM trades at $38.50.');

    const next = await h.conversations.sendMessage(conversation, 'And Ford?');
    assert.equal(next.status, 'awaiting_user', next.text);
    assert.equal(next.text, 'Ford trades at $12.');
    const sent = messagesOf(h.mock.requestsFor(prompt)[1]);
    assert.deepEqual(shape(sent), ['user:text', 'assistant:text+text', 'user:text']);
    assert.deepEqual(shape(await h.conversations.getTranscript(conversation)), [
      'user:text',
      'assistant:text+text',
      'user:text',
      'assistant:text',
    ]);
  });

  test('a budget that stops the turn right after a pause_turn: the next message closes the paused turn and is answered', async () => {
    const prompt = uniquePrompt('Research what GM trades at.');
    h.mock.script(prompt, [
      {
        reply: {
          content: [
            { type: 'text', text: 'Searching the web.' },
            { ...SEARCH, id: 'srvtoolu_01paused' },
          ],
          stop_reason: 'pause_turn',
          usage: USAGE,
        },
      },
      { reply: { content: [{ type: 'text', text: 'Ford trades at $12.' }], stop_reason: 'end_turn', usage: USAGE } },
    ]);
    const conversation = id('paused');
    const stopped = await h.conversations.sendMessage(conversation, prompt, {
      start: { tools: [], serverTools: { webSearch: {} }, budget: TURN_BUDGET },
    });
    assert.equal(stopped.status, 'budget_exhausted');
    assert.equal(stopped.modelCalls, 1, 'the paused turn was not continued');
    // Until a message comes the paused turn stays as it came: nothing is decided for it before that.
    assert.deepEqual(shape(await h.conversations.getTranscript(conversation)), [
      'user:text',
      'assistant:text+server_tool_use',
    ]);

    const next = await h.conversations.sendMessage(conversation, 'Never mind the search. What about Ford?');
    assert.equal(next.status, 'awaiting_user', next.text);
    assert.equal(next.text, 'Ford trades at $12.');
    const sent = messagesOf(h.mock.requestsFor(prompt)[1]);
    assert.deepEqual(shape(sent), ['user:text', 'assistant:text', 'user:text'], 'the open call is gone');
    assert.deepEqual(sent[1]!.content, [{ type: 'text', text: 'Searching the web.' }]);
  });

  test('a paused turn that was nothing but an open call: it closes as an empty reply, and the next turn is answered', async () => {
    const prompt = uniquePrompt('Search for what GM trades at.');
    h.mock.script(prompt, [
      { reply: { content: [{ ...SEARCH, id: 'srvtoolu_01alone' }], stop_reason: 'pause_turn', usage: USAGE } },
      { reply: { content: [{ type: 'text', text: 'Ford trades at $12.' }], stop_reason: 'end_turn', usage: USAGE } },
    ]);
    const conversation = id('alone');
    const stopped = await h.conversations.sendMessage(conversation, prompt, {
      start: { tools: [], serverTools: { webSearch: {} }, budget: TURN_BUDGET },
    });
    assert.equal(stopped.status, 'budget_exhausted');

    const next = await h.conversations.sendMessage(conversation, 'What about Ford?');
    assert.equal(next.text, 'Ford trades at $12.');
    const sent = messagesOf(h.mock.requestsFor(prompt)[1]);
    assert.deepEqual(shape(sent), ['user:text', 'assistant:text', 'user:text']);
    assert.deepEqual(sent[1]!.content, [{ type: 'text', text: '(empty reply)' }]);
  });

  test('a server tool call deferred by the conversation’s own tool call stays until its result comes in the next reply', async () => {
    const prompt = uniquePrompt('Fetch the GM investor page and look up the ticker.');
    const fetched = {
      type: 'web_fetch_tool_result',
      tool_use_id: 'srvtoolu_01deferred',
      content: { type: 'web_fetch_tool_error', error_code: 'url_not_accessible' },
    } as const;
    h.mock.script(prompt, [
      {
        reply: {
          content: [
            {
              type: 'server_tool_use',
              id: 'srvtoolu_01deferred',
              name: 'web_fetch',
              input: { url: 'https://investor.gm.com' },
            },
            { type: 'tool_use', name: 'get_ticker_symbol', input: { company_name: 'General Motors' } },
          ],
          stop_reason: 'tool_use',
        },
      },
      // The API runs the deferred fetch once the tool's result is in: the reply opens with its result.
      { reply: { content: [fetched, { type: 'text', text: 'GM it is.' }], stop_reason: 'end_turn' } },
      { reply: { content: [{ type: 'text', text: 'You are welcome.' }], stop_reason: 'end_turn' } },
    ]);
    const conversation = id('deferred');
    const first = await h.conversations.sendMessage(conversation, prompt, {
      start: { tools: STOCK_TOOLS, serverTools: { webFetch: {} } },
    });
    assert.equal(first.text, 'GM it is.');
    const next = await h.conversations.sendMessage(conversation, 'Thanks.');
    assert.equal(next.text, 'You are welcome.');
    const [, second, third] = h.mock.requestsFor(prompt);
    assert.deepEqual(shape(messagesOf(second)), [
      'user:text',
      'assistant:server_tool_use+tool_use',
      'user:tool_result',
    ]);
    assert.deepEqual(shape(messagesOf(third)), [
      'user:text',
      'assistant:server_tool_use+tool_use',
      'user:tool_result',
      'assistant:web_fetch_tool_result+text',
      'user:text',
    ]);
  });

  test('a budget that stops the turn after the tool results of a deferring reply: the next message closes the deferred call', async () => {
    const prompt = uniquePrompt('Fetch the GM investor page and look up the ticker, on a budget.');
    h.mock.script(prompt, [
      {
        reply: {
          content: [
            {
              type: 'server_tool_use',
              id: 'srvtoolu_01stopped',
              name: 'web_fetch',
              input: { url: 'https://investor.gm.com' },
            },
            { type: 'tool_use', name: 'get_ticker_symbol', input: { company_name: 'General Motors' } },
          ],
          stop_reason: 'tool_use',
          usage: USAGE,
        },
      },
      { reply: { content: [{ type: 'text', text: 'GM, as the tool said.' }], stop_reason: 'end_turn', usage: USAGE } },
    ]);
    const conversation = id('deferred-stopped');
    const stopped = await h.conversations.sendMessage(conversation, prompt, {
      start: { tools: STOCK_TOOLS, serverTools: { webFetch: {} }, budget: TURN_BUDGET },
    });
    assert.equal(stopped.status, 'budget_exhausted');
    assert.equal(stopped.toolCalls, 1);

    // The message joins the tool results; text after them ends the assistant turn, so the open call must go.
    const next = await h.conversations.sendMessage(conversation, 'Go on.');
    assert.equal(next.text, 'GM, as the tool said.');
    const sent = messagesOf(h.mock.requestsFor(prompt)[1]);
    assert.deepEqual(shape(sent), ['user:text', 'assistant:tool_use', 'user:tool_result+text']);
  });
});
