// The API's server tools, end to end on a real Temporal dev server and the local Messages API, which emulates them:
// scripted `server_tool_use` and result blocks, `pause_turn`, a code execution container it issues and expects back
// (an id it never issued, or a conversation that ran code and comes back without one, is a 400), tool search that
// refuses a `tool_reference` to a tool the request does not define. So a chain that completes sent every server tool
// block back in place and the container with every call — on the live path, with continue-as-new after every call,
// and (second describe) after the worker process is SIGKILLed during the call that continues a paused turn.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { STOCK_QUESTION, STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import type { RecordedRequest, ScriptStep } from '../../testing/messages-api/types';
import { activitiesOf, type Harness, startHarness, uniquePrompt } from '../support/harness';
import { durableEventsOf as eventsOf } from '../support/stream-events';
import { crashRig } from '../support/crash-rig';

type Block = Record<string, unknown> & { type: string };
type Message = { role: string; content: Block[] | string };

const SEARCH_RESULT = {
  type: 'web_search_result',
  url: 'https://investor.gm.com/stock',
  title: 'GM stock',
  encrypted_content: 'EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5',
  page_age: '1 day ago',
};
const BASH_RESULT = {
  type: 'bash_code_execution_result',
  stdout: '38.5\n',
  stderr: '',
  return_code: 0,
  content: [],
};

/** Call 1 searches and is paused; call 2 continues it and calls a tool; call 3 runs code and answers. */
function pausedChain(): ScriptStep[] {
  return [
    {
      reply: {
        content: [
          { type: 'server_tool_use', id: 'srvtoolu_01search', name: 'web_search', input: { query: 'GM stock price' } },
          { type: 'web_search_tool_result', content: [SEARCH_RESULT] },
        ],
        stop_reason: 'pause_turn',
      },
    },
    {
      reply: {
        content: [
          { type: 'text', text: 'The search found GM. Let me look up the ticker.' },
          {
            type: 'tool_use',
            id: 'toolu_01ticker',
            name: 'get_ticker_symbol',
            input: { company_name: 'General Motors' },
          },
        ],
        stop_reason: 'tool_use',
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
          { type: 'bash_code_execution_tool_result', content: BASH_RESULT },
          { type: 'text', text: 'GM trades at $38.50.' },
        ],
        stop_reason: 'end_turn',
      },
    },
  ];
}

function messagesOf(request: RecordedRequest): Message[] {
  return request.body.messages as Message[];
}

function blocks(message: Message | undefined): Block[] {
  if (!message) return [];
  return typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
}

/** The blocks of a message without the prompt cache's breakpoint (it moves to the newest message every call). */
function plain(message: Message | undefined): Block[] {
  return blocks(message).map(({ cache_control: _breakpoint, ...rest }) => rest as Block);
}

/**
 * What the three requests of the paused chain must look like: the continuation sends the paused turn back as it is
 * (no user message after it) with the container the first reply named; the third request has the paused turn and its
 * continuation as one assistant message, then the tool result.
 */
function assertPausedChain(requests: RecordedRequest[], container: string): void {
  assert.equal(requests.length, 3);
  const [first, second, third] = requests as [RecordedRequest, RecordedRequest, RecordedRequest];
  const tools = first.body.tools as Block[];
  assert.deepEqual(
    tools.map((t) => t['type'] ?? t['name']),
    ['web_search_20250305', 'code_execution_20250825', 'get_ticker_symbol', 'get_current_stock_price'],
  );
  assert.equal(tools[0]!['max_uses'], 3);
  assert.equal(first.body.container, undefined, 'no container before the API named one');

  const paused = messagesOf(second);
  assert.equal(paused.length, 2, 'the continuation adds no user message');
  assert.equal(paused[1]!.role, 'assistant');
  assert.deepEqual(
    plain(paused[1]).map((b) => b.type),
    ['server_tool_use', 'web_search_tool_result'],
  );
  assert.deepEqual(plain(paused[1])[1]!['content'], [SEARCH_RESULT], 'the search results go back as they came');
  assert.equal(second.body.container, container);

  const joined = messagesOf(third);
  assert.deepEqual(
    joined.map((m) => m.role),
    ['user', 'assistant', 'user'],
  );
  assert.deepEqual(
    plain(joined[1]).map((b) => b.type),
    ['server_tool_use', 'web_search_tool_result', 'text', 'tool_use'],
    'the paused turn and its continuation are one assistant message, in order',
  );
  assert.equal(blocks(joined[2])[0]!.type, 'tool_result');
  assert.equal(third.body.container, container);
}

