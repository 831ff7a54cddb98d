// Sub-agents survive what a conversation survives (issue #33, durability): a worker SIGKILLed while three children of
// one reply run, the Temporal server SIGKILLed and restarted while they run, a child whose task queue nobody polls, and
// a parent that continues-as-new right after the reply that started a child. The crash cases run the rig's worker
// (scripts/rig-worker.ts with RIG_AGENT_TOOLS=1: the demo tools plus `research_company`) in processes of their own;
// the other two need no crash and run on an in-process worker (test/support/harness.ts).
//
// "During" is never guessed with a timer: a child's model call is made slow by the local server's script and we wait
// until the server has received it; a child's tool is made slow by TOOL_LATENCY_MS and we wait for its `start` line in
// the execution log.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@temporalio/client';
import { defineAgentTool } from '../../activities/agent-tool-definition';
import { ConversationParent } from '../../common/search-attributes';
import { researchCompany } from '../../scripts/rig-agent-tools';
import { demoTools } from '../../testing/demo-tools';
import { crashRig } from '../support/crash-rig';
import {
  attemptsOf,
  type Harness,
  lastUserBlocks,
  readExecutions,
  startHarness,
  uniquePrompt,
} from '../support/harness';
import { callsTools, says } from '../support/script-steps';
import { waitUntil } from '../support/wait-until';

/** A model call that is "in flight" stays so far longer than any test waits; its retry gets the next scripted step. */
const SLOW_MODEL_MS = 120_000;
const COMPANIES = [
  ['General Motors', 'GM'],
  ['Ford', 'F'],
  ['Tesla', 'TSLA'],
] as const;
/** The parent: one-shot, calling only the agent tool; a dead worker is noticed within 2 s of its model calls. */
const PARENT_OPTIONS = {
  tools: ['research_company'],
  closeAfterFirstReply: true,
  timeouts: { modelHeartbeat: '2 seconds' },
};

/** The sub-agents of a conversation, as visibility lists them (every run of every child). */
async function childrenOf(client: Client, parentId: string) {
  const children = [];
  for await (const child of client.workflow.list({ query: `ConversationParent = "${parentId}"` })) {
    children.push(child);
  }
  return children.sort((a, b) => a.workflowId.localeCompare(b.workflowId));
}

/**
 * Once visibility (updated in the server's own time) lists at least `n` of them, none still running: the sub-agents of
 * a conversation whose reply used them.
 */
function closedChildrenOf(client: Client, parentId: string, n: number) {
  return waitUntil(`${n} closed children of ${parentId} in visibility`, async () => {
    const children = await childrenOf(client, parentId);
    return children.length >= n && children.every((child) => child.status.name !== 'RUNNING') && children;
  });
}

/** The event types of one run's history, in order. */
async function eventTypesOf(client: Client, workflowId: string, runId?: string): Promise<string[]> {
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  return (history.events ?? []).map((event) => {
    const key = Object.keys(event).find((k) => k.endsWith('EventAttributes') && event[k as keyof typeof event]);
    return key!.replace(/EventAttributes$/, '');
  });
}

const count = (types: readonly string[], type: string) => types.filter((t) => t === type).length;

/** The tool_result blocks a request sent back, in order. */
function toolResultsOf(request: Parameters<typeof lastUserBlocks>[0]) {
  return lastUserBlocks(request).filter((b) => b.type === 'tool_result');
}

