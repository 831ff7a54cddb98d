// Replay-corpus scenarios (replay-scenario.ts) for the parts of the workflow that write commands of their own kind:
// compaction by the API and by the orchestrator (a summariseContext activity), MCP tools, server tools with a paused
// turn, an approval in a conversation that continues as new around it, and a sub-agent (a child workflow, recorded
// with its parent). Each asserts that it did what its name says, so a recording is of what it claims to be.
import assert from 'node:assert/strict';
import { temporal } from '@temporalio/proto';
import { researchAgentTools } from '../../testing/demo-tools/research-agents';
import { demoTools } from '../../testing/demo-tools';
import { type Harness, uniquePrompt } from './harness';
import { approvalAskedFor } from './awaiting-approval';
import type { ReplayScenario } from './replay-scenario';
import { callsTools, says } from './script-steps';

const STOCK_TOOLS = ['get_ticker_symbol', 'get_current_stock_price'];
const STOCK_QUESTION = 'What is the current stock price of General Motors?';
/** A window the stock chain's padded tool outputs fill in two calls (as test/e2e/context-window.test.ts's). */
const SMALL_WINDOW = { contextWindowTokens: 100_000, toolOutputChars: 110_000 };

async function runsOf(h: Harness, id: string): Promise<number> {
  let runs = 0;
  for await (const _run of h.client.workflow.list({ query: `WorkflowId = '${id}'` })) runs++;
  return runs;
}

/** The ids of the children a conversation started, from its history. */
async function childrenOf(h: Harness, id: string): Promise<string[]> {
  const history = await h.client.workflow.getHandle(id).fetchHistory();
  return (history.events ?? [])
    .filter((e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED)
    .map((e) => e.startChildWorkflowExecutionInitiatedEventAttributes!.workflowId!);
}

const compaction = (by: 'api' | 'orchestrator'): ReplayScenario => ({
  name: `compaction-by-${by}`,
  harness: SMALL_WINDOW,
  async run(h) {
    const id = `replay-compaction-${by}-${Date.now()}`;
    await h.conversations.sendMessage(id, uniquePrompt(STOCK_QUESTION), {
      start: {
        tools: STOCK_TOOLS,
        contextManagement: { mode: 'compaction', compaction: { by, triggerTokens: 50_000 } },
      },
    });
    assert.equal((await h.conversations.getState(id)).context.compactions, 1, 'the context was compacted once');
    await h.conversations.sendMessage(id, 'What is the current stock price of Apple?');
    await h.conversations.end(id);
    await h.conversations.waitForResult(id);
    return id;
  },
});

export const FEATURE_SCENARIOS: ReplayScenario[] = [
  compaction('api'),
  compaction('orchestrator'),
  {
    // Two MCP tools in one reply (the reference server over stdio), each an activity of its own.
    name: 'mcp-tools',
    harness: {
      mcpServers: {
        everything: {
          command: process.execPath,
          args: [require.resolve('@modelcontextprotocol/server-everything/dist/index.js')],
        },
      },
    },
    async run(h) {
      const id = `replay-mcp-${Date.now()}`;
      const prompt = uniquePrompt('Echo hello and add 2 and 40');
      h.mock.script(prompt, [
        callsTools(['everything__echo', { message: 'hello' }], ['everything__get-sum', { a: 2, b: 40 }]),
        says('Echoed hello; 2 + 40 = 42.'),
      ]);
      await h.conversations.sendMessage(id, prompt, {
        start: { mcpServers: ['everything'], closeAfterFirstReply: true },
      });
      const result = await h.conversations.waitForResult(id);
      assert.equal(result.toolCalls, 2);
      return id;
    },
  },
  {
    // A web search the API pauses (pause_turn), continued; then code execution in the container the API named.
    name: 'server-tools-paused-turn',
    async run(h) {
      const id = `replay-server-tools-${Date.now()}`;
      const prompt = uniquePrompt(STOCK_QUESTION);
      h.mock.script(prompt, [
        {
          reply: {
            content: [
              { type: 'server_tool_use', id: 'srvtoolu_01search', name: 'web_search', input: { query: 'GM stock' } },
              {
                type: 'web_search_tool_result',
                content: [
                  {
                    type: 'web_search_result',
                    url: 'https://investor.gm.com/stock',
                    title: 'GM stock',
                    encrypted_content: 'EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5',
                    page_age: '1 day ago',
                  },
                ],
              },
            ],
            stop_reason: 'pause_turn',
          },
        },
        {
          reply: {
            content: [
              {
                type: 'server_tool_use',
                id: 'srvtoolu_01bash',
                name: 'bash_code_execution',
                input: { command: 'python -c "print(38.50)"' },
              },
              {
                type: 'bash_code_execution_tool_result',
                content: {
                  type: 'bash_code_execution_result',
                  stdout: '38.5\n',
                  stderr: '',
                  return_code: 0,
                  content: [],
                },
              },
              { type: 'text', text: 'GM trades at $38.50.' },
            ],
            stop_reason: 'end_turn',
          },
        },
      ]);
      await h.conversations.sendMessage(id, prompt, {
        start: { closeAfterFirstReply: true, serverTools: { webSearch: { maxUses: 3 }, codeExecution: {} } },
      });
      const result = await h.conversations.waitForResult(id);
      assert.equal(result.text, 'GM trades at $38.50.');
      assert.equal(result.usage.webSearchRequests, 1);
      return id;
    },
  },
  {
    // A run per model call: the order waits for its approval in one run, and the chain goes on in the next.
    name: 'approval-across-continue-as-new',
    async run(h) {
      const id = `replay-approval-can-${Date.now()}`;
      const prompt = uniquePrompt('Buy 3 shares of General Motors');
      const bought = h.conversations.sendMessage(id, prompt, {
        start: { tools: ['get_ticker_symbol', 'buy_stock'], continueAsNewAfterModelCalls: 1 },
      });
      const pending = await approvalAskedFor(h.conversations, id);
      await h.conversations.approveToolCall(id, {
        callId: pending.callId,
        argumentsDigest: pending.argumentsDigest,
        approve: true,
      });
      assert.match((await bought).text, /filled: 3 GM/);
      await h.conversations.end(id);
      await h.conversations.waitForResult(id);
      assert.ok((await runsOf(h, id)) >= 2, 'the conversation continued as new');
      return id;
    },
  },
  {
    // A parent's agent tool call: a child conversation (a child workflow) whose answer is the call's result.
    name: 'sub-agent',
    harness: { tools: [...demoTools, ...researchAgentTools] },
    async run(h) {
      const id = `replay-sub-agent-${Date.now()}`;
      const prompt = uniquePrompt('Research General Motors for me');
      const task = uniquePrompt('Research General Motors');
      h.mock.script(prompt, [callsTools(['research_company', { task }]), says('GM trades at $38.50.')]);
      h.mock.script(task, [
        callsTools(['get_ticker_symbol', { company_name: 'General Motors' }]),
        callsTools(['get_current_stock_price', { symbol: 'GM' }]),
        says('General Motors (GM) trades at $38.50.'),
      ]);
      await h.conversations.sendMessage(id, prompt, { start: { tools: ['research_company'] } });
      await h.conversations.end(id);
      await h.conversations.waitForResult(id);
      const children = await childrenOf(h, id);
      assert.equal(children.length, 1, 'one sub-agent');
      return [id, ...children];
    },
  },
];
