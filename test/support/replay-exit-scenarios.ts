// Replay-corpus scenarios (replay-scenario.ts) for every way a conversation or a turn ends, each history ending the way
// its name says: a later change to how a conversation ends (a status written, a timer, a final search attribute) must
// still replay each of them. Ended by the user (`end`) is in most other scenarios; a per-turn budget in
// replay-scenarios.ts. Each scenario asserts its ending, so a recording is of what it claims to be.
import assert from 'node:assert/strict';
import type { ConversationInput } from '../../common/conversation-input';
import { CONVERSATION_WORKFLOW } from '../../common/conversation-types';
import { withDefaults } from '../../common/options';
import type { ScriptStep } from '../../testing/messages-api/types';
import { uniquePrompt } from './harness';
import type { ReplayScenario } from './replay-scenario';
import { callsTools } from './script-steps';

const STOCK_TOOLS = ['get_ticker_symbol', 'get_current_stock_price'];
const STOCK_QUESTION = 'What is the current stock price of General Motors?';

export const EXIT_SCENARIOS: ReplayScenario[] = [
  {
    // Nobody writes after the answer: the idle timer ends the conversation.
    name: 'exit-idle-timeout',
    async run(h) {
      const id = `replay-exit-idle-${Date.now()}`;
      await h.conversations.sendMessage(id, uniquePrompt('Hello'), { start: { timeouts: { idle: '2 seconds' } } });
      assert.equal((await h.conversations.waitForResult(id)).status, 'idle_timeout');
      return id;
    },
  },
  {
    // Cancelled while it waits for a message: the workflow's cancellation, not an update.
    name: 'exit-cancelled',
    async run(h) {
      const id = `replay-exit-cancelled-${Date.now()}`;
      await h.conversations.sendMessage(id, uniquePrompt('Hello'), { start: {} });
      await h.conversations.cancel(id);
      await h.conversations.waitForResult(id).catch(() => undefined);
      assert.equal((await h.client.workflow.getHandle(id).describe()).status.name, 'CANCELLED');
      return id;
    },
  },
  {
    name: 'exit-refused',
    async run(h) {
      const id = `replay-exit-refused-${Date.now()}`;
      const prompt = uniquePrompt('Something the model will not do');
      h.mock.script(prompt, [
        { reply: { content: [{ type: 'text', text: "I can't help with that." }], stop_reason: 'refusal' } },
      ]);
      await h.conversations.sendMessage(id, prompt, { start: {} });
      assert.equal((await h.conversations.waitForResult(id)).status, 'refused');
      return id;
    },
  },
  {
    name: 'exit-context-window-exceeded',
    async run(h) {
      const id = `replay-exit-context-${Date.now()}`;
      const prompt = uniquePrompt('A very long conversation');
      h.mock.script(prompt, [
        { reply: { content: [{ type: 'text', text: 'Partial' }], stop_reason: 'model_context_window_exceeded' } },
      ]);
      await h.conversations.sendMessage(id, prompt, { start: {} });
      assert.equal((await h.conversations.waitForResult(id)).status, 'context_window_exceeded');
      return id;
    },
  },
  {
    // The max_tokens ladder runs out: 1000, then 4000, both cut off in a tool call.
    name: 'exit-max-tokens-exhausted',
    async run(h) {
      const id = `replay-exit-max-tokens-${Date.now()}`;
      const prompt = uniquePrompt(STOCK_QUESTION);
      const cutOff: ScriptStep = {
        fault: 'truncated-tool-use',
        text: 'Let me look that up.',
        tool: { name: 'get_ticker_symbol', input: { company_name: 'General Motors' } },
      };
      h.mock.script(prompt, [cutOff, cutOff, cutOff]);
      await h.conversations.sendMessage(id, prompt, {
        start: { tools: STOCK_TOOLS, maxTokens: 1000, maxTokensCap: 4000 },
      });
      assert.equal((await h.conversations.waitForResult(id)).status, 'max_tokens_exhausted');
      return id;
    },
  },
  {
    // More model calls in one turn than the limit allows.
    name: 'exit-limit-reached',
    async run(h) {
      const id = `replay-exit-limit-${Date.now()}`;
      const prompt = uniquePrompt('Check the weather again and again');
      h.mock.script(prompt, [
        callsTools(['get_weather', { location: 'Paris' }]),
        callsTools(['get_weather', { location: 'London' }]),
        callsTools(['get_weather', { location: 'Tokyo' }]),
      ]);
      await h.conversations.sendMessage(id, prompt, {
        start: { tools: ['get_weather'], limits: { maxModelCallsPerTurn: 2 } },
      });
      assert.equal((await h.conversations.waitForResult(id)).status, 'limit_reached');
      return id;
    },
  },
  {
    // The whole conversation's budget runs out in its second turn: the conversation ends, not only the turn.
    name: 'exit-budget-exhausted-conversation',
    async run(h) {
      const id = `replay-exit-budget-conversation-${Date.now()}`;
      const prompt = uniquePrompt('Tell me something.');
      // 1,100 tokens a call: before the third, 2,200 spent and its estimate pass 3,000.
      const usage = {
        input_tokens: 1_000,
        output_tokens: 100,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      };
      const say = (text: string): ScriptStep => ({
        reply: { content: [{ type: 'text', text }], stop_reason: 'end_turn', usage },
      });
      h.mock.script(prompt, [say('One.'), say('Two.'), say('Three.')]);
      await h.conversations.sendMessage(id, prompt, { start: { budget: { perConversation: { tokens: 3_000 } } } });
      await h.conversations.sendMessage(id, 'And?');
      assert.equal((await h.conversations.sendMessage(id, 'And then?')).status, 'budget_exhausted');
      assert.equal((await h.conversations.waitForResult(id)).status, 'budget_exhausted');
      return id;
    },
  },
  {
    // A turn fails (the API refuses the key) and the conversation goes on: the next turn answers, then the user ends it.
    name: 'exit-failed-turn-then-ended-by-user',
    async run(h) {
      const id = `replay-exit-failed-turn-${Date.now()}`;
      const prompt = uniquePrompt(STOCK_QUESTION);
      h.mock.script(prompt, [{ fault: 'status', status: 401, message: 'scripted 401 for the replay corpus' }]);
      await assert.rejects(h.conversations.sendMessage(id, prompt, { start: { tools: STOCK_TOOLS } }), {
        code: 'turn_failed',
      });
      await h.conversations.sendMessage(id, prompt);
      await h.conversations.end(id);
      assert.equal((await h.conversations.waitForResult(id)).status, 'completed');
      return id;
    },
  },
  {
    // The conversation itself fails: it names a tool no worker registers (started without the client, which refuses it).
    name: 'exit-failed-unknown-tools',
    async run(h) {
      const id = `replay-exit-failed-${Date.now()}`;
      const input: ConversationInput = {
        options: withDefaults({ tools: ['get_weather', 'launch_rocket'] }),
        firstMessage: 'Hi',
      };
      const handle = await h.client.workflow.start(CONVERSATION_WORKFLOW, {
        taskQueue: h.taskQueue,
        workflowId: id,
        args: [input],
      });
      await assert.rejects(handle.result());
      assert.equal((await handle.describe()).status.name, 'FAILED');
      return id;
    },
  },
];