describe('server tools on the live path', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h?.close());

  for (const continueAsNew of [false, true]) {
    test(`web search paused and resumed, a client tool, code execution in the container the API named${continueAsNew ? ', continue-as-new after every call' : ''}`, async () => {
      const prompt = uniquePrompt(STOCK_QUESTION);
      h.mock.script(prompt, pausedChain());
      const id = await h.conversations.startConversation({
        firstMessage: prompt,
        tools: STOCK_TOOLS,
        closeAfterFirstReply: true,
        serverTools: { webSearch: { maxUses: 3 }, codeExecution: {} },
        // Tokens free, so the cost is the search's alone.
        prices: { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 },
        ...(continueAsNew && { continueAsNewAfterModelCalls: 1 }),
      });
      const result = await h.conversations.waitForResult(id);
      assert.equal(result.status, 'completed');
      assert.equal(result.text, 'GM trades at $38.50.');
      assert.equal(result.toolCalls, 1);
      assert.equal(result.usage.webSearchRequests, 1);
      assert.equal(result.usage.webFetchRequests, undefined);
      assert.ok(Math.abs(result.costUsd! - 0.01) < 1e-12, `one search at $10 per 1,000: ${result.costUsd}`);

      const requests = h.mock.requestsFor(prompt);
      if (continueAsNew) {
        // Each call in a run of its own: the container and the paused turn crossed two continue-as-news.
        let runs = 0;
        for await (const _run of h.client.workflow.list({ query: `WorkflowId = '${id}'` })) runs++;
        assert.ok(runs >= 3, `runs: ${runs}`);
        const container = requests[1]?.body.container as string;
        assert.match(container ?? '', /^container_/);
        assertPausedChain(requests, container);
      } else {
        const models = (await activitiesOf(h.client, id)).filter((a) => a.type === 'callModel');
        assert.equal(models.length, 3);
        const container = (models[0]!.result as { container?: { id: string } }).container?.id;
        assert.match(container ?? '', /^container_/);
        assertPausedChain(requests, container!);
        assert.deepEqual(
          models.map((a) => a.summary),
          [
            'claude-sonnet-5-5 · call 1 · max_tokens 1024 · server tools web_search, code_execution',
            'claude-sonnet-5-5 · call 2 · max_tokens 1024 · server tools web_search, code_execution · continues a paused turn',
            'claude-sonnet-5-5 · call 3 · max_tokens 1024 · server tools web_search, code_execution',
          ],
        );
      }

      const events = await eventsOf(h.conversations, id);
      const server = events.filter((e) => e.type === 'server_tool_call' || e.type === 'server_tool_result');
      assert.deepEqual(
        server.map((e) => (e.type === 'server_tool_call' ? `${e.name}(${JSON.stringify(e.input)})` : `← ${e.name}`)),
        [
          'web_search({"query":"GM stock price"})',
          '← web_search',
          'bash_code_execution({"command":"python -c \\"print(38.50)\\""})',
          '← bash_code_execution',
        ],
      );
      const finished = events.filter((e) => e.type === 'model_call_finished');
      assert.deepEqual(
        finished.map((e) => e.type === 'model_call_finished' && e.stopReason),
        ['pause_turn', 'tool_use', 'end_turn'],
      );
    });
  }

  test("the orchestrator's summary call offers the server tools and sends the container back, as every call does", async () => {
    const prompt = uniquePrompt(STOCK_QUESTION);
    // A search result big enough (about 2,500 tokens) that the call after the code run passes the 1,000-token trigger.
    const bigResult = { ...SEARCH_RESULT, encrypted_content: 'E'.repeat(10_000) };
    h.mock.script(prompt, [
      {
        reply: {
          content: [
            { type: 'server_tool_use', id: 'srvtoolu_02search', name: 'web_search', input: { query: 'GM ticker' } },
            { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_02search', content: [bigResult] },
            { type: 'tool_use', name: 'get_ticker_symbol', input: { company_name: 'General Motors' } },
          ],
          stop_reason: 'tool_use',
        },
      },
      {
        reply: {
          content: [
            { type: 'server_tool_use', id: 'srvtoolu_02bash', name: 'bash_code_execution', input: { command: 'date' } },
            { type: 'bash_code_execution_tool_result', tool_use_id: 'srvtoolu_02bash', content: BASH_RESULT },
            { type: 'tool_use', name: 'get_current_stock_price', input: { symbol: 'GM' } },
          ],
          stop_reason: 'tool_use',
        },
      },
      { reply: { content: [{ type: 'text', text: 'GM trades at $38.50.' }], stop_reason: 'end_turn' } },
    ]);
    const id = `server-tools-summary-${randomUUID().slice(0, 8)}`;
    const reply = await h.conversations.sendMessage(id, prompt, {
      start: {
        tools: STOCK_TOOLS,
        serverTools: { webSearch: {}, codeExecution: {} },
        contextManagement: { mode: 'compaction', compaction: { by: 'orchestrator', triggerTokens: 1_000 } },
      },
    });
    assert.equal(reply.status, 'awaiting_user');
    assert.equal(reply.text, 'GM trades at $38.50.');
    assert.equal(reply.toolCalls, 2);

    const requests = h.mock.requestsFor(prompt);
    const isSummary = (r: RecordedRequest) =>
      JSON.stringify(r.body.messages.at(-1)).includes('Summarise the conversation');
    const summaries = requests.filter(isSummary);
    assert.equal(summaries.length, 1, 'one summary, before the third call');
    const [summary] = summaries as [RecordedRequest];
    assert.equal(requests.length, 4, 'two calls, the summary, the answer');
    const last = requests.at(-1)!;
    const container = last.body.container as string;
    assert.match(container ?? '', /^container_/, 'the code run named a container; the call after it sends it');
    assert.equal(summary.body.container, container, 'the summary call runs in the same container');
    assert.deepEqual(
      (summary.body.tools as Block[]).map((t) => t['type'] ?? t['name']),
      ['web_search_20250305', 'code_execution_20250825', 'get_ticker_symbol', 'get_current_stock_price'],
      'the summarised messages hold a web search: its tool is offered, like the conversation’s own',
    );
    assert.deepEqual(summary.body.tool_choice, { type: 'none' });
    assert.ok(
      plain(messagesOf(summary)[1]).some((b) => b.type === 'web_search_tool_result'),
      'the search is among the messages summarised',
    );
    assert.ok(!isSummary(last));
    assert.deepEqual(
      plain(messagesOf(last)[1]).map((b) => b.type),
      ['server_tool_use', 'bash_code_execution_tool_result', 'tool_use'],
      'the kept reply (the code run) follows the summary in place',
    );
    assert.equal((await h.conversations.getState(id)).context.compactions, 1);
  });

  test('tool search: deferred tools stay out until the model finds them; its blocks go back in place', async () => {
    const prompt = uniquePrompt(STOCK_QUESTION);
    h.mock.script(prompt, [
      {
        reply: {
          content: [
            { type: 'server_tool_use', name: 'tool_search_tool_regex', input: { query: 'stock.*price' } },
            {
              type: 'tool_search_tool_result',
              content: {
                type: 'tool_search_tool_search_result',
                tool_references: [{ type: 'tool_reference', tool_name: 'get_current_stock_price' }],
              },
            },
            { type: 'tool_use', name: 'get_current_stock_price', input: { symbol: 'GM' } },
          ],
          stop_reason: 'tool_use',
        },
      },
      { reply: { content: [{ type: 'text', text: 'GM is at $38.50.' }], stop_reason: 'end_turn' } },
    ]);
    const reply = await h.conversations.sendMessage(`tool-search-${randomUUID().slice(0, 8)}`, prompt, {
      start: { tools: STOCK_TOOLS, serverTools: { toolSearch: { defer: ['get_current_*'] } } },
    });
    assert.equal(reply.text, 'GM is at $38.50.');
    assert.equal(reply.toolCalls, 1);
    const [first, second] = h.mock.requestsFor(prompt) as [RecordedRequest, RecordedRequest];
    const tools = first.body.tools as Block[];
    assert.deepEqual(
      tools.map((t) => [t['name'], t['defer_loading'] === true, t['cache_control'] !== undefined]),
      [
        ['tool_search_tool_regex', false, false],
        ['get_ticker_symbol', false, true],
        ['get_current_stock_price', true, false],
      ],
      'the deferred tool is marked; the cache breakpoint is on the last tool in the prompt',
    );
    const assistant = messagesOf(second)[1];
    assert.deepEqual(
      plain(assistant).map((b) => b.type),
      ['server_tool_use', 'tool_search_tool_result', 'tool_use'],
    );
  });
});

