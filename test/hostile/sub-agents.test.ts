// Entry points of sub-agents that an outsider or a model reaches: a conversation started raw as if it were a
// sub-agent, the signals a parent and its children send each other, and agent calls a model writes (hundreds at once,
// without a task, with extra keys, with a huge task). Whatever comes, the outcome is a status or an error result,
// never a failed workflow task, never a child nobody asked for, nothing unbounded.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { temporal } from '@temporalio/proto';
import { defineAgentTool } from '../../activities/agent-tool-definition';
import { MAX_AGENT_TASK_CHARS } from '../../common/agents';
import { CONVERSATION_WORKFLOW } from '../../common/conversation-types';
import { FailureType } from '../../common/failure-types';
import { demoTools } from '../../testing/demo-tools';
import { type Harness, lastUserBlocks, startHarness, uniquePrompt } from '../support/harness';
import {
  answeredConversation,
  assertUnharmed,
  conversationFailure,
  failedWorkflowTasks,
  HUGE,
  LONE_SURROGATE,
  skipWithoutCli,
  startFromCli,
} from '../support/hostile';
import { stateAwaitingApproval } from '../support/awaiting-approval';
import { callsTools, says } from '../support/script-steps';

const researcher = defineAgentTool({
  name: 'research_company',
  description: 'Researches one company.',
  agent: { tools: ['get_ticker_symbol'] },
});

const trader = defineAgentTool({
  name: 'trade_stock',
  description: 'Places one order.',
  agent: { tools: ['buy_stock'] },
});

let h: Harness;
before(async () => {
  h = await startHarness({ tools: [...demoTools, researcher, trader] });
});
after(async () => {
  await h?.close();
});

const lineage = {
  parentId: 'some-parent',
  callId: 'toolu_1',
  tool: 'research_company',
  depth: 1,
  maxDepth: 2,
  path: ['research_company'],
};

