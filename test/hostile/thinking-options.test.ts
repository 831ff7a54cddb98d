// Hostile thinking and effort options: through ConversationClient (refused before anything is sent, invalid_options,
// saying what is wrong without echoing what was sent), and raw through Temporal (the workflow refuses its own input:
// InvalidConversationInput at once, never a failed workflow task), and through a message's typed answer (refused by
// the update's validator; the conversation goes on).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ConversationError } from '../../client/errors';
import { CONVERSATION_WORKFLOW } from '../../common/conversation-types';
import { STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import { type Harness, startHarness, uniquePrompt } from '../support/harness';
import {
  assertWorkerServes,
  conversationFailure,
  failedWorkflowTasks,
  HUGE,
  LONE_SURROGATE,
  refusedOptions,
} from '../support/hostile';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h?.close());

const invalidOptions = (options: Record<string, unknown>): Promise<string> => refusedOptions(h, options);

describe('thinking options through the client', () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['a budget under 1,024', { thinking: { type: 'enabled', budget_tokens: 1023 } }, /at least 1,024/],
    [
      'a budget not below maxTokens',
      { maxTokens: 2048, thinking: { type: 'enabled', budget_tokens: 2048 } },
      /below max_tokens on every call/,
    ],
    [
      'a budget above the model cap',
      { model: 'claude-sonnet-4-6', maxTokens: 100_000, thinking: { type: 'enabled', budget_tokens: 64_000 } },
      /capped at 64000/,
    ],
    ['a budget that is not an integer', { thinking: { type: 'enabled', budget_tokens: 2048.5 } }, /budget_tokens/],
    ['a budget that is NaN', { thinking: { type: 'enabled', budget_tokens: Number.NaN } }, /budget_tokens/],
    ['a budget as a string', { thinking: { type: 'enabled', budget_tokens: '4096' } }, /budget_tokens/],
    ['no budget', { thinking: { type: 'enabled' } }, /budget_tokens/],
    ['an unknown type', { thinking: { type: 'sometimes' } }, /thinking/],
    ['a huge type', { thinking: { type: HUGE } }, /thinking/],
    ['a lone surrogate as display', { thinking: { type: 'adaptive', display: LONE_SURROGATE } }, /display/],
    ['an extra key', { thinking: { type: 'adaptive', budget_tokens: 2048 } }, /budget_tokens|unknown key/],
    ['a prototype key', { thinking: JSON.parse('{"type":"adaptive","__proto__":{"x":1}}') }, /thinking/],
    ['thinking as a string', { thinking: 'adaptive' }, /thinking/],
    ['an unknown effort', { effort: 'extreme' }, /effort/],
    ['effort as a number', { effort: 3 }, /effort/],
    [
      'disabled on a model that refuses it',
      { model: 'claude-sonnet-5-5', thinking: { type: 'disabled' } },
      /does not accept thinking "disabled".*between_tools/,
    ],
    [
      'enabled on a model that refuses it',
      { model: 'claude-opus-5-5', thinking: { type: 'enabled', budget_tokens: 1024 } },
      /does not accept thinking "enabled"/,
    ],
    ['between_tools at effort max', { thinking: { type: 'between_tools' }, effort: 'max' }, /between_tools.*effort/],
    [
      'toolChoice any with thinking',
      { thinking: { type: 'adaptive' }, toolChoice: { type: 'any' } },
      /Thinking may not be enabled when tool_choice forces tool use/,
    ],
    [
      'toolChoice tool with thinking',
      {
        thinking: { type: 'enabled', budget_tokens: 1024 },
        maxTokens: 4096,
        model: 'claude-sonnet-4-6',
        toolChoice: { type: 'tool', name: 'get_ticker_symbol' },
      },
      /forces tool use/,
    ],
    [
      'a typed answer in mode tool with thinking',
      { thinking: { type: 'adaptive' }, output: { schema: { type: 'object' }, mode: 'tool' } },
      /mode "tool".*use mode "native"/,
    ],
  ];
  for (const [what, options, expected] of cases) {
    test(`${what}: invalid_options`, async () => {
      assert.match(await invalidOptions(options), expected);
    });
  }

  test('what works: auto or none with thinking, a typed answer in mode native with thinking, a budget just below max_tokens', async () => {
    for (const options of [
      { thinking: { type: 'adaptive' }, toolChoice: { type: 'auto' } },
      { thinking: { type: 'adaptive', display: 'omitted' }, toolChoice: { type: 'none' }, effort: 'low' },
      { thinking: { type: 'adaptive' }, output: { schema: { type: 'object' } } },
      { model: 'claude-sonnet-4-6', maxTokens: 1025, thinking: { type: 'enabled', budget_tokens: 1024 } },
      { thinking: { type: 'between_tools' }, effort: 'high' },
    ]) {
      const id = await h.conversations.startConversation({ tools: STOCK_TOOLS, ...options } as never);
      await h.conversations.end(id);
    }
  });
});

describe('thinking options raw through Temporal', () => {
  for (const [what, options] of [
    ['a budget under 1,024', { thinking: { type: 'enabled', budget_tokens: 5 } }],
    [
      'thinking with a forced tool_choice',
      { tools: STOCK_TOOLS, thinking: { type: 'adaptive' }, toolChoice: { type: 'any' } },
    ],
    ['an effort of 1 MB', { effort: 'x'.repeat(2 ** 20) }],
  ] as const) {
    test(`a start input with ${what} fails the conversation with InvalidConversationInput at once`, async () => {
      const id = `raw-thinking-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
      await h.client.workflow
        .start(CONVERSATION_WORKFLOW, { taskQueue: h.taskQueue, workflowId: id, args: [{ options }] })
        .catch((err: unknown) => {
          // A 10 MB input is refused by the server itself (payload limit): nothing started.
          assert.match(String(err), /size|limit|exceed/i);
        });
      const described = await h.client.workflow
        .getHandle(id)
        .describe()
        .catch(() => undefined);
      if (described) {
        const failure = await conversationFailure(h, id);
        assert.equal(failure.type, 'InvalidConversationInput');
        assert.ok(failure.message.length < 2_000);
        assert.equal(await failedWorkflowTasks(h, id), 0);
      }
      await assertWorkerServes(h);
    });
  }
});

describe('a typed answer in mode tool, per message, in a conversation with thinking', () => {
  test('is refused by the update, and the conversation goes on', async () => {
    const prompt = uniquePrompt('Hello there');
    const id = await h.conversations.startConversation({ firstMessage: prompt, thinking: { type: 'adaptive' } });
    await h.conversations.awaitTurn(id, 1);
    const error = await h.conversations
      .submitMessage(id, 'Quote GM', { output: { schema: { type: 'object' }, mode: 'tool' } } as never)
      .then(
        () => assert.fail('accepted'),
        (err: unknown) => err,
      );
    assert.ok(error instanceof ConversationError, String(error));
    assert.match(error.message, /forces the answer tool.*use mode "native"/);
    const { turn } = await h.conversations.submitMessage(id, 'Still there?');
    assert.equal((await h.conversations.awaitTurn(id, turn)).status, 'awaiting_user');
    await h.conversations.end(id);
  });
});
