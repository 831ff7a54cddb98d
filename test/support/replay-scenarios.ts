// Conversations whose histories are kept as replay fixtures (test/fixtures/replay/<version>/): each one exercises a
// part of the workflow that a later change could make replay differently — an event reader's long poll,
// continue-as-new with a carried event log, typed answers in both modes, approvals, the max_tokens ladder, a budget, a
// tool error, a fork before a turn and one after a step, a fallback model, thinking, message threads, the legacy XML
// protocol; every way a conversation or a turn ends (replay-exit-scenarios.ts); compaction, MCP tools, server tools,
// an approval across continue-as-new and a sub-agent (replay-feature-scenarios.ts). Recorded once per released
// version (RECORD_FIXTURES=1 in test/e2e/replay.test.ts: only those its folder lacks); every later version must replay
// them.
import { uniquePrompt } from './harness';
import { approvalAskedFor } from './awaiting-approval';
import type { ReplayScenario } from './replay-scenario';
import { EXIT_SCENARIOS } from './replay-exit-scenarios';
import { FEATURE_SCENARIOS } from './replay-feature-scenarios';

export type { ReplayScenario } from './replay-scenario';

const QUOTE_SCHEMA = {
  type: 'object',
  properties: { symbol: { type: 'string' }, price: { type: 'number', minimum: 0 } },
  required: ['symbol', 'price'],
  additionalProperties: false,
};
const STOCK_TOOLS = ['get_ticker_symbol', 'get_current_stock_price'];

