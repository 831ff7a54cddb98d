// The client API as its users rely on it: every call, the bad ones included, long multi-turn conversations,
// approvals, continue-as-new in the middle of a chain, and history that grows linearly.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ConversationError } from '../../client/errors';
import { digest } from '../../common/digest';
import { ConversationStatus } from '../../common/search-attributes';
import { STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import { type Harness, startHarness, uniquePrompt } from '../support/harness';
import { callsTools, says } from '../support/script-steps';
import { stateAwaitingApproval } from '../support/awaiting-approval';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

const isCode = (code: string) => (err: unknown) => err instanceof ConversationError && err.code === code;

describe('starting and continuing conversations', () => {
  test('startConversation with a first message; awaitTurn gives its reply; the state and transcript are queryable', async () => {
    const id = await h.conversations.startConversation({
      tools: STOCK_TOOLS,
      firstMessage: 'What is the current stock price of General Motors?',
    });
    const reply = await h.conversations.awaitTurn(id, 1);
    assert.match(reply.text, /38\.50/);
    const state = await h.conversations.getState(id);
    assert.equal(state.status, 'awaiting_user');
    assert.equal(state.turns, 1);
    assert.equal(state.toolCalls, 2);
    const transcript = await h.conversations.getTranscript(id);
    assert.equal(transcript.length, 6);
    assert.deepEqual(
      transcript.map((m) => m.role),
      ['user', 'assistant', 'user', 'assistant', 'user', 'assistant'],
    );
  });

  test('an id names one conversation for ever: starting it again is refused, running or closed, and nothing is dropped silently', async () => {
    const id = `one-id-${Date.now()}`;
    await h.conversations.startConversation({ id, firstMessage: 'Hello there' });
    const again = (err: ConversationError) => err.code === 'already_started' && /already exists/.test(err.message);
    await assert.rejects(h.conversations.startConversation({ id, firstMessage: 'A different first message' }), again);
    await h.conversations.awaitTurn(id, 1);
    assert.deepEqual(
      (await h.conversations.getTranscript(id)).filter((m) => m.role === 'user').map((m) => m.content),
      ['Hello there'],
    );
    const { runId } = await h.client.workflow.getHandle(id).describe();
    await h.conversations.end(id);
    await h.conversations.waitForResult(id);
    // Closed: neither a start nor an update-with-start makes a blank conversation under the same id (a message to
    // it is refused as to any ended conversation).
    await assert.rejects(h.conversations.startConversation({ id, firstMessage: 'Hello again' }), again);
    await assert.rejects(
      h.conversations.sendMessage(id, 'Hello again', { start: {} }),
      (err: ConversationError) => err.code === 'rejected' && /has ended \(completed\)/.test(err.message),
    );
    assert.equal((await h.client.workflow.getHandle(id).describe()).runId, runId, 'no new run under the old id');
  });

  test('a 20-turn conversation is one workflow that keeps every message', async () => {
    const id = `twenty-${Date.now()}`;
    for (let turn = 1; turn <= 20; turn++) {
      const reply = await h.conversations.sendMessage(id, `Message number ${turn}`, {
        start: turn === 1 ? { tools: [] } : undefined,
      });
      assert.equal(reply.turn, turn);
      assert.match(reply.text, new RegExp(`Message number ${turn}`));
    }
    const state = await h.conversations.getState(id);
    assert.equal(state.turns, 20);
    assert.equal(state.transcriptLength, 40);
    await h.conversations.end(id);
    const result = await h.conversations.waitForResult(id);
    assert.equal(result.status, 'completed');
    assert.equal(result.turns, 20);
  });

  test('list finds conversations by status and model', async () => {
    const id = `listed-${Date.now()}`;
    await h.conversations.sendMessage(id, 'Hello', { start: { model: 'claude-haiku-4-5', tools: [] } });
    let found: Awaited<ReturnType<typeof h.conversations.list>> = [];
    for (let i = 0; i < 50 && !found.some((c) => c.id === id); i++) {
      found = await h.conversations.list({
        model: 'claude-haiku-4-5',
        status: 'awaiting_user',
        startedAfter: new Date(Date.now() - 60_000),
      });
      await new Promise((r) => setTimeout(r, 200)); // visibility is eventually consistent
    }
    const mine = found.find((c) => c.id === id);
    assert.ok(mine, 'the conversation is listed');
    assert.equal(mine.model, 'claude-haiku-4-5');
    assert.equal(mine.status, 'awaiting_user');
    assert.equal(mine.turns, 1);
  });

  test('cancel stops a conversation', async () => {
    const id = await h.conversations.startConversation({ tools: [] });
    await h.conversations.cancel(id);
    await assert.rejects(h.conversations.waitForResult(id), isCode('conversation_failed'));
    const description = await h.conversations.handle(id).describe();
    assert.equal(description.status.name, 'CANCELLED');
    assert.equal(description.typedSearchAttributes.get(ConversationStatus), 'cancelled');
  });
});

describe('bad calls get a typed error and change nothing', () => {
  test('an empty message', async () => {
    await assert.rejects(h.conversations.sendMessage('anything', '   '), isCode('invalid_message'));
  });
  test('an unknown tool name, before anything starts', async () => {
    const id = `bad-tool-${Date.now()}`;
    await assert.rejects(
      h.conversations.startConversation({ id, tools: ['get_horoscope'] }),
      (err: ConversationError) => {
        assert.equal(err.code, 'invalid_options');
        assert.match(err.message, /unknown tool "get_horoscope"/);
        return true;
      },
    );
    await assert.rejects(h.conversations.getState(id), isCode('not_found'));
  });
  test('invalid options: a tool_choice naming a tool not offered, sampling parameters, a bad duration', async () => {
    await assert.rejects(
      h.conversations.startConversation({
        tools: ['get_weather'],
        toolChoice: { type: 'tool', name: 'get_ticker_symbol' },
      }),
      /not in tools/,
    );
    await assert.rejects(
      h.conversations.startConversation({ temperature: 0.5 } as never),
      /temperature is no longer accepted/,
    );
    await assert.rejects(h.conversations.startConversation({ timeouts: { idle: 'soon' } }), /duration/);
  });
  test('sending to a conversation that does not exist', async () => {
    await assert.rejects(h.conversations.sendMessage(`missing-${Date.now()}`, 'Hello'), isCode('not_found'));
  });
  test('sending to a finished conversation is rejected (it exists, it has ended), not not_found', async () => {
    const id = `finished-${Date.now()}`;
    await h.conversations.sendMessage(id, 'Hello', { start: { tools: [], closeAfterFirstReply: true } });
    await h.conversations.waitForResult(id);
    const ended = (err: unknown) => {
      assert.ok(err instanceof ConversationError, String(err));
      assert.equal(err.code, 'rejected', err.message);
      assert.equal(err.message, `Conversation "${id}" has ended (completed); start a new one.`);
      return true;
    };
    await assert.rejects(h.conversations.sendMessage(id, 'Again'), ended);
    await assert.rejects(h.conversations.submitMessage(id, 'Again'), ended);
    // With `start`, a closed conversation is not started again: the same answer.
    await assert.rejects(h.conversations.sendMessage(id, 'Again', { start: { tools: [] } }), ended);
    await assert.rejects(
      h.conversations.approveToolCall(id, { callId: 'c', argumentsDigest: 'd', approve: true }),
      ended,
    );
    await assert.rejects(h.conversations.end(id), ended);
    // Reading it still works.
    assert.equal((await h.conversations.getState(id)).status, 'completed');
  });
  test('awaiting a turn that was never sent', async () => {
    const id = await h.conversations.startConversation({ tools: [] });
    await assert.rejects(h.conversations.awaitTurn(id, 7), isCode('rejected'));
    await h.conversations.end(id);
  });
});

describe('tools that need approval', () => {
  test('an approved call runs with exactly the approved arguments', async () => {
    const prompt = uniquePrompt('Buy 3 GM');
    h.mock.script(prompt, [callsTools(['buy_stock', { symbol: 'GM', quantity: 3 }]), says('Bought.')]);
    const id = `approve-${Date.now()}`;
    const reply = h.conversations.sendMessage(id, prompt, { start: { tools: ['buy_stock'] } });
    const state = await stateAwaitingApproval(h.conversations, id);
    assert.equal(state.status, 'awaiting_approval');
    const [pending] = state.pendingApprovals;
    assert.deepEqual(pending!.input, { symbol: 'GM', quantity: 3 });
    assert.equal(pending!.argumentsDigest, digest({ name: 'buy_stock', input: { symbol: 'GM', quantity: 3 } }));
    // An approval for other arguments is refused and changes nothing.
    await assert.rejects(
      h.conversations.approveToolCall(id, { callId: pending!.callId, argumentsDigest: 'not-it', approve: true }),
      isCode('rejected'),
    );
    await h.conversations.approveToolCall(id, {
      callId: pending!.callId,
      argumentsDigest: pending!.argumentsDigest,
      approve: true,
    });
    assert.equal((await reply).text, 'Bought.');
    const orders = h.executions(id, 'buy_stock').filter((e) => e.event === 'finish');
    assert.equal(orders.length, 1);
  });

  test('a rejected call never runs and the model is told why', async () => {
    const prompt = uniquePrompt('Buy 5 TSLA');
    h.mock.script(prompt, [
      {
        reply: {
          content: [{ type: 'tool_use', name: 'buy_stock', input: { symbol: 'TSLA', quantity: 5 } }],
          stop_reason: 'tool_use',
        },
      },
      { reply: { content: [{ type: 'text', text: 'Understood, no order.' }], stop_reason: 'end_turn' } },
    ]);
    const id = `reject-${Date.now()}`;
    const reply = h.conversations.sendMessage(id, prompt, { start: { tools: ['buy_stock'] } });
    const [pending] = (await stateAwaitingApproval(h.conversations, id)).pendingApprovals;
    await h.conversations.approveToolCall(id, {
      callId: pending!.callId,
      argumentsDigest: pending!.argumentsDigest,
      approve: false,
      reason: 'too risky',
    });
    assert.equal((await reply).text, 'Understood, no order.');
    const request = h.mock.requestsFor(prompt)[1]!;
    const [result] = request.body.messages.at(-1).content;
    assert.equal(result.is_error, true);
    assert.match(result.content, /^Rejected: the user did not allow buy_stock\(symbol="TSLA", quantity=5\): too risky/);
    assert.equal(h.executions(id).length, 0);
  });
});

describe('continue-as-new', () => {
  test('a chain continues in a new run in the middle of its tool calls; the caller still gets the reply', async () => {
    const prompt = uniquePrompt('Check the weather in six cities');
    const cities = ['Paris', 'Tokyo', 'London', 'Jakarta', 'New York', 'San Francisco'];
    h.mock.script(prompt, [
      ...cities.map((location) => ({
        reply: {
          content: [{ type: 'tool_use' as const, name: 'get_weather', input: { location } }],
          stop_reason: 'tool_use' as const,
        },
      })),
      { reply: { content: [{ type: 'text', text: 'All six checked.' }], stop_reason: 'end_turn' } },
    ]);
    const id = `can-${Date.now()}`;
    const reply = await h.conversations.sendMessage(id, prompt, {
      start: {
        tools: ['get_weather'],
        continueAsNewAfterModelCalls: 2,
      },
    });
    assert.equal(reply.text, 'All six checked.');
    assert.equal(reply.toolCalls, 6);
    const state = await h.conversations.getState(id);
    assert.ok(state.runs >= 3, `ran in ${state.runs} runs`);
    const transcript = await h.conversations.getTranscript(id);
    assert.equal(transcript.length, 14, 'nothing lost across runs');
    // Every tool ran exactly once across all runs.
    const runs = h.executions(id).filter((e) => e.event === 'start');
    assert.equal(runs.length, 6);
  });
});

describe('history growth', () => {
  async function historyBytesAfter(steps: number): Promise<number> {
    const prompt = uniquePrompt(`Chain of ${steps} steps`);
    h.mock.script(prompt, [
      ...Array.from({ length: steps }, (_, i) => ({
        reply: {
          content: [{ type: 'tool_use' as const, name: 'get_weather', input: { location: i % 2 ? 'Paris' : 'Tokyo' } }],
          stop_reason: 'tool_use' as const,
        },
      })),
      { reply: { content: [{ type: 'text', text: 'Done.' }], stop_reason: 'end_turn' } },
    ]);
    const id = `growth-${steps}-${Date.now()}`;
    await h.conversations.sendMessage(id, prompt, {
      start: { tools: ['get_weather'], limits: { maxModelCallsPerTurn: 1000 } },
    });
    // The server's own measure, the one its 50 MB limit applies to.
    const { historySize } = await h.client.workflow.getHandle(id).describe();
    assert.ok(historySize, 'the server reports the history size');
    return historySize;
  }

  test('bytes per chain step do not grow with the length of the conversation', async (t) => {
    const at10 = await historyBytesAfter(10);
    const at40 = await historyBytesAfter(40);
    const perStepEarly = at10 / 10;
    const perStepLate = (at40 - at10) / 30;
    t.diagnostic(
      `history: ${at10} B after 10 steps, ${at40} B after 40 (${perStepEarly.toFixed(0)} → ${perStepLate.toFixed(0)} B/step)`,
    );
    // Re-sending the transcript each turn would make later steps cost several times the early ones.
    assert.ok(
      perStepLate < perStepEarly * 1.25,
      `early ${perStepEarly.toFixed(0)} B/step, late ${perStepLate.toFixed(0)} B/step`,
    );
  });
});