describe('server tools after a worker SIGKILL mid-chain', () => {
  const rig = crashRig('server-tools-crash');

  test('killed while continuing the paused turn: a fresh worker sends the paused turn and the container again', async () => {
    await rig.startWorker();
    const prompt = uniquePrompt(STOCK_QUESTION);
    const [paused, continuation, last] = pausedChain() as [ScriptStep, ScriptStep, ScriptStep];
    // The continuation's first attempt hangs until its worker is killed; the retry gets the scripted reply.
    rig.mock.script(prompt, [paused, { demo: true, delayMs: 120_000 }, continuation, last]);
    const id = `server-tools-crash-${randomUUID().slice(0, 8)}`;
    await rig.conversations.startConversation({
      id,
      firstMessage: prompt,
      tools: STOCK_TOOLS,
      closeAfterFirstReply: true,
      serverTools: { webSearch: { maxUses: 3 }, codeExecution: {} },
      timeouts: { modelHeartbeat: '2 seconds' },
    });
    await rig.killAtRequest(prompt, 2);
    const result = await rig.conversations.waitForResult(id);
    assert.equal(result.status, 'completed');
    assert.equal(result.text, 'GM trades at $38.50.');

    const requests = rig.mock.requestsFor(prompt);
    assert.equal(requests.length, 4, 'three calls, the continuation twice');
    assert.deepEqual(requests[2]!.body.messages, requests[1]!.body.messages, 'the retry sends the same paused turn');
    assert.equal(requests[2]!.body.container, requests[1]!.body.container);
    const models = (await activitiesOf(rig.client, id)).filter((a) => a.type === 'callModel');
    const container = (models[0]!.result as { container?: { id: string } }).container!.id;
    assertPausedChain([requests[0]!, requests[2]!, requests[3]!], container);
  });
});
