// Tenants and priorities end to end (docs/fairness.md): a conversation's tenant (fairness key, with its weight) and
// priority reach Temporal on its workflow's start and on every model and tool task and sub-agent it schedules, as the
// history records them; a message's own priority is its turn's only; a conversation without them schedules its tasks
// with no priority at all, as before they existed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { temporal } from '@temporalio/proto';
import { defineAgentTool } from '../../activities/agent-tool-definition';
import { demoTools } from '../../testing/demo-tools';
import { STOCK_QUESTION, STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import { type Harness, startHarness, uniquePrompt } from '../support/harness';
import { callsTools, says } from '../support/script-steps';

const researcher = defineAgentTool({
  name: 'research_company',
  description: 'Researches one company: its ticker symbol and current stock price.',
  agent: { tools: ['get_ticker_symbol'] },
});

let h: Harness;
before(async () => {
  h = await startHarness({ tools: [...demoTools, researcher] });
});
after(async () => {
  await h?.close();
});

type Priority = temporal.api.common.v1.IPriority;

/** The priority a history's start and each scheduled activity (type, priority) carry, in order. */
async function prioritiesOf(workflowId: string) {
  const history = await h.client.workflow.getHandle(workflowId).fetchHistory();
  const events = history.events ?? [];
  const start = events[0]?.workflowExecutionStartedEventAttributes?.priority;
  const activities = events.flatMap((event) => {
    const scheduled = event.activityTaskScheduledEventAttributes;
    return scheduled ? [{ type: scheduled.activityType?.name ?? '', priority: scheduled.priority }] : [];
  });
  const children = events.flatMap((event) => {
    const initiated = event.startChildWorkflowExecutionInitiatedEventAttributes;
    return initiated ? [{ id: initiated.workflowId ?? '', priority: initiated.priority }] : [];
  });
  return { start, activities, children };
}

/** A priority as plain fields, unset ones (0, '') left out: what a test compares. */
function plain(priority: Priority | null | undefined) {
  return {
    ...(priority?.priorityKey ? { priorityKey: priority.priorityKey } : {}),
    ...(priority?.fairnessKey ? { fairnessKey: priority.fairnessKey } : {}),
    ...(priority?.fairnessWeight ? { fairnessWeight: priority.fairnessWeight } : {}),
  };
}

const CHAIN_ACTIVITIES = ['callModel', 'get_ticker_symbol', 'callModel', 'get_current_stock_price', 'callModel'];

describe('fairness: a conversation carries its tenant and priority', () => {
  test('the workflow start and every model and tool task carry the tenant, its weight and the priority', async () => {
    const id = `fair-keys-${Date.now()}`;
    const reply = await h.conversations.sendMessage(id, uniquePrompt(STOCK_QUESTION), {
      start: { tools: STOCK_TOOLS, closeAfterFirstReply: true, tenant: 'acme', tenantWeight: 2, priority: 4 },
    });
    assert.match(reply.text, /38\.50/);
    const { start, activities } = await prioritiesOf(id);
    const expected = { priorityKey: 4, fairnessKey: 'acme', fairnessWeight: 2 };
    assert.deepEqual(plain(start), expected);
    assert.deepEqual(
      activities.map((a) => a.type),
      CHAIN_ACTIVITIES,
    );
    for (const activity of activities) assert.deepEqual(plain(activity.priority), expected, activity.type);
  });

  test('startConversation with a tenant only: tasks carry the tenant and no priority key', async () => {
    const id = await h.conversations.startConversation({
      tools: STOCK_TOOLS,
      closeAfterFirstReply: true,
      tenant: 'globex',
      firstMessage: uniquePrompt(STOCK_QUESTION),
    });
    const outcome = await h.conversations.awaitTurn(id, 1);
    assert.match(outcome.text, /38\.50/);
    const { start, activities } = await prioritiesOf(id);
    assert.deepEqual(plain(start), { fairnessKey: 'globex' });
    assert.equal(activities.length, CHAIN_ACTIVITIES.length);
    for (const activity of activities) assert.deepEqual(plain(activity.priority), { fairnessKey: 'globex' });
  });

  test('a message’s priority is its turn’s only: the next turn’s tasks are back at the conversation’s', async () => {
    const id = `fair-turn-${Date.now()}`;
    const start = { tools: STOCK_TOOLS, tenant: 'acme', priority: 4 };
    await h.conversations.sendMessage(id, uniquePrompt(STOCK_QUESTION), { start, priority: 1 });
    const afterFirst = (await prioritiesOf(id)).activities.length;
    assert.equal(afterFirst, CHAIN_ACTIVITIES.length);
    await h.conversations.sendMessage(id, uniquePrompt(STOCK_QUESTION));
    await h.conversations.end(id);
    const { start: started, activities } = await prioritiesOf(id);
    // The workflow's own tasks keep the start's priority; the urgent message changed only its turn's activities.
    assert.deepEqual(plain(started), { priorityKey: 4, fairnessKey: 'acme' });
    assert.equal(activities.length, 2 * CHAIN_ACTIVITIES.length);
    for (const activity of activities.slice(0, afterFirst)) {
      assert.deepEqual(plain(activity.priority), { priorityKey: 1, fairnessKey: 'acme' }, `turn 1 ${activity.type}`);
    }
    for (const activity of activities.slice(afterFirst)) {
      assert.deepEqual(plain(activity.priority), { priorityKey: 4, fairnessKey: 'acme' }, `turn 2 ${activity.type}`);
    }
  });

  test('a sub-agent is started with its parent’s tenant and its turn’s priority, and its tasks carry them', async () => {
    const prompt = uniquePrompt('Research General Motors for me.');
    const task = uniquePrompt('Find the ticker symbol of General Motors.');
    h.mock.script(prompt, [callsTools(['research_company', { task }]), says('GM, as researched.')]);
    h.mock.script(task, [callsTools(['get_ticker_symbol', { company_name: 'General Motors' }]), says('GM.')]);
    const id = `fair-agent-${Date.now()}`;
    const reply = await h.conversations.sendMessage(id, prompt, {
      start: { tools: ['research_company'], closeAfterFirstReply: true, tenant: 'initech', tenantWeight: 0.5 },
      priority: 2,
    });
    assert.match(reply.text, /GM/);
    const { children } = await prioritiesOf(id);
    assert.equal(children.length, 1);
    const expected = { priorityKey: 2, fairnessKey: 'initech', fairnessWeight: 0.5 };
    assert.deepEqual(plain(children[0]!.priority), expected);
    const child = await prioritiesOf(children[0]!.id);
    assert.deepEqual(plain(child.start), expected);
    assert.deepEqual(
      child.activities.map((a) => a.type),
      ['callModel', 'get_ticker_symbol', 'callModel'],
    );
    for (const activity of child.activities) assert.deepEqual(plain(activity.priority), expected, activity.type);
  });

  test('a conversation that continues as new keeps its tenant and priority in every run', async () => {
    const id = `fair-can-${Date.now()}`;
    await h.conversations.sendMessage(id, uniquePrompt(STOCK_QUESTION), {
      start: { tools: STOCK_TOOLS, closeAfterFirstReply: true, continueAsNewAfterModelCalls: 1, tenant: 'acme' },
      priority: 2,
    });
    const runs: string[] = [];
    for await (const execution of h.client.workflow.list({ query: `WorkflowId = '${id}'` })) runs.push(execution.runId);
    assert.ok(runs.length >= 2, `${runs.length} runs`);
    for (const runId of runs) {
      const history = await h.client.workflow.getHandle(id, runId).fetchHistory();
      const events = history.events ?? [];
      assert.deepEqual(plain(events[0]?.workflowExecutionStartedEventAttributes?.priority), { fairnessKey: 'acme' });
      // The turn's priority went on with the turn into the next run (carried state).
      for (const event of events) {
        const scheduled = event.activityTaskScheduledEventAttributes;
        if (scheduled) assert.deepEqual(plain(scheduled.priority), { priorityKey: 2, fairnessKey: 'acme' }, runId);
      }
    }
  });

  test('a conversation without tenant or priority schedules its tasks with none (its commands as before)', async () => {
    const id = `fair-none-${Date.now()}`;
    await h.conversations.sendMessage(id, uniquePrompt(STOCK_QUESTION), {
      start: { tools: STOCK_TOOLS, closeAfterFirstReply: true },
    });
    const { start, activities } = await prioritiesOf(id);
    assert.deepEqual(plain(start), {});
    assert.equal(activities.length, CHAIN_ACTIVITIES.length);
    for (const activity of activities) assert.deepEqual(plain(activity.priority), {}, activity.type);
  });
});
