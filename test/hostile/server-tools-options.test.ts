// Hostile server tool options: through ConversationClient (refused before anything is sent, invalid_options, saying
// what is wrong without echoing what was sent) and raw through Temporal (the workflow refuses its own input:
// InvalidConversationInput at once, never a failed workflow task; the worker goes on serving).
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

describe('server tool options through the client', () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['serverTools as a string', { serverTools: 'web_search' }, /serverTools/],
    ['an unknown server tool', { serverTools: { browser: {} } }, /serverTools|unrecognized/i],
    ['maxUses 0', { serverTools: { webSearch: { maxUses: 0 } } }, /maxUses/],
    ['maxUses NaN', { serverTools: { webSearch: { maxUses: Number.NaN } } }, /maxUses/],
    ['maxUses as a string', { serverTools: { webFetch: { maxUses: '3' } } }, /maxUses/],
    [
      'both domain filters',
      { serverTools: { webSearch: { allowedDomains: ['a.com'], blockedDomains: ['b.com'] } } },
      /cannot be used together/,
    ],
    ['a huge domain', { serverTools: { webFetch: { allowedDomains: [HUGE] } } }, /allowedDomains/],
    ['a domain with a space', { serverTools: { webFetch: { blockedDomains: ['a b.com'] } } }, /blockedDomains/],
    ['a lone surrogate as city', { serverTools: { webSearch: { userLocation: { city: LONE_SURROGATE } } } }, /city/],
    ['a country that is not ISO', { serverTools: { webSearch: { userLocation: { country: 'usa' } } } }, /country/],
    ['codeExecution with keys', { serverTools: { codeExecution: { image: 'python' } } }, /codeExecution|unrecognized/i],
    ['an unknown tool search type', { serverTools: { toolSearch: { type: 'vector' } } }, /type/],
    ['an empty defer list', { serverTools: { toolSearch: { defer: [] } } }, /defer/],
    ['a defer pattern with a regex', { serverTools: { toolSearch: { defer: ['(a+)+$'] } } }, /defer/],
    ['a prototype key', { serverTools: JSON.parse('{"__proto__":{"webSearch":{}}}') }, /serverTools|unrecognized/i],
    ['server tools with the legacy protocol', { protocol: 'legacy-xml', serverTools: { webSearch: {} } }, /native/],
    ['tool search with no tools to search', { tools: [], serverTools: { toolSearch: {} } }, /tools to search/],
  ];
  for (const [what, options, expected] of cases) {
    test(`${what}: invalid_options`, async () => {
      assert.match(await invalidOptions(options), expected);
    });
  }

  test('what works: each server tool alone, all together, bm25 search deferring a pattern', async () => {
    for (const serverTools of [
      { webSearch: {} },
      { webFetch: { maxUses: 2, allowedDomains: ['docs.example.com/api'], citations: true } },
      { codeExecution: {} },
      { toolSearch: { type: 'bm25', defer: ['get_*'] } },
      {
        webSearch: { maxUses: 5, userLocation: { city: 'Paris', country: 'FR' } },
        webFetch: {},
        codeExecution: {},
        toolSearch: {},
      },
    ]) {
      const id = await h.conversations.startConversation({ tools: STOCK_TOOLS, serverTools } as never);
      await h.conversations.end(id);
    }
  });
});

describe('server tool options raw through Temporal', () => {
  for (const [what, options] of [
    ['both domain filters', { serverTools: { webSearch: { allowedDomains: ['a.com'], blockedDomains: ['b.com'] } } }],
    ['server tools with the legacy protocol', { protocol: 'legacy-xml', serverTools: { codeExecution: {} } }],
    ['a defer list of 1 MB', { tools: STOCK_TOOLS, serverTools: { toolSearch: { defer: ['x'.repeat(2 ** 20)] } } }],
  ] as const) {
    test(`a start input with ${what} fails the conversation with InvalidConversationInput at once`, async () => {
      const id = `raw-server-tools-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
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