describe('a worker SIGKILLed while three sub-agents of one reply wait on their model; a fresh worker takes over', () => {
  const rig = crashRig('sub-agents-crash', { workerEnv: { RIG_AGENT_TOOLS: '1' } });

  test('the parent answers with all three answers; three children, each started once, each step answered once', async () => {
    const first = await rig.startWorker();
    const prompt = uniquePrompt('Research General Motors, Ford and Tesla');
    const tasks = COMPANIES.map(([company]) => uniquePrompt(`Research ${company}`));
    const answers = COMPANIES.map(([company, symbol]) => `${company} trades as ${symbol}.`);
    rig.mock.script(prompt, [
      callsTools(...tasks.map((task): [string, Record<string, unknown>] => ['research_company', { task }])),
      says('All three researched.'),
    ]);
    COMPANIES.forEach(([company], i) =>
      rig.mock.script(tasks[i]!, [
        callsTools(['get_ticker_symbol', { company_name: company }]),
        // In flight when the worker dies; the retry (on the fresh worker) gets the next step.
        { ...says(answers[i]!), delayMs: SLOW_MODEL_MS },
        says(answers[i]!),
      ]),
    );
    const id = `sub-agents-crash-${randomUUID().slice(0, 8)}`;
    await rig.conversations.startConversation({ id, firstMessage: prompt, ...PARENT_OPTIONS });

    // In position: every child ran its tool and waits on its second model call.
    await waitUntil('every child to make its second model call', () =>
      tasks.every((task) => rig.mock.requestsFor(task).length >= 2),
    );
    const children = await waitUntil('three children in visibility', async () => {
      const listed = await childrenOf(rig.client, id);
      return listed.length >= 3 && listed;
    });
    assert.equal(children.length, 3, 'three children run');
    for (const child of children) {
      assert.deepEqual(
        readExecutions(rig.executionLog, child.workflowId, 'get_ticker_symbol').map((e) => [e.event, e.pid]),
        [
          ['start', first.pid],
          ['finish', first.pid],
        ],
        `${child.workflowId} ran its tool before the kill`,
      );
    }
    await rig.killAtRequest(tasks[2]!, 2);

    const result = await rig.conversations.waitForResult(id);
    assert.equal(result.status, 'completed');
    assert.equal(result.text, 'All three researched.');
    assert.equal(result.modelCalls, 2, "the parent's own model calls");

    // The parent's second request carries the three answers, none an error, in the order of the calls.
    const parentRequests = rig.mock.requestsFor(prompt);
    assert.equal(parentRequests.length, 2, 'no parent model call was repeated');
    assert.deepEqual(
      toolResultsOf(parentRequests[1]!).map((r) => [r.is_error ?? false, r.content]),
      answers.map((answer) => [false, answer]),
    );

    // No child started twice: three executions under the parent (a restart would list a fourth), each completed,
    // and the parent's history started three and saw three complete.
    const ended = await closedChildrenOf(rig.client, id, 3);
    assert.deepEqual(
      ended.map((child) => [child.workflowId, child.runId, child.status.name]),
      children.map((child) => [child.workflowId, child.runId, 'COMPLETED']),
    );
    const parentEvents = await eventTypesOf(rig.client, id);
    assert.equal(count(parentEvents, 'startChildWorkflowExecutionInitiated'), 3);
    assert.equal(count(parentEvents, 'childWorkflowExecutionStarted'), 3);
    assert.equal(count(parentEvents, 'childWorkflowExecutionCompleted'), 3);

    for (const [i, task] of tasks.entries()) {
      // Three steps, three requests: the killed one (it had started streaming) and its retry, same messages.
      const requests = rig.mock.requestsFor(task);
      assert.equal(requests.length, 3, `${task}: each scripted step was asked for once`);
      assert.equal(requests[1]!.status, 200, 'the killed call had started streaming');
      assert.deepEqual(requests[2]!.body.messages, requests[1]!.body.messages, 'the retry sends the same transcript');
      assert.match(JSON.stringify(requests[2]!.body.messages), new RegExp(COMPANIES[i]![1]), 'with the tool result');
    }
    for (const child of ended) {
      // The finished tool never ran again; only the killed model call was retried, noticed by its heartbeat.
      assert.deepEqual(
        readExecutions(rig.executionLog, child.workflowId).map((e) => [e.tool, e.event, e.pid]),
        [
          ['get_ticker_symbol', 'start', first.pid],
          ['get_ticker_symbol', 'finish', first.pid],
        ],
      );
      const modelCalls = (await attemptsOf(rig.client, child.workflowId)).filter((a) => a.type === 'callModel');
      assert.equal(modelCalls.length, 2, `${child.workflowId}: two model calls`);
      assert.equal(modelCalls[0]!.attempt, 1);
      assert.ok(modelCalls[1]!.attempt >= 2, `${child.workflowId}: the killed call was retried`);
      assert.match(modelCalls[1]!.lastFailure ?? '', /heartbeat/i);
      assert.equal(child.typedSearchAttributes.get(ConversationParent), id);
    }
  });
});

