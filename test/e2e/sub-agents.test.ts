// Sub-agents end to end (real dev server, real worker, the SDK against the local Messages API): an agent tool's call
// is a child conversation whose answer is the call's tool_result; several run at once; the parent's usage and cost
// include its children's; a child that fails, or may not start, is an error result the model reads.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { z } from 'zod';
import { defineAgentTool } from '../../activities/agent-tool-definition';
import type { ConversationInput } from '../../common/conversation-input';
import type { ConversationResult } from '../../common/conversation-types';
import { ConversationParent } from '../../common/search-attributes';
import { demoTools } from '../../testing/demo-tools';
import type { ScriptStep, ScriptUsage } from '../../testing/messages-api/types';
import { stateAwaitingApproval } from '../support/awaiting-approval';
import { durableEventsOf } from '../support/stream-events';
import { type Harness, lastUserBlocks, startHarness, uniquePrompt } from '../support/harness';
import { callsTools, says, answersJson } from '../support/script-steps';
import { waitUntil } from '../support/wait-until';

const researcher = defineAgentTool({
  name: 'research_company',
  description: 'Researches one company: its ticker symbol and current stock price.',
  agent: {
    system: 'You research one company with your tools and answer in one sentence.',
    tools: ['get_ticker_symbol', 'get_current_stock_price'],
  },
});
const quoter = defineAgentTool({
  name: 'quote_company',
  description: 'Gives a typed quote for one company.',
  agent: {
    tools: ['get_ticker_symbol'],
    output: { schema: z.object({ symbol: z.string(), price: z.number() }) },
  },
});

/** A sub-agent with a researcher of its own: a grandchild of whoever calls it. */
const analyst = defineAgentTool({
  name: 'analyse_sector',
  description: 'Analyses a sector, handing each company to a researcher.',
  agent: { system: 'You analyse a sector with your researchers.', tools: ['research_company'] },
});
/** A sub-agent that is offered itself: a call of it from its own child is a cycle. */
const delegator = defineAgentTool({
  name: 'delegate_task',
  description: 'Hands a task to a sub-agent, which may hand it on.',
  agent: { tools: ['delegate_task'] },
});
const trader = defineAgentTool({
  name: 'trade_stock',
  description: 'Places one order.',
  agent: { tools: ['buy_stock'] },
});
const desk = defineAgentTool({
  name: 'run_trading_desk',
  description: 'Runs a trading desk that places orders through a trader.',
  agent: { tools: ['trade_stock'] },
});
/** Its child names a tool no worker has: the child fails at its start. */
const broken = defineAgentTool({
  name: 'broken_agent',
  description: 'A sub-agent whose tools are missing.',
  agent: { tools: ['no_such_tool'] },
});
/** Its child may spend 3,000 tokens in its one turn. */
const frugal = defineAgentTool({
  name: 'frugal_research',
  description: 'Researches on a small budget.',
  agent: { tools: ['get_ticker_symbol'], budget: { perTurn: { tokens: 3_000 } } },
});
/** Its child has 3 seconds for its whole conversation. */
const hasty = defineAgentTool({
  name: 'hasty_research',
  description: 'Researches within 3 seconds.',
  agent: { tools: ['get_ticker_symbol'] },
  timeout: '3 seconds',
});
/** Each task needs a person's approval before its child starts. */
const supervised = defineAgentTool({
  name: 'supervised_research',
  description: 'Researches once a person approved the task.',
  agent: { tools: ['get_ticker_symbol'] },
  requiresApproval: true,
});
/** Its child continues as new after every model call. */
const marathon = defineAgentTool({
  name: 'marathon_research',
  description: 'Researches in many short runs.',
  agent: { tools: ['get_ticker_symbol', 'get_current_stock_price'], continueAsNewAfterModelCalls: 1 },
});
const xmlResearcher = defineAgentTool({
  name: 'research_company_xml',
  description: 'Researches one company, in the legacy protocol.',
  agent: { protocol: 'legacy-xml', tools: ['get_ticker_symbol'] },
});

let h: Harness;
before(async () => {
  h = await startHarness({
    tools: [
      ...demoTools,
      ...[
        researcher,
        quoter,
        analyst,
        delegator,
        trader,
        desk,
        broken,
        frugal,
        hasty,
        supervised,
        marathon,
        xmlResearcher,
      ],
    ],
  });
});
after(async () => {
  await h?.close();
});

/** The tool_result blocks the parent's `n`-th model request (from 0) sent back. */
function resultsSent(prompt: string, n: number) {
  return lastUserBlocks(h.mock.requestsFor(prompt)[n]!) as {
    tool_use_id: string;
    is_error?: boolean;
    content: unknown;
  }[];
}

/** A scripted reply that bills exactly `usage` (no cache tokens unless given). */
const billing = (step: ScriptStep, usage: ScriptUsage): ScriptStep => {
  assert.ok('reply' in step && step.reply);
  return {
    ...step,
    reply: {
      ...step.reply,
      usage: { cache_creation_input_tokens: 0, cache_read_input_tokens: 0, ...usage },
    },
  } as ScriptStep;
};

