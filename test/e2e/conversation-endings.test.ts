// Every way a turn or a conversation ends that the other end-to-end files do not already show: an idle conversation
// closing, an approval nobody gives, each limit, the model's context window, tools the workers do not have. (Ended
// elsewhere: `completed` and `cancelled` in conversation-client, `refused` in conversation-native,
// `max_tokens_exhausted`, a failed turn and the 400 for a prompt too long in faults.)
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { ConversationInput } from '../../common/conversation-input';
import { CONVERSATION_WORKFLOW } from '../../common/conversation-types';
import { withDefaults } from '../../common/options';
import { ConversationStatus } from '../../common/search-attributes';
import { type Harness, lastUserBlocks, startHarness, uniquePrompt } from '../support/harness';
import { callsTools, says } from '../support/script-steps';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

const weather = (location: string) => ({ type: 'tool_use' as const, name: 'get_weather', input: { location } });

describe('the conversation ends', () => {
  test('idle_timeout: nobody writes within the idle timeout after an answer', async () => {
    const id = `idle-${Date.now()}`;
    const reply = await h.conversations.sendMessage(id, uniquePrompt('Hello'), {
      start: { timeouts: { idle: '2 seconds' } },
    });
    assert.equal(reply.status, 'awaiting_user');
    const result = await h.conversations.waitForResult(id);
    assert.equal(result.status, 'idle_timeout');
    assert.equal(result.turns, 1);
    const description = await h.client.workflow.getHandle(id).describe();
    assert.equal(description.typedSearchAttributes.get(ConversationStatus), 'idle_timeout');
  });

  test('limit_reached: more model calls in one turn than the limit allows', async () => {
    const prompt = uniquePrompt('Check the weather again and again');
    const toolTurn = (city: string) => ({ reply: { content: [weather(city)], stop_reason: 'tool_use' as const } });
    h.mock.script(prompt, [toolTurn('Paris'), toolTurn('London'), toolTurn('Tokyo')]);
    const id = `model-limit-${Date.now()}`;
    const reply = await h.conversations.sendMessage(id, prompt, {
      start: {
        tools: ['get_weather'],
        limits: { maxModelCallsPerTurn: 2 },
      },
    });
    assert.equal(reply.status, 'limit_reached');
    assert.equal(reply.text, 'Stopped after 2 model calls (limit 2).');
    assert.equal(h.mock.requestsFor(prompt).length, 2, 'no third model call');
    assert.equal((await h.conversations.waitForResult(id)).status, 'limit_reached');
  });

  test('limit_reached: a reply asks for more tool calls than one turn allows, and none of them runs', async () => {
    const prompt = uniquePrompt('Weather everywhere');
    h.mock.script(prompt, [
      { reply: { content: [weather('Paris'), weather('London'), weather('Tokyo')], stop_reason: 'tool_use' } },
    ]);
    const id = `tool-limit-${Date.now()}`;
    const reply = await h.conversations.sendMessage(id, prompt, {
      start: {
        tools: ['get_weather'],
        limits: { maxToolCallsPerTurn: 2 },
      },
    });
    assert.equal(reply.status, 'limit_reached');
    assert.equal(reply.text, 'Stopped: the model asked for more than 2 tool calls in one turn.');
    assert.equal(h.executions(id).length, 0);
  });

  test('limit_reached: the conversation outgrows what one run can hand to the next', async () => {
    const prompt = uniquePrompt('Tell me a long story, then check the weather');
    h.mock.script(prompt, [
      // 4,000 CJK characters: 12,000 bytes in UTF-8, over the 10,000-byte limit (a character count would miss it).
      { reply: { content: [{ type: 'text', text: '話'.repeat(4_000) }, weather('Paris')], stop_reason: 'tool_use' } },
      says('never asked'),
    ]);
    const id = `size-limit-${Date.now()}`;
    const reply = await h.conversations.sendMessage(id, prompt, {
      start: {
        tools: ['get_weather'],
        limits: { maxCarriedBytes: 10_000 },
      },
    });
    assert.equal(reply.status, 'limit_reached');
    assert.match(
      reply.text,
      /^The conversation reached \d+ bytes, over its limit of 10000; start a new conversation\.$/,
    );
    assert.equal(h.mock.requestsFor(prompt).length, 1, 'the model is not called with a state too large to carry');
  });

  test('context_window_exceeded: the model says the conversation no longer fits in its context window', async () => {
    const prompt = uniquePrompt('A very long conversation');
    h.mock.script(prompt, [
      { reply: { content: [{ type: 'text', text: 'Partial' }], stop_reason: 'model_context_window_exceeded' } },
    ]);
    const id = `context-${Date.now()}`;
    const reply = await h.conversations.sendMessage(id, prompt, { start: {} });
    assert.equal(reply.status, 'context_window_exceeded');
    assert.equal(reply.stopReason, 'model_context_window_exceeded');
    assert.equal((await h.conversations.waitForResult(id)).status, 'context_window_exceeded');
  });

  test('failed: the conversation names a tool no worker registers (started without the client, which would refuse it)', async () => {
    const id = `unknown-tools-${Date.now()}`;
    const input: ConversationInput = {
      options: withDefaults({ tools: ['get_weather', 'launch_rocket'] }),
      firstMessage: 'Hi',
    };
    const handle = await h.client.workflow.start(CONVERSATION_WORKFLOW, {
      taskQueue: h.taskQueue,
      workflowId: id,
      args: [input],
    });
    await assert.rejects(handle.result(), (err: unknown) => {
      assert.ok(err instanceof WorkflowFailedError && err.cause instanceof ApplicationFailure);
      assert.equal(err.cause.type, 'UnknownTools');
      assert.match(err.cause.message, /^Unknown tools: launch_rocket\. The workers register: get_weather\.$/);
      return true;
    });
    assert.equal((await handle.describe()).typedSearchAttributes.get(ConversationStatus), 'failed');
  });
});

describe('a tool call ends without running', () => {
  test('ApprovalTimeout: nobody approves in time; the model reads why and answers', async () => {
    const prompt = uniquePrompt('Buy one GM share');
    h.mock.script(prompt, [
      callsTools(['buy_stock', { symbol: 'GM', quantity: 1 }]),
      says('Nobody approved the order, so I did not place it.'),
    ]);
    const id = `approval-timeout-${Date.now()}`;
    const reply = await h.conversations.sendMessage(id, prompt, {
      start: {
        tools: ['buy_stock'],
        timeouts: { approval: '1 second' },
      },
    });
    assert.equal(reply.status, 'awaiting_user');
    assert.equal(reply.text, 'Nobody approved the order, so I did not place it.');
    const [result] = lastUserBlocks(h.mock.requestsFor(prompt)[1]!);
    assert.equal(result!.is_error, true);
    assert.equal(
      result!.content,
      'ApprovalTimeout: nobody approved buy_stock(symbol="GM", quantity=1) within 1 second.',
    );
    assert.equal(h.executions(id, 'buy_stock').length, 0, 'the order never ran');
    assert.deepEqual((await h.conversations.getState(id)).pendingApprovals, []);
  });
});