describe("the rig's own Temporal server SIGKILLed and restarted while three sub-agents run their tools", () => {
  const rig = crashRig('sub-agents-server', {
    ownServer: true,
    workerEnv: { RIG_AGENT_TOOLS: '1', TOOL_LATENCY_MS: '3000' },
  });

  test('the tools finish while the server is down; after the restart every child answers and so does the parent', async (t) => {
    const worker = await rig.startWorker();
    const prompt = uniquePrompt('Research General Motors, Ford and Tesla');
    const tasks = COMPANIES.map(([company]) => uniquePrompt(`Research ${company}`));
    const answers = COMPANIES.map(([company, symbol]) => `${company} trades as ${symbol}.`);
    rig.mock.script(prompt, [
      callsTools(...tasks.map((task): [string, Record<string, unknown>] => ['research_company', { task }])),
      says('All three researched.'),
    ]);
    COMPANIES.forEach(([company], i) =>
      rig.mock.script(tasks[i]!, [callsTools(['get_ticker_symbol', { company_name: company }]), says(answers[i]!)]),
    );
    const id = `sub-agents-server-${randomUUID().slice(0, 8)}`;
    await rig.conversations.startConversation({ id, firstMessage: prompt, ...PARENT_OPTIONS });

    const tickers = (event: 'start' | 'finish') =>
      readExecutions(rig.executionLog, id, 'get_ticker_symbol').filter((e) => e.event === event);
    await waitUntil('every child to start its tool', () => tickers('start').length >= 3, { timeoutMs: 60_000 });
    await rig.server!.kill();
    // The worker lives on; the tools finish with nobody to report to.
    await waitUntil('every tool to finish in the worker', () => tickers('finish').length >= 3, { timeoutMs: 60_000 });
    assert.equal(rig.server!.process?.signalCode, 'SIGKILL');
    await rig.server!.restart();

    const result = await rig.conversations.waitForResult(id);
    assert.equal(result.status, 'completed');
    assert.equal(result.text, 'All three researched.');
    assert.equal(worker.running, true, 'the same worker process did all the work');
    assert.deepEqual(
      toolResultsOf(rig.mock.requestsFor(prompt).at(-1)!).map((r) => [r.is_error ?? false, r.content]),
      answers.map((answer) => [false, answer]),
    );
    assert.equal(rig.mock.requestsFor(prompt).length, 2, "the parent's two model calls, once each");

    const children = await closedChildrenOf(rig.client, id, 3);
    assert.equal(children.length, 3, 'three children, none started twice');
    assert.ok(children.every((child) => child.status.name === 'COMPLETED'));
    const parentEvents = await eventTypesOf(rig.client, id);
    assert.equal(count(parentEvents, 'startChildWorkflowExecutionInitiated'), 3);
    assert.equal(count(parentEvents, 'childWorkflowExecutionCompleted'), 3);
    for (const [i, task] of tasks.entries()) {
      assert.equal(rig.mock.requestsFor(task).length, 2, `${COMPANIES[i]![0]}: two model calls, once each`);
    }
    for (const child of children) {
      const runs = readExecutions(rig.executionLog, child.workflowId, 'get_ticker_symbol');
      const starts = runs.filter((e) => e.event === 'start').length;
      // Normally the completion is delivered once the server is back; should the outage outlast the worker's retries
      // of it, the tool times out and runs once more, with the same key.
      t.diagnostic(`${child.workflowId}: get_ticker_symbol ran ${starts} time(s)`);
      assert.ok(starts >= 1 && starts <= 2, `${child.workflowId}: get_ticker_symbol ran ${starts} times`);
      assert.equal(new Set(runs.map((e) => e.idempotencyKey)).size, 1);
    }
  });
});