/** The children a conversation started, from its own history. */
async function childrenStarted(id: string): Promise<string[]> {
  const history = await h.client.workflow.getHandle(id).fetchHistory();
  return (history.events ?? [])
    .filter((e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED)
    .map((e) => e.startChildWorkflowExecutionInitiatedEventAttributes!.workflowId!);
}

/** The tool_result blocks the conversation's `n`-th model request (from 0) sent back. */
const resultsSent = (prompt: string, n: number) =>
  lastUserBlocks(h.mock.requestsFor(prompt)[n]!) as { is_error?: boolean; content: unknown }[];

describe('a conversation started raw as a sub-agent', () => {
  for (const [what, agent, reason] of [
    [
      'a lineage naming a parent it does not have',
      lineage,
      /agent is written by the conversation that starts a sub-agent/,
    ],
    [
      'a lineage naming its own id as the parent',
      'self',
      /agent is written by the conversation that starts a sub-agent/,
    ],
    ['a lineage deeper than any tree', { ...lineage, depth: 1_000 }, /agent\.depth/],
    ['a lineage with a huge path', { ...lineage, path: [HUGE] }, /agent\.path/],
    ['a lineage that is a string', 'garbage', /agent/],
  ] as const) {
    test(`with ${what} (raw client): InvalidConversationInput at once, no model call`, async () => {
      const id = `raw-agent-start-${Date.now()}-${Math.random().toString(36).slice(2, 6)}`;
      const prompt = uniquePrompt('Hello from a fake sub-agent');
      await h.client.workflow.start(CONVERSATION_WORKFLOW, {
        taskQueue: h.taskQueue,
        workflowId: id,
        args: [{ firstMessage: prompt, agent: agent === 'self' ? { ...lineage, parentId: id } : agent }],
      });
      const failure = await conversationFailure(h, id);
      assert.equal(failure.type, FailureType.InvalidConversationInput);
      assert.match(failure.message, reason);
      assert.ok(failure.message.length < 2_000, 'the message stays short');
      assert.equal(h.mock.requestsFor(prompt).length, 0);
      await assertUnharmed(h, id);
    });
  }

  test(
    'with a lineage, from the Temporal CLI: InvalidConversationInput at once',
    { skip: skipWithoutCli },
    async () => {
      const id = `cli-agent-start-${Date.now()}`;
      const started = await startFromCli(h, id, '--input', JSON.stringify({ firstMessage: 'Hello', agent: lineage }));
      assert.equal(started.ok, true, started.output);
      const failure = await conversationFailure(h, id);
      assert.equal(failure.type, FailureType.InvalidConversationInput);
      assert.match(failure.message, /agent is written by the conversation that starts a sub-agent/);
      await assertUnharmed(h, id);
    },
  );
});

describe('signals between a parent and its children, sent by anyone', () => {
  const approval = {
    callId: 'toolu_x',
    tool: 'buy_stock',
    input: { symbol: 'GM', quantity: 1 },
    argumentsDigest: 'abc',
    requestedAt: '2026-01-01T00:00:00.000Z',
    agent: 'not-a-child',
  };
  for (const [signal, what, payload] of [
    ['agentApproval', 'garbage', 'garbage'],
    ['agentApproval', 'null', null],
    ['agentApproval', 'an unknown kind', { kind: 'exploded', from: 'x' }],
    ['agentApproval', 'a huge from', { kind: 'settled', from: HUGE, agent: 'a', callId: 'c', outcome: 'approved' }],
    [
      'agentApproval',
      'a broken call id',
      { kind: 'settled', from: 'a', agent: 'a', callId: LONE_SURROGATE, outcome: 'approved' },
    ],
    [
      'agentApproval',
      'a request from a conversation that is not its child',
      { kind: 'requested', from: 'not-a-child', approval },
    ],
    [
      'agentApproval',
      'news of a settled call from a stranger',
      { kind: 'settled', from: 'x', agent: 'x', callId: 'c', outcome: 'approved' },
    ],
    ['agentDecision', 'garbage', 42],
    ['agentDecision', 'a decision without an agent', { callId: 'c', argumentsDigest: 'd', approve: true }],
    ['agentDecision', 'a huge reason', { callId: 'c', argumentsDigest: 'd', approve: true, agent: 'a', reason: HUGE }],
    [
      'agentDecision',
      'a decision for no waiting call',
      { callId: 'c', argumentsDigest: 'd', approve: true, agent: 'someone' },
    ],
  ] as const) {
    test(`${signal} with ${what} is ignored; the conversation still answers`, async () => {
      const id = await answeredConversation(h, `signal-${signal}`);
      await h.client.workflow.getHandle(id).signal(signal, payload);
      const state = await h.conversations.getState(id);
      assert.deepEqual(state.pendingApprovals, [], 'nothing waits for approval');
      assert.equal(state.status, 'awaiting_user');
      const reply = await h.conversations.sendMessage(id, uniquePrompt('Hello again'));
      assert.match(reply.text, /Hello again/);
      await h.conversations.end(id);
      await assertUnharmed(h, id);
    });
  }

  test('a decision sent down to a conversation as its own, for a call it does not wait on, is ignored', async () => {
    const id = await answeredConversation(h, 'decision-self');
    await h.client.workflow
      .getHandle(id)
      .signal('agentDecision', { callId: 'toolu_none', argumentsDigest: 'd', approve: true, agent: id });
    assert.equal((await h.conversations.getState(id)).status, 'awaiting_user');
    assert.match((await h.conversations.sendMessage(id, uniquePrompt('Hello again'))).text, /Hello again/);
    await assertUnharmed(h, id);
  });
});

describe('news from one running child about another', () => {
  test('a child cannot settle, or ask approval for, a call outside its own subtree', async () => {
    const prompt = uniquePrompt('Research and trade at once');
    const [slowTask, tradeTask] = [uniquePrompt('Research GM slowly'), uniquePrompt('Buy 1 GM meanwhile')];
    h.mock.script(prompt, [
      callsTools(['research_company', { task: slowTask }], ['trade_stock', { task: tradeTask }]),
      says('Both done.'),
    ]);
    h.mock.script(slowTask, [{ ...says('GM is GM.'), delayMs: 10_000 }]);
    h.mock.script(tradeTask, [callsTools(['buy_stock', { symbol: 'GM', quantity: 1 }]), says('Bought.')]);
    const id = `hostile-agent-news-${Date.now()}`;
    const turn = h.conversations.sendMessage(id, prompt, { start: { tools: ['research_company', 'trade_stock'] } });
    turn.catch(() => undefined);
    const [pending] = (await stateAwaitingApproval(h.conversations, id)).pendingApprovals;
    const [slow] = (await childrenStarted(id)).filter((child) => child.endsWith('-research_company'));
    assert.ok(slow && pending?.agent && h.mock.requestsFor(slowTask).length === 1, 'the slow child still runs');
    const parent = h.client.workflow.getHandle(id);
    // Posing as the slow child: news about the trader's call, and a request for a conversation elsewhere.
    await parent.signal('agentApproval', {
      kind: 'settled',
      from: slow,
      agent: pending.agent,
      callId: pending.callId,
      outcome: 'rejected',
    });
    await parent.signal('agentApproval', {
      kind: 'requested',
      from: slow,
      approval: { ...pending, callId: 'toolu_forged', agent: 'somewhere-else' },
    });
    const state = await h.conversations.getState(id);
    assert.deepEqual(state.pendingApprovals, [pending], "only the trader's own call waits");
    await h.conversations.approveToolCall(id, { ...pending, approve: true });
    assert.equal((await turn).text, 'Both done.');
    assert.match(String(lastUserBlocks(h.mock.requestsFor(tradeTask)[1]!)[0]!.content), /filled: 1 GM/);
    await assertUnharmed(h, id);
  });
});

describe('agent calls a model writes', () => {
  test('500 agent calls in one reply: only maxAgentCallsPerReply children start, every other call is an error', async () => {
    const prompt = uniquePrompt('Research everything');
    const tasks = Array.from({ length: 500 }, (_, i) => uniquePrompt(`Research company ${i}`));
    h.mock.script(prompt, [
      callsTools(...tasks.map((task): [string, Record<string, unknown>] => ['research_company', { task }])),
      says('Some done.'),
    ]);
    for (const task of tasks.slice(0, 4)) h.mock.script(task, [says('Researched.')]);
    const id = `hostile-500-agents-${Date.now()}`;
    const result = await h.conversations.sendMessage(id, prompt, {
      start: { tools: ['research_company'], limits: { maxToolCallsPerTurn: 1_000 } },
    });
    assert.equal(result.text, 'Some done.');
    const results = resultsSent(prompt, 1);
    assert.equal(results.length, 500);
    assert.deepEqual(
      results.slice(0, 4).map((r) => r.is_error ?? false),
      [false, false, false, false],
    );
    assert.ok(results.slice(4).every((r) => r.is_error === true && /^TooManyAgents/.test(String(r.content))));
    assert.equal((await childrenStarted(id)).length, 4, 'the default maxAgentCallsPerReply');
    assert.equal(
      tasks.slice(4).filter((task) => h.mock.requestsFor(task).length > 0).length,
      0,
      'no other child asked the model anything',
    );
    await assertUnharmed(h, id);
  });

  test('500 agent calls past maxToolCallsPerTurn: the turn stops, no child starts', async () => {
    const prompt = uniquePrompt('Research everything at once');
    const tasks = Array.from({ length: 500 }, (_, i) => uniquePrompt(`Research firm ${i}`));
    h.mock.script(prompt, [
      callsTools(...tasks.map((task): [string, Record<string, unknown>] => ['research_company', { task }])),
    ]);
    const id = `hostile-500-agents-limit-${Date.now()}`;
    const result = await h.conversations.sendMessage(id, prompt, { start: { tools: ['research_company'] } });
    assert.equal(result.status, 'limit_reached');
    assert.deepEqual(await childrenStarted(id), []);
    await assertUnharmed(h, id);
  });

  test('an input without a task, with extra keys, an empty or a huge task: InvalidInput, no child', async () => {
    const prompt = uniquePrompt('Research with bad inputs');
    const hugeTask = 'x'.repeat(MAX_AGENT_TASK_CHARS + 1);
    h.mock.script(prompt, [
      callsTools(
        ['research_company', {}],
        ['research_company', { task: 'Research GM', extra: 'key' }],
        ['research_company', { task: '   ' }],
        ['research_company', { task: hugeTask }],
        ['research_company', { task: 42 }],
      ),
      says('None ran.'),
    ]);
    const id = `hostile-agent-inputs-${Date.now()}`;
    const result = await h.conversations.sendMessage(id, prompt, { start: { tools: ['research_company'] } });
    assert.equal(result.text, 'None ran.');
    const results = resultsSent(prompt, 1);
    assert.equal(results.length, 5);
    for (const refused of results) {
      assert.equal(refused.is_error, true);
      assert.match(String(refused.content), /^InvalidInput: research_company/);
      assert.ok(String(refused.content).length < 2_000, 'the error does not echo the input');
    }
    assert.deepEqual(await childrenStarted(id), []);
    assert.equal(await failedWorkflowTasks(h, id), 0);
  });

  test('invalid agent calls take no slot from the valid ones of the same reply', async () => {
    const prompt = uniquePrompt('Research after bad calls');
    const task = uniquePrompt('Research GM after bad calls');
    h.mock.script(prompt, [
      callsTools(['research_company', {}], ['research_company', { extra: 1 }], ['research_company', { task }]),
      says('One ran.'),
    ]);
    h.mock.script(task, [says('GM is GM.')]);
    const id = `hostile-agent-slots-${Date.now()}`;
    await h.conversations.sendMessage(id, prompt, {
      start: { tools: ['research_company'], limits: { maxAgentCallsPerReply: 1 } },
    });
    const results = resultsSent(prompt, 1);
    assert.deepEqual(
      results.map((r) => r.is_error ?? false),
      [true, true, false],
    );
    assert.equal(JSON.stringify(results[2]!.content), '"GM is GM."');
    assert.equal((await childrenStarted(id)).length, 1);
  });
});
