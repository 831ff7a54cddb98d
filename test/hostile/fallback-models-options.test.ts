// Hostile fallbackModels / fallbackAfterAttempts options: through ConversationClient (refused before anything is sent,
// invalid_options, saying what is wrong without echoing what was sent) and raw through Temporal (the workflow refuses
// its own input: InvalidConversationInput at once, never a failed workflow task).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CONVERSATION_WORKFLOW } from '../../common/conversation-types';
import { STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import { type Harness, startHarness } from '../support/harness';
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

describe('fallback model options through the client', () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['an empty list', { fallbackModels: [] }, /fallbackModels/],
    ['a model listed twice', { fallbackModels: ['claude-opus-5-5', 'claude-opus-5-5'] }, /twice/],
    [
      'the conversation model itself',
      { model: 'claude-sonnet-5-5', fallbackModels: ['claude-sonnet-5-5'] },
      /own model/,
    ],
    ['five fallback models', { fallbackModels: ['a', 'b', 'c', 'd', 'e'] }, /fallbackModels/],
    ['an empty name', { fallbackModels: ['  '] }, /fallbackModels/],
    ['a huge name', { fallbackModels: [HUGE] }, /fallbackModels/],
    ['a name that is a number', { fallbackModels: [5] }, /fallbackModels/],
    ['a string instead of a list', { fallbackModels: 'claude-opus-5-5' }, /fallbackModels/],
    ['a lone surrogate among names', { fallbackModels: [LONE_SURROGATE.repeat(300)] }, /fallbackModels/],
    ['an object in the list', { fallbackModels: [{ model: 'claude-opus-5-5' }] }, /fallbackModels/],
    ['fallbackAfterAttempts without fallbackModels', { fallbackAfterAttempts: 2 }, /needs fallbackModels/],
    [
      'fallbackAfterAttempts 0',
      { fallbackModels: ['claude-opus-5-5'], fallbackAfterAttempts: 0 },
      /fallbackAfterAttempts/,
    ],
    [
      'fallbackAfterAttempts 13',
      { fallbackModels: ['claude-opus-5-5'], fallbackAfterAttempts: 13 },
      /fallbackAfterAttempts/,
    ],
    [
      'fallbackAfterAttempts 1.5',
      { fallbackModels: ['claude-opus-5-5'], fallbackAfterAttempts: 1.5 },
      /fallbackAfterAttempts/,
    ],
    [
      'fallbackAfterAttempts NaN',
      { fallbackModels: ['claude-opus-5-5'], fallbackAfterAttempts: Number.NaN },
      /fallbackAfterAttempts/,
    ],
    [
      'fallbackAfterAttempts "3"',
      { fallbackModels: ['claude-opus-5-5'], fallbackAfterAttempts: '3' },
      /fallbackAfterAttempts/,
    ],
    [
      'a fallback model that refuses the conversation thinking',
      {
        model: 'claude-sonnet-4-6',
        thinking: { type: 'enabled', budget_tokens: 1024 },
        maxTokens: 4096,
        fallbackModels: ['claude-opus-5-5'],
      },
      /fallbackModels\.0: as a fallback model: thinking\.type: claude-opus-5-5 does not accept thinking "enabled"/,
    ],
  ];
  for (const [what, options, expected] of cases) {
    test(`${what}: invalid_options`, async () => {
      assert.match(await invalidOptions(options), expected);
    });
  }

  test('what works: one or four fallback models, fallbackAfterAttempts 1 and 12', async () => {
    for (const options of [
      { fallbackModels: ['claude-opus-5-5'] },
      {
        fallbackModels: ['claude-opus-5-5', 'claude-sonnet-4-6', 'claude-haiku-4-5', 'my-own-model'],
        fallbackAfterAttempts: 12,
      },
      { fallbackModels: ['claude-opus-5-5'], fallbackAfterAttempts: 1 },
    ]) {
      const id = await h.conversations.startConversation({ tools: STOCK_TOOLS, ...options } as never);
      await h.conversations.end(id);
    }
  });
});

describe('fallback model options raw through Temporal', () => {
  for (const [what, options] of [
    ['its own model as fallback', { model: 'claude-sonnet-5-5', fallbackModels: ['claude-sonnet-5-5'] }],
    ['fallbackAfterAttempts -1', { fallbackModels: ['claude-opus-5-5'], fallbackAfterAttempts: -1 }],
    ['a 1 MB fallback model', { fallbackModels: ['x'.repeat(2 ** 20)] }],
  ] as const) {
    test(`a start input with ${what} fails the conversation with InvalidConversationInput at once`, async () => {
      const id = `raw-fallback-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
      await h.client.workflow.start(CONVERSATION_WORKFLOW, {
        taskQueue: h.taskQueue,
        workflowId: id,
        args: [{ options }],
      });
      const failure = await conversationFailure(h, id);
      assert.equal(failure.type, 'InvalidConversationInput');
      assert.ok(failure.message.length < 2_000);
      assert.equal(await failedWorkflowTasks(h, id), 0);
      await assertWorkerServes(h);
    });
  }
});