describe('sub-agents on an in-process worker: a task queue nobody polls, and continue-as-new', () => {
  const nobodyPolls = `nobody-polls-${randomUUID()}`;
  const askNobody = defineAgentTool({
    name: 'ask_nobody',
    description: 'Hands a task to a sub-agent whose workers are gone.',
    agent: { tools: [] },
    taskQueue: nobodyPolls,
    timeout: '3 seconds',
  });
  let h: Harness;
  before(async () => {
    h = await startHarness({ tools: [...demoTools, researchCompany, askNobody] });
  });
  after(async () => {
    await h?.close();
  });

  test('a child whose task queue has no worker times out into an AgentTimedOut error result; the model carries on', async () => {
    const prompt = uniquePrompt('Ask nobody about General Motors');
    const task = uniquePrompt('Research General Motors where nobody listens');
    h.mock.script(prompt, [callsTools(['ask_nobody', { task }]), says('Nobody answered; GM is still at $38.50.')]);
    const id = `sub-agents-nobody-${randomUUID().slice(0, 8)}`;
    const started = Date.now();
    const reply = await h.conversations.sendMessage(id, prompt, { start: { tools: ['ask_nobody'] } });
    assert.equal(reply.text, 'Nobody answered; GM is still at $38.50.');
    assert.ok(Date.now() - started >= 3_000, 'the parent waited for the timeout');

    const [result, ...more] = toolResultsOf(h.mock.requestsFor(prompt)[1]!);
    assert.equal(more.length, 0);
    assert.equal(result!.is_error, true);
    assert.match(
      String(result!.content),
      /^AgentTimedOut: the sub-agent ask_nobody \(.+\) did not finish within 3 seconds\.$/,
    );
    assert.equal(h.mock.requestsFor(task).length, 0, 'the child never ran');

    const [child, ...others] = await closedChildrenOf(h.client, id, 1);
    assert.equal(others.length, 0);
    assert.equal(child!.taskQueue, nobodyPolls);
    assert.equal(child!.status.name, 'TIMED_OUT');
    const state = await h.conversations.getState(id);
    assert.equal(state.status, 'awaiting_user', 'the conversation goes on');
  });

  test('a parent that continues-as-new after every model call waits for its child first; the next run goes on', async () => {
    const prompt = uniquePrompt('Research General Motors, then keep talking');
    const task = uniquePrompt('Research General Motors for a parent that moves on');
    h.mock.script(prompt, [
      callsTools(['research_company', { task }]),
      says('GM trades at $38.50.'),
      says('Ford is not researched yet.'),
    ]);
    // Slow enough that a parent that did not wait would have moved on long before.
    h.mock.script(task, [{ ...says('General Motors (GM) trades at $38.50.'), delayMs: 3_000 }]);
    const id = `sub-agents-can-${randomUUID().slice(0, 8)}`;
    const reply = await h.conversations.sendMessage(id, prompt, {
      start: { tools: ['research_company'], continueAsNewAfterModelCalls: 1 },
    });
    assert.equal(reply.text, 'GM trades at $38.50.');
    const second = await h.conversations.sendMessage(id, 'And Ford?');
    assert.equal(second.text, 'Ford is not researched yet.');

    // The runs of the parent, oldest first: the first one started the child and saw it complete before it continued.
    const runs = await waitUntil('the runs of the parent in visibility', async () => {
      const listed = [];
      for await (const run of h.client.workflow.list({ query: `WorkflowId = "${id}"` })) listed.push(run);
      return listed.length >= 3 && listed;
    });
    runs.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
    assert.ok(runs.length >= 3, `the parent continued as new after each model call (${runs.length} runs)`);
    const firstRun = await eventTypesOf(h.client, id, runs[0]!.runId);
    assert.equal(count(firstRun, 'startChildWorkflowExecutionInitiated'), 1);
    assert.ok(
      firstRun.indexOf('childWorkflowExecutionCompleted') > firstRun.indexOf('childWorkflowExecutionStarted'),
      'the run that started the child records its completion',
    );
    assert.equal(firstRun.at(-1), 'workflowExecutionContinuedAsNew');
    assert.ok(firstRun.indexOf('childWorkflowExecutionCompleted') < firstRun.length - 1);
    for (const run of runs.slice(1)) {
      const events = await eventTypesOf(h.client, id, run.runId);
      assert.equal(count(events, 'startChildWorkflowExecutionInitiated'), 0, 'no later run starts the child again');
    }

    // One child, never restarted, whose parent is the run that started it.
    const [child, ...others] = await closedChildrenOf(h.client, id, 1);
    assert.equal(others.length, 0);
    assert.equal(child!.status.name, 'COMPLETED');
    const { raw } = await h.client.workflow.getHandle(child!.workflowId).describe();
    assert.equal(raw.workflowExecutionInfo?.parentExecution?.runId, runs[0]!.runId);
    assert.equal(h.mock.requestsFor(task).length, 1, "the child's one model call");

    // The next run's model call carries the child's answer; the third carries the whole conversation.
    const requests = h.mock.requestsFor(prompt);
    assert.equal(requests.length, 3);
    assert.deepEqual(
      toolResultsOf(requests[1]!).map((r) => [r.is_error ?? false, r.content]),
      [[false, 'General Motors (GM) trades at $38.50.']],
    );
    assert.equal(requests[2]!.body.messages.length, 5, 'prompt, call, result, answer, and the next message');
    const state = await h.conversations.getState(id);
    assert.equal(state.modelCalls, 3);
  });
});
