// Cost and budgets end to end (real dev server, real worker, the SDK against the local Messages API): what the
// ticker → price chain costs in the state, the result and the ConversationCostUsd search attribute, and budgets that
// stop a chain before the call that would go over, per turn and per conversation, in both protocols. The local server
// answers with pinned usage, so every figure is known in advance.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { ConversationError } from '../../client/errors';
import { CONVERSATION_WORKFLOW } from '../../common/conversation-types';
import { FailureType } from '../../common/failure-types';
import { DEFAULT_MODEL } from '../../common/options';
import { costUsd, PUBLISHED_PRICES } from '../../common/pricing';
import { ConversationCostUsd } from '../../common/search-attributes';
import { STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import type { ScriptStep, ScriptUsage } from '../../testing/messages-api/types';
import { activitiesOf, type Harness, startHarness, uniquePrompt } from '../support/harness';
import { assertNear } from '../support/assert-near';
import { PRICES, usageOf } from '../support/test-prices';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

/** Every call: 1,000 input tokens and 100 output tokens, nothing cached (1,100 tokens, $0.0045 at PRICES). */
const PLAIN: ScriptUsage = {
  input_tokens: 1_000,
  output_tokens: 100,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
};
type Protocol = 'native' | 'legacy-xml';

function toolCall(protocol: Protocol, name: string, parameter: string, value: string, usage: ScriptUsage): ScriptStep {
  if (protocol === 'native') {
    return {
      reply: { content: [{ type: 'tool_use', name, input: { [parameter]: value } }], stop_reason: 'tool_use', usage },
    };
  }
  const text = `<function_calls>\n<invoke>\n<tool_name>${name}</tool_name>\n<parameters>\n<${parameter}>${value}</${parameter}>\n</parameters>\n</invoke>\n`;
  return {
    reply: {
      content: [{ type: 'text', text }],
      stop_reason: 'stop_sequence',
      stop_sequence: '</function_calls>',
      usage,
    },
  };
}

/** The ticker → price chain, each of its three replies with `usage`. */
function scriptChain(prompt: string, protocol: Protocol, usage: ScriptUsage = PLAIN): void {
  const answer = 'The current stock price of General Motors is $38.50.';
  h.mock.script(prompt, [
    toolCall(protocol, 'get_ticker_symbol', 'company_name', 'General Motors', usage),
    toolCall(protocol, 'get_current_stock_price', 'symbol', 'GM', usage),
    {
      reply: {
        content: [{ type: 'text', text: protocol === 'native' ? answer : `<answer>${answer}</answer>` }],
        stop_reason: 'end_turn',
        usage,
      },
    },
  ]);
}

const costAttribute = async (id: string) =>
  (await h.client.workflow.getHandle(id).describe()).typedSearchAttributes.get(ConversationCostUsd);

describe('cost', () => {
  test('the chain costs its three calls, cache writes and reads included, across continue-as-new', async () => {
    const prompt = uniquePrompt('What is the current stock price of General Motors?');
    const usage = {
      input_tokens: 50,
      output_tokens: 100,
      cache_creation_input_tokens: 2_000,
      cache_read_input_tokens: 10_000,
    };
    scriptChain(prompt, 'native', usage);
    const id = `cost-chain-${Date.now()}`;
    const reply = await h.conversations.sendMessage(id, prompt, {
      start: {
        tools: STOCK_TOOLS,
        prices: PRICES,
        continueAsNewAfterModelCalls: 1, // a new run after every call: the cost is carried
        closeAfterFirstReply: true,
      },
    });
    const perCall = (50 * 3 + 100 * 15 + 2_000 * 3.75 + 10_000 * 0.3) / 1e6;
    assert.equal(reply.modelCalls, 3);
    assertNear(reply.costUsd, 3 * perCall);
    const result = await h.conversations.waitForResult(id);
    assertNear(result.costUsd, 3 * perCall);
    assertNear((await h.conversations.getState(id)).costUsd, 3 * perCall);
    assertNear(await costAttribute(id), 3 * perCall);
    assert.ok((await h.conversations.getState(id)).runs >= 3, 'it did continue as new');
  });

  test('without a prices option the published price is used; the event stream prices each call and the turn', async () => {
    const prompt = uniquePrompt('What is the current stock price of General Motors?');
    scriptChain(prompt, 'native');
    const id = `cost-table-${Date.now()}`;
    const events = [];
    for await (const { event } of h.conversations.streamMessage(id, prompt, { start: { tools: STOCK_TOOLS } }))
      events.push(event);
    const perCall = costUsd(usageOf(PLAIN), PUBLISHED_PRICES[DEFAULT_MODEL]!);
    const calls = events.flatMap((e) => (e.type === 'model_call_finished' ? [e.costUsd] : []));
    assert.equal(calls.length, 3);
    for (const cost of calls) assertNear(cost, perCall);
    const finished = events.at(-1)!;
    assert.ok(finished.type === 'turn_finished');
    assertNear(finished.costUsd, 3 * perCall);
    assertNear((await h.conversations.getState(id)).costUsd, 3 * perCall);
    assertNear(await costAttribute(id), 3 * perCall);
  });

  test('a model nobody priced has an unknown cost (null, attribute unset), and a USD budget will not spend on it', async () => {
    const prompt = uniquePrompt('What is the current stock price of General Motors?');
    scriptChain(prompt, 'native');
    const id = `cost-unknown-${Date.now()}`;
    const reply = await h.conversations.sendMessage(id, prompt, {
      start: { tools: STOCK_TOOLS, model: 'claude-unpriced-1' },
    });
    assert.equal(reply.modelCalls, 3);
    assert.equal(reply.costUsd, null);
    assert.equal((await h.conversations.getState(id)).costUsd, null);
    assert.equal(await costAttribute(id), undefined);

    const guarded = uniquePrompt('What is the current stock price of General Motors?');
    const stopped = await h.conversations.sendMessage(`cost-unknown-usd-${Date.now()}`, guarded, {
      start: {
        tools: STOCK_TOOLS,
        model: 'claude-unpriced-1',
        budget: { perTurn: { usd: 1 } },
      },
    });
    assert.equal(stopped.status, 'budget_exhausted');
    assert.match(stopped.text, /cost of claude-unpriced-1 is unknown/);
    assert.equal(h.mock.requestsFor(guarded).length, 0);
  });
});

for (const protocol of ['native', 'legacy-xml'] as const) {
  describe(`a turn budget (${protocol})`, () => {
    test('stops the chain before the third call; the tool results stay and the next turn goes on', async () => {
      const prompt = uniquePrompt('What is the current stock price of General Motors?');
      scriptChain(prompt, protocol);
      const id = `budget-turn-${protocol}-${Date.now()}`;
      // Before call 3: 2,200 spent + about 1,100 for the call > 3,000. Before call 2: 1,100 + about 1,150 fits.
      const reply = await h.conversations.sendMessage(id, prompt, {
        start: {
          tools: STOCK_TOOLS,
          protocol,
          budget: { perTurn: { tokens: 3_000 } },
        },
      });
      assert.equal(reply.status, 'budget_exhausted');
      assert.equal(reply.modelCalls, 2);
      assert.equal(reply.toolCalls, 2);
      assert.match(reply.text, /this turn has used 2200 tokens .* over its limit of 3000 tokens/);
      assert.match(reply.text, /stopped after 2 model calls and 2 tool calls/);
      assert.equal(h.mock.requestsFor(prompt).length, 2, 'the model was not called a third time');

      const transcript = await h.conversations.getTranscript(id);
      assert.equal(transcript.length, 5);
      assert.match(JSON.stringify(transcript.at(-1)), /38\.50/, 'the price the second tool fetched is kept');
      assert.equal((await h.conversations.getState(id)).status, 'awaiting_user', 'a turn budget leaves it open');

      // The next turn has a budget of its own; its request carries the kept result, which the API accepts.
      const next = await h.conversations.sendMessage(id, 'Go on.');
      assert.equal(next.status, 'awaiting_user');
      assert.match(next.text, /38\.50/);
      const third = h.mock.requestsFor(prompt)[2]!;
      assert.match(JSON.stringify(third.body.messages.at(-1)), /38\.50.*Go on\./);
    });
  });
}

describe('a conversation budget', () => {
  test('lets turns go on until the next call would pass it, then ends the conversation', async () => {
    const prompt = uniquePrompt('Tell me something.');
    const say = (text: string): ScriptStep => ({
      reply: { content: [{ type: 'text', text }], stop_reason: 'end_turn', usage: PLAIN },
    });
    h.mock.script(prompt, [say('One.'), say('Two.'), say('Three.')]);
    const id = `budget-conversation-${Date.now()}`;
    const options = { budget: { perConversation: { tokens: 3_000 }, perTurn: { tokens: 2_000 } } };
    assert.equal((await h.conversations.sendMessage(id, prompt, { start: options })).text, 'One.');
    assert.equal((await h.conversations.sendMessage(id, 'And?')).text, 'Two.', 'each turn is within its own limit');
    const third = await h.conversations.sendMessage(id, 'And then?');
    assert.equal(third.status, 'budget_exhausted');
    assert.match(third.text, /the conversation has used 2200 tokens .* over its limit of 3000 tokens/);
    assert.equal(h.mock.requestsFor(prompt).length, 2);

    const result = await h.conversations.waitForResult(id);
    assert.equal(result.status, 'budget_exhausted');
    await assert.rejects(h.conversations.sendMessage(id, 'Hello?'), ConversationError);
  });

  test('in USD: the chain stops before the call that would pass $0.01', async () => {
    const prompt = uniquePrompt('What is the current stock price of General Motors?');
    scriptChain(prompt, 'native');
    // $0.0045 a call: before call 3, $0.009 + about $0.002 > $0.01.
    const reply = await h.conversations.sendMessage(`budget-usd-${Date.now()}`, prompt, {
      start: {
        tools: STOCK_TOOLS,
        prices: PRICES,
        budget: { perConversation: { usd: 0.01 } },
        continueAsNewAfterModelCalls: 1, // spent and the last call's usage are carried to each new run
      },
    });
    assert.equal(reply.status, 'budget_exhausted');
    assertNear(reply.costUsd, 0.009);
    assert.match(reply.text, /has spent \$0\.0090 .* over its limit of \$0\.0100/);
    assert.equal(h.mock.requestsFor(prompt).length, 2);
  });
});

describe('the count_tokens estimate', () => {
  test('counts each next call with the API before making it, and stops the chain at the same place', async () => {
    const prompt = uniquePrompt('What is the current stock price of General Motors?');
    scriptChain(prompt, 'native');
    const id = `budget-count-${Date.now()}`;
    const reply = await h.conversations.sendMessage(id, prompt, {
      start: {
        tools: STOCK_TOOLS,
        budget: { perTurn: { tokens: 2_250 }, estimate: 'count-tokens' },
      },
    });
    assert.equal(reply.status, 'budget_exhausted');
    assert.equal(h.mock.requestsFor(prompt).length, 2);
    const counted = h.mock.requests.filter(
      (r) => r.path === '/v1/messages/count_tokens' && JSON.stringify(r.body.messages[0]).includes(prompt),
    );
    assert.equal(counted.length, 3, 'one count before each of the three calls the chain would make');
    assert.equal(counted[0]!.body.max_tokens, undefined, 'a count_tokens request as the API takes it');
    const activities = await activitiesOf(h.client, id);
    assert.deepEqual(
      activities.map((a) => a.type),
      [
        'countPromptTokens',
        'callModel',
        'get_ticker_symbol',
        'countPromptTokens',
        'callModel',
        'get_current_stock_price',
        'countPromptTokens',
      ],
    );
  });
});

describe('bad budgets and prices', () => {
  test('the client refuses them before anything starts', async () => {
    await assert.rejects(
      h.conversations.startConversation({ budget: { perTurn: {} } }),
      (err: unknown) =>
        err instanceof ConversationError && /budget\.perTurn: set tokens, usd or both/.test(err.message),
    );
    await assert.rejects(
      h.conversations.startConversation({ prices: { input: -1, output: 1, cacheWrite: 1, cacheRead: 1 } }),
      (err: unknown) => err instanceof ConversationError && /prices\.input/.test(err.message),
    );
  });

  test('the workflow refuses them from a raw client: InvalidConversationInput, not a failing task', async () => {
    const handle = await h.client.workflow.start(CONVERSATION_WORKFLOW, {
      taskQueue: h.taskQueue,
      workflowId: `budget-raw-${Date.now()}`,
      args: [{ options: { budget: { perConversation: { usd: 'lots' } } } }],
    });
    await assert.rejects(handle.result(), (err: unknown) => {
      assert.ok(err instanceof WorkflowFailedError && err.cause instanceof ApplicationFailure);
      assert.equal(err.cause.type, FailureType.InvalidConversationInput);
      assert.match(err.cause.message, /budget\.perConversation\.usd/);
      return true;
    });
  });
});