export const REPLAY_SCENARIOS: ReplayScenario[] = [
  {
    // A reader parks on the log's long poll while the conversation waits, across two turns and continue-as-new.
    name: 'stream-reader-and-continue-as-new',
    async run(h) {
      const id = `replay-stream-${Date.now()}`;
      const prompt = uniquePrompt('What is the current stock price of General Motors?');
      const { turn } = await h.conversations.submitMessage(id, prompt, {
        start: {
          tools: STOCK_TOOLS,
          continueAsNewAfterModelCalls: 2,
        },
      });
      const reader = (async () => {
        const seen: string[] = [];
        for await (const item of h.conversations.events(id)) seen.push(item.event.type);
        return seen;
      })();
      await h.conversations.awaitTurn(id, turn);
      await new Promise((resolve) => setTimeout(resolve, 1500)); // the reader parks on the long poll
      await h.conversations.sendMessage(id, 'And Ford?');
      await h.conversations.end(id);
      await h.conversations.waitForResult(id);
      await reader;
      return id;
    },
  },
  {
    name: 'typed-answer-native-corrected',
    async run(h) {
      const id = `replay-typed-native-${Date.now()}`;
      const prompt = uniquePrompt('Quote General Motors as JSON.');
      h.mock.script(prompt, [
        { reply: { content: [{ type: 'json', value: { symbol: 'GM', price: -1 } }], stop_reason: 'end_turn' } },
        { reply: { content: [{ type: 'json', value: { symbol: 'GM', price: 38.5 } }], stop_reason: 'end_turn' } },
      ]);
      await h.conversations.sendMessage(id, prompt, {
        start: { closeAfterFirstReply: true },
        output: { schema: QUOTE_SCHEMA },
      });
      await h.conversations.waitForResult(id);
      return id;
    },
  },
  {
    name: 'typed-answer-tool-mode',
    async run(h) {
      const id = `replay-typed-tool-${Date.now()}`;
      const prompt = uniquePrompt('Quote General Motors with the answer tool.');
      h.mock.script(prompt, [
        { demo: true },
        { demo: true },
        {
          reply: {
            content: [{ type: 'tool_use', name: 'final_answer', input: { symbol: 'GM', price: 38.5 } }],
            stop_reason: 'tool_use',
          },
        },
      ]);
      await h.conversations.sendMessage(id, prompt, {
        start: { tools: STOCK_TOOLS, closeAfterFirstReply: true },
        output: { schema: QUOTE_SCHEMA, mode: 'tool' },
      });
      await h.conversations.waitForResult(id);
      return id;
    },
  },
  {
    name: 'approval-approved-then-rejected',
    async run(h) {
      const id = `replay-approval-${Date.now()}`;
      const prompt = uniquePrompt('Buy 3 shares of General Motors');
      const decide = async (approve: boolean) => {
        const pending = await approvalAskedFor(h.conversations, id);
        await h.conversations.approveToolCall(id, {
          callId: pending.callId,
          argumentsDigest: pending.argumentsDigest,
          approve,
          ...(!approve && { reason: 'not today' }),
        });
      };
      const first = h.conversations.sendMessage(id, prompt, { start: { tools: ['buy_stock'] } });
      await decide(true);
      await first;
      const second = h.conversations.sendMessage(id, uniquePrompt('Buy 3 shares of General Motors'));
      await decide(false);
      await second;
      await h.conversations.end(id);
      await h.conversations.waitForResult(id);
      return id;
    },
  },
  {
    name: 'max-tokens-ladder-and-tool-error',
    async run(h) {
      const id = `replay-ladder-${Date.now()}`;
      const prompt = uniquePrompt('Price of Genral Motors?');
      h.mock.script(prompt, [
        { fault: 'truncated-tool-use', tool: { name: 'get_ticker_symbol', input: { company_name: 'Genral Motors' } } },
        {
          reply: {
            content: [{ type: 'tool_use', name: 'get_ticker_symbol', input: { company_name: 'Genral Motors' } }],
            stop_reason: 'tool_use',
          },
        },
        { reply: { content: [{ type: 'text', text: 'I could not find that company.' }], stop_reason: 'end_turn' } },
      ]);
      await h.conversations.sendMessage(id, prompt, { start: { tools: STOCK_TOOLS, closeAfterFirstReply: true } });
      await h.conversations.waitForResult(id);
      return id;
    },
  },
  {
    name: 'turn-budget-exhausted',
    async run(h) {
      const id = `replay-budget-${Date.now()}`;
      await h.conversations.sendMessage(id, uniquePrompt('What is the current stock price of General Motors?'), {
        start: {
          tools: STOCK_TOOLS,
          budget: { perTurn: { tokens: 3_000 } },
        },
      });
      await h.conversations.end(id);
      await h.conversations.waitForResult(id);
      return id;
    },
  },
  {
    // A fork (docs/fork.md) before turn 2 of a conversation with tool calls, continued-as-new, with another system
    // prompt and a first message: the fork's start input (carried + forkedFrom) and its turn.
    name: 'fork-before-turn-2',
    async run(h) {
      const origin = `replay-fork-origin-${Date.now()}`;
      const prompt = uniquePrompt('What is the current stock price of General Motors?');
      await h.conversations.sendMessage(origin, prompt, {
        start: { tools: STOCK_TOOLS, continueAsNewAfterModelCalls: 2 },
      });
      await h.conversations.sendMessage(origin, 'And Ford?');
      const fork = await h.conversations.fork(origin, {
        at: { beforeTurn: 2 },
        options: { system: 'Answer briefly.' },
        message: 'And Tesla?',
      });
      await h.conversations.awaitTurn(fork.id, fork.turn);
      await h.conversations.end(fork.id);
      await h.conversations.waitForResult(fork.id);
      await h.conversations.end(origin);
      return fork.id;
    },
  },
  {
    // The first model overloaded twice: the same call goes to the fallback model as an activity of its own.
    name: 'fallback-model-after-overload',
    async run(h) {
      const id = `replay-fallback-${Date.now()}`;
      const prompt = uniquePrompt('What is the current stock price of General Motors?');
      h.mock.script(prompt, [{ demo: true }, { fault: 'status', status: 529 }, { fault: 'status', status: 529 }]);
      await h.conversations.sendMessage(id, prompt, {
        start: {
          tools: STOCK_TOOLS,
          model: 'claude-sonnet-5-5',
          fallbackModels: ['claude-opus-5-5'],
          fallbackAfterAttempts: 2,
          closeAfterFirstReply: true,
        },
      });
      await h.conversations.waitForResult(id);
      return id;
    },
  },
  {
    name: 'thinking-adaptive-chain',
    async run(h) {
      const id = `replay-thinking-${Date.now()}`;
      await h.conversations.sendMessage(id, uniquePrompt('What is the current stock price of General Motors?'), {
        start: { tools: STOCK_TOOLS, closeAfterFirstReply: true, thinking: { type: 'adaptive' }, effort: 'high' },
      });
      await h.conversations.waitForResult(id);
      return id;
    },
  },
  {
    // Message threads: the second turn's calls continue the thread with only what the turn added.
    name: 'threads-two-turns',
    async run(h) {
      const id = `replay-threads-${Date.now()}`;
      await h.conversations.sendMessage(id, uniquePrompt('What is the current stock price of General Motors?'), {
        start: { tools: STOCK_TOOLS, threads: true },
      });
      await h.conversations.sendMessage(id, uniquePrompt('And Ford?'));
      await h.conversations.end(id);
      await h.conversations.waitForResult(id);
      return id;
    },
  },
  {
    name: 'legacy-xml-chain',
    async run(h) {
      const id = `replay-legacy-xml-${Date.now()}`;
      await h.conversations.sendMessage(id, uniquePrompt('What is the current stock price of General Motors?'), {
        start: { tools: STOCK_TOOLS, protocol: 'legacy-xml', closeAfterFirstReply: true },
      });
      await h.conversations.waitForResult(id);
      return id;
    },
  },
  {
    // A fork (docs/fork.md) inside turn 1, after its first step (the ticker lookup), with another model: the fork's
    // start input (carried with the turn in progress, forkedFrom with its step), the turn it goes on with, its end.
    name: 'fork-after-step',
    async run(h) {
      const origin = `replay-fork-step-origin-${Date.now()}`;
      const prompt = uniquePrompt('What is the current stock price of General Motors?');
      await h.conversations.sendMessage(origin, prompt, { start: { tools: STOCK_TOOLS } });
      const fork = await h.conversations.fork(origin, {
        at: { afterStep: { turn: 1, step: 1 } },
        options: { model: 'claude-opus-4-1' },
      });
      await h.conversations.awaitTurn(fork.id, fork.turn);
      await h.conversations.end(fork.id);
      await h.conversations.waitForResult(fork.id);
      await h.conversations.end(origin);
      return fork.id;
    },
  },
  ...EXIT_SCENARIOS,
  ...FEATURE_SCENARIOS,
];