/** The children a conversation started, from its own history (exact at once, unlike the visibility list). */
async function childrenStarted(id: string): Promise<string[]> {
  const history = await h.client.workflow.getHandle(id).fetchHistory();
  return (history.events ?? [])
    .filter((e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED)
    .map((e) => e.startChildWorkflowExecutionInitiatedEventAttributes!.workflowId!);
}

/** The conversations the visibility list shows under `parent` (ConversationParent), once it shows `count`. */
async function listedChildren(parent: string, count: number): Promise<string[]> {
  return waitUntil(`${count} children listed under ${parent}`, async () => {
    const ids: string[] = [];
    for await (const child of h.client.workflow.list({ query: `ConversationParent = "${parent}"` })) {
      ids.push(child.workflowId);
    }
    return ids.length === count && ids.sort();
  });
}

/** What a child conversation was started with (its workflow input, from its history). */
async function startInput(workflowId: string): Promise<ConversationInput> {
  const history = await h.client.workflow.getHandle(workflowId).fetchHistory();
  const started = history.events![0]!.workflowExecutionStartedEventAttributes!;
  return defaultPayloadConverter.fromPayload(started.input!.payloads![0]!);
}

const resultOf = (workflowId: string) =>
  h.client.workflow.getHandle(workflowId).result() as Promise<ConversationResult>;

const statusOf = async (workflowId: string) => (await h.client.workflow.getHandle(workflowId).describe()).status.name;

/** The text of a legacy-xml request's last message. */
const lastText = (request: { body: { messages: { content: unknown }[] } }): string => {
  const content = request.body.messages.at(-1)!.content;
  return typeof content === 'string' ? content : (content as { text: string }[]).map((b) => b.text).join('');
};

/** A legacy-xml reply that calls one tool with these parameters. */
const callsInXml = (tool: string, parameters: Record<string, string>): ScriptStep => ({
  reply: {
    content: [
      {
        type: 'text',
        text: `<function_calls>\n<invoke>\n<tool_name>${tool}</tool_name>\n<parameters>\n${Object.entries(parameters)
          .map(([key, value]) => `<${key}>${value}</${key}>`)
          .join('\n')}\n</parameters>\n</invoke>\n`,
      },
    ],
    stop_reason: 'stop_sequence',
    stop_sequence: '</function_calls>',
  },
});

describe('sub-agents', () => {
  test('two agent calls in one reply run as two child conversations at once; their answers are the results', async () => {
    const prompt = uniquePrompt('Compare General Motors and Ford');
    const gmTask = uniquePrompt('Research General Motors');
    const fordTask = uniquePrompt('Research Ford');
    h.mock.script(prompt, [
      callsTools(['research_company', { task: gmTask }], ['research_company', { task: fordTask }]),
      says('GM is at $38.50 and Ford at $12.10.'),
    ]);
    h.mock.script(gmTask, [
      callsTools(['get_ticker_symbol', { company_name: 'General Motors' }]),
      callsTools(['get_current_stock_price', { symbol: 'GM' }]),
      says('General Motors (GM) trades at $38.50.'),
    ]);
    h.mock.script(fordTask, [says('Ford (F) trades at $12.10.')]);
    const id = `sub-agents-two-${Date.now()}`;
    const result = await h.conversations.sendMessage(id, prompt, { start: { tools: ['research_company'] } });
    assert.equal(result.text, 'GM is at $38.50 and Ford at $12.10.');

    const results = resultsSent(prompt, 1);
    assert.equal(results.length, 2);
    assert.deepEqual(
      results.map((r) => [r.is_error ?? false, JSON.stringify(r.content)]),
      [
        [false, JSON.stringify('General Motors (GM) trades at $38.50.')],
        [false, JSON.stringify('Ford (F) trades at $12.10.')],
      ].map(([e, c]) => [e, c]),
    );
    // The children are listed under their parent.
    const children = [];
    for await (const child of h.client.workflow.list({ query: `ConversationParent = "${id}"` })) children.push(child);
    assert.equal(children.length, 2);
    for (const child of children) {
      assert.equal(child.typedSearchAttributes.get(ConversationParent), id);
      assert.ok(child.workflowId.startsWith(`${id}/agent-`));
    }
    // The parent's usage counts its own 2 calls and its children's 3 + 1.
    const state = await h.conversations.getState(id);
    assert.equal(state.modelCalls, 2);
    const byModel = Object.values(state.byModel ?? {});
    assert.equal(
      byModel.reduce((sum, part) => sum + part.calls, 0),
      6,
    );
  });

  test("a typed child's answer is its JSON; an unknown tool in a child is an error result", async () => {
    const prompt = uniquePrompt('Quote GM');
    const task = uniquePrompt('Quote General Motors');
    h.mock.script(prompt, [callsTools(['quote_company', { task }]), says('Done.')]);
    h.mock.script(task, [answersJson({ symbol: 'GM', price: 38.5 })]);
    const id = `sub-agents-typed-${Date.now()}`;
    await h.conversations.sendMessage(id, prompt, { start: { tools: ['quote_company'] } });
    const [result] = resultsSent(prompt, 1);
    assert.equal(result!.is_error ?? false, false);
    assert.deepEqual(JSON.parse(result!.content as string), { symbol: 'GM', price: 38.5 });
  });
});

describe('sub-agents of sub-agents', () => {
  test("a child's own agent call runs a grandchild: its answer flows up, and the root counts every level", async () => {
    const prompt = uniquePrompt('Analyse the car makers');
    const sectorTask = uniquePrompt('Analyse the US car makers');
    const gmTask = uniquePrompt('Research General Motors for the analyst');
    const id = `sub-agents-nested-${Date.now()}`;
    // Each level bills its own round numbers, so every sum below is exact.
    h.mock.script(prompt, [
      billing(callsTools(['analyse_sector', { task: sectorTask }]), { input_tokens: 100, output_tokens: 10 }),
      billing(says('The sector is led by GM.'), { input_tokens: 200, output_tokens: 20 }),
    ]);
    h.mock.script(sectorTask, [
      billing(callsTools(['research_company', { task: gmTask }]), { input_tokens: 30, output_tokens: 3 }),
      billing(says('GM leads at $38.50.'), { input_tokens: 40, output_tokens: 4 }),
    ]);
    h.mock.script(gmTask, [
      billing(callsTools(['get_current_stock_price', { symbol: 'GM' }]), { input_tokens: 5, output_tokens: 1 }),
      billing(says('GM trades at $38.50.'), { input_tokens: 6, output_tokens: 2 }),
    ]);
    const result = await h.conversations.sendMessage(id, prompt, { start: { tools: ['analyse_sector'] } });
    assert.equal(result.text, 'The sector is led by GM.');

    const [child] = await childrenStarted(id);
    assert.ok(child);
    const [grandchild = ''] = await childrenStarted(child);
    assert.ok(grandchild.startsWith(`${child}/agent-`), 'the grandchild is named under its parent');
    assert.deepEqual(await listedChildren(child, 1), [grandchild], 'listed under the child, not the root');
    assert.deepEqual((await startInput(grandchild).then((input) => input.agent))?.path, [
      'analyse_sector',
      'research_company',
    ]);
    // The grandchild's answer is the child's tool_result; the child's is the root's.
    assert.equal(
      JSON.stringify(lastUserBlocks(h.mock.requestsFor(sectorTask)[1]!)[0]!.content),
      '"GM trades at $38.50."',
    );
    assert.equal(JSON.stringify(resultsSent(prompt, 1)[0]!.content), '"GM leads at $38.50."');

    const childResult = await resultOf(child);
    assert.equal(childResult.usage.inputTokens, 30 + 40 + 5 + 6, "the child's result includes its grandchild's");
    const state = await h.conversations.getState(id);
    assert.equal(state.modelCalls, 2, "the root's own calls");
    assert.equal(state.usage.inputTokens, 100 + 200 + 30 + 40 + 5 + 6);
    assert.equal(state.usage.outputTokens, 10 + 20 + 3 + 4 + 1 + 2);
    const byModel = Object.values(state.byModel ?? {});
    assert.equal(
      byModel.reduce((sum, part) => sum + part.calls, 0),
      6,
      'two model calls at each of three levels',
    );
    assert.equal(
      byModel.reduce((sum, part) => sum + part.usage.inputTokens, 0),
      state.usage.inputTokens,
    );
  });

  test("past the root's maxAgentDepth a child's agent call is an AgentDepthExceeded error, and the child carries on", async () => {
    const prompt = uniquePrompt('Analyse the airlines');
    const sectorTask = uniquePrompt('Analyse the US airlines');
    const deeperTask = uniquePrompt('Research Delta for the analyst');
    h.mock.script(prompt, [callsTools(['analyse_sector', { task: sectorTask }]), says('Airlines analysed.')]);
    h.mock.script(sectorTask, [
      callsTools(['research_company', { task: deeperTask }]),
      says('I researched Delta myself.'),
    ]);
    h.mock.script(deeperTask, [says('never asked')]);
    const id = `sub-agents-depth-${Date.now()}`;
    const result = await h.conversations.sendMessage(id, prompt, {
      start: { tools: ['analyse_sector'], limits: { maxAgentDepth: 1 } },
    });
    assert.equal(result.text, 'Airlines analysed.');
    const [child] = await childrenStarted(id);
    assert.equal((await startInput(child!)).agent?.maxDepth, 1, "the root's limit is handed down");
    const [refused] = lastUserBlocks(h.mock.requestsFor(sectorTask)[1]!);
    assert.equal(refused!.is_error, true);
    assert.match(String(refused!.content), /^AgentDepthExceeded: research_company would run 2 sub-agents deep/);
    assert.deepEqual(await childrenStarted(child!), [], 'no grandchild');
    assert.equal(h.mock.requestsFor(deeperTask).length, 0);
    assert.equal(JSON.stringify(resultsSent(prompt, 1)[0]!.content), '"I researched Delta myself."');
  });

  test('an agent tool offered to its own child is a cycle: AgentCycle, no runaway', async () => {
    const prompt = uniquePrompt('Delegate the report');
    const task = uniquePrompt('Write the quarterly report');
    const again = uniquePrompt('Write the quarterly report, again');
    h.mock.script(prompt, [callsTools(['delegate_task', { task }]), says('The report is written.')]);
    h.mock.script(task, [callsTools(['delegate_task', { task: again }]), says('Written by me.')]);
    h.mock.script(again, [callsTools(['delegate_task', { task: again }])]);
    const id = `sub-agents-cycle-${Date.now()}`;
    const result = await h.conversations.sendMessage(id, prompt, { start: { tools: ['delegate_task'] } });
    assert.equal(result.text, 'The report is written.');
    const [child] = await childrenStarted(id);
    const [cycle] = lastUserBlocks(h.mock.requestsFor(task)[1]!);
    assert.equal(cycle!.is_error, true);
    assert.match(String(cycle!.content), /^AgentCycle: delegate_task is already running above/);
    assert.deepEqual(await childrenStarted(child!), []);
    assert.equal(h.mock.requestsFor(again).length, 0);
  });
});

describe('how many sub-agents one reply starts', () => {
  test("past maxAgentCallsPerReply the reply's later agent calls get TooManyAgents; only the first start", async () => {
    const prompt = uniquePrompt('Research five companies');
    const tasks = ['GM', 'Ford', 'Tesla', 'Rivian', 'Lucid'].map((name) => uniquePrompt(`Research ${name}`));
    h.mock.script(prompt, [
      callsTools(...tasks.map((task): [string, Record<string, unknown>] => ['research_company', { task }])),
      says('Two done.'),
    ]);
    tasks.forEach((task, i) => h.mock.script(task, [says(`Answer ${i}`)]));
    const id = `sub-agents-too-many-${Date.now()}`;
    await h.conversations.sendMessage(id, prompt, {
      start: { tools: ['research_company'], limits: { maxAgentCallsPerReply: 2 } },
    });
    const results = resultsSent(prompt, 1);
    assert.deepEqual(
      results.map((r) => r.is_error ?? false),
      [false, false, true, true, true],
    );
    for (const refused of results.slice(2)) {
      assert.match(String(refused.content), /^TooManyAgents: one reply may start at most 2 sub-agents/);
    }
    assert.equal((await childrenStarted(id)).length, 2);
    assert.equal((await listedChildren(id, 2)).length, 2);
    assert.deepEqual(
      tasks.map((task) => h.mock.requestsFor(task).length),
      [1, 1, 0, 0, 0],
    );
  });
});

describe("sub-agents and the parent's budget", () => {
  test("each child gets an equal share of what is left, and its spending ends the parent's turn when it took it", async () => {
    const prompt = uniquePrompt('Research two companies on a budget');
    const [gmTask, fordTask] = [uniquePrompt('Research GM cheaply'), uniquePrompt('Research Ford cheaply')];
    h.mock.script(prompt, [
      billing(callsTools(['research_company', { task: gmTask }], ['research_company', { task: fordTask }]), {
        input_tokens: 1_000,
        output_tokens: 100,
      }),
      says('never asked'),
    ]);
    h.mock.script(gmTask, [billing(says('GM is GM.'), { input_tokens: 3_900, output_tokens: 100 })]);
    h.mock.script(fordTask, [billing(says('Ford is F.'), { input_tokens: 3_900, output_tokens: 100 })]);
    const id = `sub-agents-budget-${Date.now()}`;
    const result = await h.conversations.sendMessage(id, prompt, {
      start: { tools: ['research_company'], budget: { perConversation: { tokens: 10_000 } } },
    });
    const children = await childrenStarted(id);
    assert.equal(children.length, 2);
    for (const child of children) {
      const { options } = await startInput(child);
      // (10,000 − the parent's 1,100) / 2 children.
      assert.deepEqual(options.budget?.perConversation, { tokens: 4_450 });
      assert.deepEqual(options.budget?.perTurn, { tokens: 4_450 });
    }
    // 1,100 + 2 × 4,000 spent: the parent's next call (about 1,100 again) does not fit in what is left.
    assert.equal(result.status, 'budget_exhausted');
    assert.equal(h.mock.requestsFor(prompt).length, 1, 'no model call after the children spent the budget');
    const state = await h.conversations.getState(id);
    assert.equal(state.usage.inputTokens, 1_000 + 2 * 3_900);
  });

  test('a parent with no budget left starts no child: BudgetExhausted', async () => {
    const prompt = uniquePrompt('Research GM with nothing left');
    const task = uniquePrompt('Research GM with no budget');
    h.mock.script(prompt, [
      billing(callsTools(['research_company', { task }]), { input_tokens: 1_000, output_tokens: 100 }),
      says('never asked'),
    ]);
    h.mock.script(task, [says('never asked')]);
    const id = `sub-agents-no-budget-${Date.now()}`;
    const result = await h.conversations.sendMessage(id, prompt, {
      start: { tools: ['research_company'], budget: { perConversation: { tokens: 1_000 } } },
    });
    assert.equal(result.status, 'budget_exhausted');
    assert.deepEqual(await childrenStarted(id), []);
    assert.equal(h.mock.requestsFor(task).length, 0);
    const transcript = await h.conversations.getTranscript(id);
    const results = transcript.at(-1)!.content as { type: string; is_error?: boolean; content: unknown }[];
    assert.equal(results[0]!.type, 'tool_result');
    assert.equal(results[0]!.is_error, true);
    assert.match(JSON.stringify(results[0]!.content), /BudgetExhausted: the conversation has no budget left/);
  });
});

describe("approvals of a sub-agent's calls", () => {
  /** Starts a parent whose reply calls `tool` with `task`, and waits until it shows one approval. */
  async function awaitingApproval(name: string, tool: string, childScript: (task: string) => void) {
    const prompt = uniquePrompt(`Buy GM through ${name}`);
    const task = uniquePrompt(`Buy 10 GM for ${name}`);
    h.mock.script(prompt, [callsTools([tool, { task }]), says('The desk is done.')]);
    childScript(task);
    const id = `sub-agents-approval-${name}-${Date.now()}`;
    const turn = h.conversations.sendMessage(id, prompt, { start: { tools: [tool] } });
    turn.catch(() => undefined);
    const state = await stateAwaitingApproval(h.conversations, id);
    return { id, prompt, task, turn, state };
  }

  test("a child's call waits in the parent, named by the child; the parent's approval runs it there", async () => {
    const { id, prompt, task, turn, state } = await awaitingApproval('approve', 'trade_stock', (task) =>
      h.mock.script(task, [callsTools(['buy_stock', { symbol: 'GM', quantity: 10 }]), says('Bought 10 GM.')]),
    );
    const [child] = await childrenStarted(id);
    assert.equal(state.status, 'awaiting_approval');
    assert.equal(state.pendingApprovals.length, 1);
    const [pending] = state.pendingApprovals;
    assert.equal(pending!.agent, child);
    assert.equal(pending!.tool, 'buy_stock');
    assert.deepEqual(pending!.input, { symbol: 'GM', quantity: 10 });
    assert.equal(h.executions(child, 'buy_stock').length, 0, 'nothing bought before the approval');

    await h.conversations.approveToolCall(id, { ...pending!, approve: true });
    const result = await turn;
    assert.equal(result.text, 'The desk is done.');
    const [bought] = lastUserBlocks(h.mock.requestsFor(task)[1]!);
    assert.equal(bought!.is_error ?? false, false);
    assert.match(String(bought!.content), /filled: 10 GM at 38\.50/);
    assert.equal(JSON.stringify(resultsSent(prompt, 1)[0]!.content), '"Bought 10 GM."');
    assert.deepEqual((await h.conversations.getState(id)).pendingApprovals, []);
  });

  test('a rejection reaches the child as a rejected call', async () => {
    const { id, task, turn, state } = await awaitingApproval('reject', 'trade_stock', (task) =>
      h.mock.script(task, [callsTools(['buy_stock', { symbol: 'GM', quantity: 10 }]), says('The order was refused.')]),
    );
    await h.conversations.approveToolCall(id, { ...state.pendingApprovals[0]!, approve: false, reason: 'too risky' });
    await turn;
    const [refused] = lastUserBlocks(h.mock.requestsFor(task)[1]!);
    assert.equal(refused!.is_error, true);
    assert.match(String(refused!.content), /^Rejected: the user did not allow buy_stock.*too risky/);
    const [child] = await childrenStarted(id);
    assert.equal(h.executions(child, 'buy_stock').length, 0);
  });

  test("two levels down: the root shows the grandchild's call and its decision goes down through the child", async () => {
    const grandTask = uniquePrompt('Place the GM order for the desk');
    const { id, task, turn, state } = await awaitingApproval('two-levels', 'run_trading_desk', (task) => {
      h.mock.script(task, [callsTools(['trade_stock', { task: grandTask }]), says('The desk placed it.')]);
      h.mock.script(grandTask, [callsTools(['buy_stock', { symbol: 'GM', quantity: 3 }]), says('Bought 3 GM.')]);
    });
    const [child] = await childrenStarted(id);
    const [grandchild] = await childrenStarted(child!);
    const [pending] = state.pendingApprovals;
    assert.equal(pending!.agent, grandchild, "the call is the grandchild's");
    assert.equal((await h.conversations.getState(child!)).pendingApprovals[0]?.agent, grandchild);
    await h.conversations.approveToolCall(id, { ...pending!, approve: true });
    assert.equal((await turn).text, 'The desk is done.');
    assert.match(String(lastUserBlocks(h.mock.requestsFor(grandTask)[1]!)[0]!.content), /filled: 3 GM/);
    assert.equal(JSON.stringify(lastUserBlocks(h.mock.requestsFor(task)[1]!)[0]!.content), '"Bought 3 GM."');
  });
});

describe("a parent's event stream", () => {
  test("shows each child's start and end, and its child's approval asked and settled, naming the child", async () => {
    const prompt = uniquePrompt('Buy GM and tell me about it');
    const task = uniquePrompt('Buy 5 GM, streamed');
    h.mock.script(prompt, [callsTools(['trade_stock', { task }]), says('Bought.')]);
    h.mock.script(task, [callsTools(['buy_stock', { symbol: 'GM', quantity: 5 }]), says('Bought 5 GM.')]);
    const id = `sub-agents-stream-${Date.now()}`;
    const turn = h.conversations.sendMessage(id, prompt, {
      start: { tools: ['trade_stock'], closeAfterFirstReply: true },
    });
    turn.catch(() => undefined);
    const state = await stateAwaitingApproval(h.conversations, id);
    await h.conversations.approveToolCall(id, { ...state.pendingApprovals[0]!, approve: true });
    await turn;
    const [child] = await childrenStarted(id);
    const events = (await durableEventsOf(h.conversations, id)).filter((e) =>
      ['agent_started', 'agent_finished', 'approval_requested', 'approval_settled'].includes(e.type),
    );
    assert.deepEqual(
      events.map((e) => e.type),
      ['agent_started', 'approval_requested', 'approval_settled', 'agent_finished'],
    );
    const [started, requested, settled, finished] = events;
    assert.ok(started?.type === 'agent_started');
    assert.deepEqual([started.tool, started.agentId, started.task], ['trade_stock', child, task]);
    assert.ok(requested?.type === 'approval_requested');
    assert.equal(requested.approval.agent, child);
    assert.ok(settled?.type === 'approval_settled');
    assert.deepEqual([settled.agent, settled.outcome], [child, 'approved']);
    assert.ok(finished?.type === 'agent_finished');
    assert.equal(finished.agentId, child);
    assert.equal(finished.callId, started.callId);
    assert.equal(finished.isError, false);
    assert.equal(finished.usage?.inputTokens, (await resultOf(child!)).usage.inputTokens);
  });
});

describe('approvals of calls that share an id', () => {
  test("two children's calls with the same id: a decision must name the agent, and reaches only that child", async () => {
    const prompt = uniquePrompt('Buy through two traders');
    const [gmTask, fordTask] = [uniquePrompt('Buy 1 GM for trader one'), uniquePrompt('Buy 2 F for trader two')];
    h.mock.script(prompt, [
      callsTools(['trade_stock', { task: gmTask }], ['trade_stock', { task: fordTask }]),
      says('Both traders are done.'),
    ]);
    const buys = (symbol: string, quantity: number): ScriptStep => ({
      reply: {
        content: [{ type: 'tool_use', id: 'toolu_same', name: 'buy_stock', input: { symbol, quantity } }],
        stop_reason: 'tool_use',
      },
    });
    h.mock.script(gmTask, [buys('GM', 1), says('GM bought.')]);
    h.mock.script(fordTask, [buys('F', 2), says('Ford refused.')]);
    const id = `sub-agents-same-id-${Date.now()}`;
    const turn = h.conversations.sendMessage(id, prompt, { start: { tools: ['trade_stock'] } });
    turn.catch(() => undefined);
    const state = await stateAwaitingApproval(h.conversations, id, { approvals: 2 });
    const [gm, ford] = [
      state.pendingApprovals.find((a) => a.input.symbol === 'GM')!,
      state.pendingApprovals.find((a) => a.input.symbol === 'F')!,
    ];
    assert.equal(gm.callId, ford.callId);
    assert.notEqual(gm.agent, ford.agent);
    const { agent: _agent, ...unnamed } = gm;
    await assert.rejects(h.conversations.approveToolCall(id, { ...unnamed, approve: true }), /name the agent/);
    await h.conversations.approveToolCall(id, { ...ford, approve: false });
    await h.conversations.approveToolCall(id, { ...gm, approve: true });
    assert.equal((await turn).text, 'Both traders are done.');
    assert.match(String(lastUserBlocks(h.mock.requestsFor(gmTask)[1]!)[0]!.content), /filled: 1 GM/);
    assert.match(String(lastUserBlocks(h.mock.requestsFor(fordTask)[1]!)[0]!.content), /^Rejected/);
    assert.equal(h.executions(ford.agent, 'buy_stock').length, 0);
  });
});

describe('sub-agents that fail', () => {
  test('a child that cannot start its conversation is an AgentFailed error with the reason', async () => {
    const prompt = uniquePrompt('Use the broken agent');
    const task = uniquePrompt('Do something broken');
    h.mock.script(prompt, [callsTools(['broken_agent', { task }]), says('It failed.')]);
    const id = `sub-agents-broken-${Date.now()}`;
    const result = await h.conversations.sendMessage(id, prompt, { start: { tools: ['broken_agent'] } });
    assert.equal(result.text, 'It failed.');
    const [failed] = resultsSent(prompt, 1);
    assert.equal(failed!.is_error, true);
    assert.match(String(failed!.content), /^AgentFailed: UnknownTools: Unknown tools: no_such_tool/);
    assert.equal(h.mock.requestsFor(task).length, 0);
  });

  test('a child whose turn ends budget_exhausted is an error, and what it spent counts in the parent', async () => {
    const prompt = uniquePrompt('Research on a tiny budget');
    const task = uniquePrompt('Research GM within 3,000 tokens');
    h.mock.script(prompt, [callsTools(['frugal_research', { task }]), says('It ran out.')]);
    h.mock.script(task, [
      billing(callsTools(['get_ticker_symbol', { company_name: 'General Motors' }]), {
        input_tokens: 2_500,
        output_tokens: 100,
      }),
      says('never asked'),
    ]);
    const id = `sub-agents-child-budget-${Date.now()}`;
    const result = await h.conversations.sendMessage(id, prompt, { start: { tools: ['frugal_research'] } });
    assert.equal(result.text, 'It ran out.');
    const [failed] = resultsSent(prompt, 1);
    assert.equal(failed!.is_error, true);
    assert.match(String(failed!.content), /^AgentFailed: the sub-agent ended budget_exhausted/);
    assert.equal(h.mock.requestsFor(task).length, 1);
    const state = await h.conversations.getState(id);
    assert.ok(state.usage.inputTokens >= 2_500, `the child's 2,500 input tokens count (${state.usage.inputTokens})`);
    assert.equal(
      Object.values(state.byModel ?? {}).reduce((sum, part) => sum + part.calls, 0),
      3,
    );
  });
});

describe('cancelling a parent', () => {
  test('while its child waits for the model: the child ends cancelled, then the parent', async () => {
    const prompt = uniquePrompt('Research slowly');
    const task = uniquePrompt('Research GM slowly');
    h.mock.script(prompt, [callsTools(['research_company', { task }]), says('never asked')]);
    h.mock.script(task, [{ ...says('too late'), delayMs: 5_000 }]);
    const id = `sub-agents-cancel-${Date.now()}`;
    const turn = h.conversations.sendMessage(id, prompt, { start: { tools: ['research_company'] } });
    turn.catch(() => undefined);
    await waitUntil('the child to ask the model', () => h.mock.requestsFor(task).length === 1);
    const [child] = await childrenStarted(id);
    await h.conversations.cancel(id);
    await waitUntil('the child to end cancelled', async () => (await statusOf(child!)) === 'CANCELLED');
    await waitUntil('the parent to end cancelled', async () => (await statusOf(id)) === 'CANCELLED');
    assert.equal(h.mock.requestsFor(prompt).length, 1, 'the parent never called the model again');
  });

  test("while its child waits for approval: both end cancelled, and the child's approval waits no more", async () => {
    const prompt = uniquePrompt('Buy GM, then cancel');
    const task = uniquePrompt('Buy 4 GM before the cancel');
    h.mock.script(prompt, [callsTools(['trade_stock', { task }]), says('never asked')]);
    h.mock.script(task, [callsTools(['buy_stock', { symbol: 'GM', quantity: 4 }]), says('never asked')]);
    const id = `sub-agents-cancel-approval-${Date.now()}`;
    const turn = h.conversations.sendMessage(id, prompt, { start: { tools: ['trade_stock'] } });
    turn.catch(() => undefined);
    const [pending] = (await stateAwaitingApproval(h.conversations, id)).pendingApprovals;
    await h.conversations.cancel(id);
    await waitUntil('the child to end cancelled', async () => (await statusOf(pending!.agent!)) === 'CANCELLED');
    await waitUntil('the parent to end cancelled', async () => (await statusOf(id)) === 'CANCELLED');
    const state = await h.conversations.getState(id);
    assert.equal(state.status, 'cancelled');
    assert.deepEqual(state.pendingApprovals, []);
    assert.equal(h.executions(pending!.agent, 'buy_stock').length, 0);
  });

  test('terminating the parent: the server cancels its running child', async () => {
    const prompt = uniquePrompt('Research, then be terminated');
    const task = uniquePrompt('Research GM until terminated');
    h.mock.script(prompt, [callsTools(['research_company', { task }]), says('never asked')]);
    h.mock.script(task, [{ ...says('too late'), delayMs: 5_000 }]);
    const id = `sub-agents-terminate-${Date.now()}`;
    const turn = h.conversations.sendMessage(id, prompt, { start: { tools: ['research_company'] } });
    turn.catch(() => undefined);
    await waitUntil('the child to ask the model', () => h.mock.requestsFor(task).length === 1);
    const [child] = await childrenStarted(id);
    await h.client.workflow.getHandle(id).terminate('test: the parent goes away');
    await waitUntil('the child to end cancelled', async () => (await statusOf(child!)) === 'CANCELLED');
  });
});

describe('sub-agents across the protocols', () => {
  test('a legacy-xml parent calls a native child: the task comes from its XML, the answer goes back in XML', async () => {
    const prompt = uniquePrompt('Research Ford the old way');
    const task = uniquePrompt('Research Ford for an XML parent');
    h.mock.script(prompt, [callsInXml('research_company', { task }), says('<answer>Ford is at $12.10.</answer>')]);
    h.mock.script(task, [says('Ford (F) trades at $12.10.')]);
    const id = `sub-agents-xml-parent-${Date.now()}`;
    const result = await h.conversations.sendMessage(id, prompt, {
      start: { tools: ['research_company'], protocol: 'legacy-xml' },
    });
    assert.equal(result.text, 'Ford is at $12.10.');
    const [child] = await childrenStarted(id);
    assert.equal((await startInput(child!)).firstMessage, task);
    assert.ok(h.mock.requestsFor(task)[0]!.body.tools, 'the child is native: its tools go as tools');
    assert.match(lastText(h.mock.requestsFor(prompt)[1]!), /<stdout>\s*Ford \(F\) trades at \$12\.10\.\s*<\/stdout>/);
  });

  test('a native parent calls a legacy-xml child: the child calls its tools in XML and answers in <answer>', async () => {
    const prompt = uniquePrompt('Research Ford in XML');
    const task = uniquePrompt('Research Ford in the legacy protocol');
    h.mock.script(prompt, [callsTools(['research_company_xml', { task }]), says('Ford is F.')]);
    h.mock.script(task, [
      callsInXml('get_ticker_symbol', { company_name: 'Ford' }),
      says('<answer>Ford trades as F.</answer>'),
    ]);
    const id = `sub-agents-xml-child-${Date.now()}`;
    const result = await h.conversations.sendMessage(id, prompt, { start: { tools: ['research_company_xml'] } });
    assert.equal(result.text, 'Ford is F.');
    const childRequests = h.mock.requestsFor(task);
    assert.equal(childRequests[0]!.body.tools, undefined, 'the child is legacy-xml: no native tools');
    assert.match(lastText(childRequests[1]!), /<stdout>\s*F\s*<\/stdout>/);
    const [answer] = resultsSent(prompt, 1);
    assert.equal(answer!.is_error ?? false, false);
    assert.equal(JSON.stringify(answer!.content), '"Ford trades as F."');
  });
});

describe('sub-agents over time', () => {
  test('a child that runs past its timeout is an AgentTimedOut error; the parent goes on', async () => {
    const prompt = uniquePrompt('Research in a hurry');
    const task = uniquePrompt('Research GM in a hurry');
    h.mock.script(prompt, [callsTools(['hasty_research', { task }]), says('It took too long.')]);
    h.mock.script(task, [{ ...says('too late'), delayMs: 8_000 }]);
    const id = `sub-agents-timeout-${Date.now()}`;
    const result = await h.conversations.sendMessage(id, prompt, { start: { tools: ['hasty_research'] } });
    assert.equal(result.text, 'It took too long.');
    const [timedOut] = resultsSent(prompt, 1);
    assert.equal(timedOut!.is_error, true);
    assert.match(String(timedOut!.content), /^AgentTimedOut: the sub-agent hasty_research .* within 3 seconds/);
    const [child] = await childrenStarted(id);
    assert.equal(await statusOf(child!), 'TIMED_OUT');
  });

  test('an agent tool that requires approval starts its child only once a person approved the task', async () => {
    const prompt = uniquePrompt('Research under supervision');
    const [approved, refused] = [uniquePrompt('Research GM, approved'), uniquePrompt('Research Ford, refused')];
    h.mock.script(prompt, [
      callsTools(['supervised_research', { task: approved }], ['supervised_research', { task: refused }]),
      says('One was allowed.'),
    ]);
    h.mock.script(approved, [says('GM is GM.')]);
    h.mock.script(refused, [says('never asked')]);
    const id = `sub-agents-supervised-${Date.now()}`;
    const turn = h.conversations.sendMessage(id, prompt, { start: { tools: ['supervised_research'] } });
    turn.catch(() => undefined);
    const state = await stateAwaitingApproval(h.conversations, id, { approvals: 2 });
    assert.deepEqual(await childrenStarted(id), [], 'no child before a decision');
    const byTask = (task: string) => state.pendingApprovals.find((a) => a.input.task === task)!;
    assert.equal(byTask(approved).agent, undefined, "the parent's own call");
    await h.conversations.approveToolCall(id, { ...byTask(approved), approve: true });
    await h.conversations.approveToolCall(id, { ...byTask(refused), approve: false });
    assert.equal((await turn).text, 'One was allowed.');
    assert.deepEqual(
      resultsSent(prompt, 1).map((r) => r.is_error ?? false),
      [false, true],
    );
    assert.equal((await childrenStarted(id)).length, 1);
    assert.equal(h.mock.requestsFor(refused).length, 0);
  });

  test('a child that continues as new answers from its last run, with the spending of all its runs', async () => {
    const prompt = uniquePrompt('Research in short runs');
    const task = uniquePrompt('Research GM in short runs');
    h.mock.script(prompt, [callsTools(['marathon_research', { task }]), says('Done in runs.')]);
    h.mock.script(task, [
      billing(callsTools(['get_ticker_symbol', { company_name: 'General Motors' }]), {
        input_tokens: 7,
        output_tokens: 1,
      }),
      billing(callsTools(['get_current_stock_price', { symbol: 'GM' }]), { input_tokens: 8, output_tokens: 1 }),
      billing(says('GM trades at $38.50.'), { input_tokens: 9, output_tokens: 1 }),
    ]);
    const id = `sub-agents-child-runs-${Date.now()}`;
    const result = await h.conversations.sendMessage(id, prompt, { start: { tools: ['marathon_research'] } });
    assert.equal(result.text, 'Done in runs.');
    assert.equal(JSON.stringify(resultsSent(prompt, 1)[0]!.content), '"GM trades at $38.50."');
    const [child] = await childrenStarted(id);
    const childResult = await resultOf(child!);
    assert.equal(childResult.usage.inputTokens, 7 + 8 + 9, 'every run of the child');
    assert.ok((await h.conversations.getState(child!)).runs >= 3, 'the child continued as new');
    const state = await h.conversations.getState(id);
    assert.equal(
      Object.values(state.byModel ?? {}).reduce((sum, part) => sum + part.calls, 0),
      5,
    );
  });

  test('each turn and each run of a parent starts children of its own; usage carries over continue-as-new', async () => {
    const [first, second] = [uniquePrompt('Research GM first'), uniquePrompt('Research GM again')];
    const [task1, task2] = [uniquePrompt('Research GM, turn one'), uniquePrompt('Research GM, turn two')];
    h.mock.script(first, [
      callsTools(['research_company', { task: task1 }]),
      says('First done.'),
      callsTools(['research_company', { task: task2 }]),
      says('Second done.'),
    ]);
    h.mock.script(task1, [says('GM one.')]);
    h.mock.script(task2, [says('GM two.')]);
    const id = `sub-agents-turns-${Date.now()}`;
    await h.conversations.sendMessage(id, first, {
      start: { tools: ['research_company'], continueAsNewAfterModelCalls: 2 },
    });
    assert.equal((await h.conversations.sendMessage(id, second)).text, 'Second done.');
    const state = await h.conversations.getState(id);
    assert.ok(state.runs >= 2, `the parent continued as new (${state.runs} runs)`);
    const children = await listedChildren(id, 2);
    assert.equal(new Set(children).size, 2, 'two children, two ids');
    assert.equal(
      Object.values(state.byModel ?? {}).reduce((sum, part) => sum + part.calls, 0),
      6,
      "the parent's 4 calls and its children's 2, across runs",
    );
    await h.conversations.end(id);
  });
});
