// Sub-agents' pure rules, without Temporal: how deep and where a child may start (refuseAgentCall, childLineage), the
// share of the parent's budget it gets (childBudget), what the parent counts once it ended (recordAgentSpend), and how
// the approvals its children wait for are kept, shown and routed (relayed-approvals.ts, ConversationState).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import {
  type AgentLineage,
  agentChildId,
  agentDepthLimit,
  agentLineageSchema,
  agentTaskSchema,
  isInSubtree,
  childBudget,
  childLineage,
  MAX_AGENT_TASK_CHARS,
  refuseAgentCall,
} from '../../common/agents';
import { agentApprovalNewsSchema, agentDecisionSchema } from '../../common/agent-messages';
import type { ConversationInput } from '../../common/conversation-input';
import type { PendingApproval } from '../../common/conversation-types';
import { withDefaults } from '../../common/options';
import { costUsd } from '../../common/pricing';
import { ConversationState } from '../../workflows/conversation-state';
import { MAX_RELAYED_APPROVALS, RelayedApprovals } from '../../workflows/relayed-approvals';
import { PRICES } from '../support/test-prices';

const usage = { inputTokens: 100, outputTokens: 20, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
const childUsage = { inputTokens: 300, outputTokens: 50, cacheReadInputTokens: 10, cacheCreationInputTokens: 5 };
const lineage = (path: string[], maxDepth = 2): AgentLineage => ({
  parentId: 'root',
  callId: 'toolu_1',
  tool: path.at(-1)!,
  depth: path.length,
  maxDepth,
  path,
});
const stateOf = (input: Partial<ConversationInput> & { options?: ConversationInput['options'] } = {}) =>
  new ConversationState({ options: withDefaults({ tools: ['get_weather'] }), firstMessage: 'Hi', ...input }, 'run-1');
const approval = (callId: string, agent: string): PendingApproval & { agent: string } => ({
  callId,
  tool: 'buy_stock',
  input: { symbol: 'GM', quantity: 1 },
  argumentsDigest: `digest-${callId}`,
  requestedAt: '2026-01-01T00:00:00.000Z',
  agent,
});
function assertRejected(fn: () => void, pattern: RegExp): void {
  assert.throws(
    fn,
    (err: unknown) => err instanceof ApplicationFailure && err.type === 'Rejected' && pattern.test(err.message),
  );
}

describe('where a sub-agent may start', () => {
  test('a root may start a child; depth counts from the root and stops at the limit', () => {
    assert.equal(refuseAgentCall(undefined, 'research', 2), undefined);
    assert.equal(refuseAgentCall(lineage(['a']), 'b', 2), undefined);
    assert.match(refuseAgentCall(lineage(['a', 'b']), 'c', 2)!, /^AgentDepthExceeded: c would run 3 sub-agents deep/);
    assert.match(refuseAgentCall(undefined, 'a', 0)!, /^AgentDepthExceeded/);
  });

  test('an agent tool already running above is a cycle, whatever the depth left', () => {
    assert.match(refuseAgentCall(lineage(['a', 'b'], 8), 'a', 8)!, /^AgentCycle: a is already running above.*a → b/);
    assert.match(refuseAgentCall(lineage(['a'], 8), 'a', 8)!, /^AgentCycle/);
  });

  test("a sub-agent keeps to the root's depth limit: its own options may lower it, its default never raises it", () => {
    assert.equal(agentDepthLimit(undefined, undefined), 2, 'a root without the option: the default');
    assert.equal(agentDepthLimit(undefined, 5), 5);
    assert.equal(agentDepthLimit(lineage(['a'], 1), undefined), 1, 'not the default 2');
    assert.equal(agentDepthLimit(lineage(['a'], 5), undefined), 5, 'not the default 2 either');
    assert.equal(agentDepthLimit(lineage(['a'], 5), 3), 3);
    assert.equal(agentDepthLimit(lineage(['a'], 2), 6), 2);
    const child = lineage(['a'], 1);
    assert.match(refuseAgentCall(child, 'b', agentDepthLimit(child, undefined))!, /^AgentDepthExceeded/);
  });

  test("a child's lineage: its parent, one deeper, the root's limit handed down, its tool appended", () => {
    assert.deepEqual(childLineage({ id: 'root', lineage: undefined, maxDepth: 3 }, 'toolu_1', 'a'), {
      parentId: 'root',
      callId: 'toolu_1',
      tool: 'a',
      depth: 1,
      maxDepth: 3,
      path: ['a'],
    });
    const grandchild = childLineage({ id: 'root/agent-1-0-a', lineage: lineage(['a'], 3), maxDepth: 8 }, 'c2', 'b');
    assert.equal(grandchild.parentId, 'root/agent-1-0-a');
    assert.equal(grandchild.depth, 2);
    assert.equal(grandchild.maxDepth, 3, "a child's own limit never raises the root's");
    const lowered = childLineage({ id: 'root/agent-1-0-a', lineage: lineage(['a'], 5), maxDepth: 3 }, 'c3', 'b');
    assert.equal(lowered.maxDepth, 3, 'a limit a child lowered holds for its own children');
    assert.deepEqual(grandchild.path, ['a', 'b']);
    assert.ok(agentLineageSchema.safeParse(grandchild).success);
  });

  test('a lineage deeper than any conversation may go, or with unknown keys, is refused by its schema', () => {
    assert.equal(agentLineageSchema.safeParse({ ...lineage(['a']), depth: 9 }).success, false);
    assert.equal(agentLineageSchema.safeParse({ ...lineage(['a']), extra: 1 }).success, false);
    assert.equal(agentLineageSchema.safeParse({ ...lineage(['a']), path: Array(9).fill('a') }).success, false);
  });

  test("a child's id is under its parent's, named by the call's place and the tool", () => {
    assert.equal(agentChildId('conv-1', '3-1', 'research'), 'conv-1/agent-3-1-research');
  });

  test("a child's subtree: itself and the conversations named under it, no sibling, no parent", () => {
    const child = agentChildId('root', '1-0', 'a');
    assert.ok(isInSubtree(child, child));
    assert.ok(isInSubtree(agentChildId(child, '2-1', 'b'), child));
    assert.equal(isInSubtree('root', child), false);
    assert.equal(isInSubtree(agentChildId('root', '1-1', 'a'), child), false);
    assert.equal(isInSubtree(`${child}x`, child), false, 'a longer id is not under it');
  });

  test('a task is one non-empty string within the limit, nothing else', () => {
    assert.ok(agentTaskSchema.safeParse({ task: 'Research GM' }).success);
    assert.equal(agentTaskSchema.safeParse({}).success, false);
    assert.equal(agentTaskSchema.safeParse({ task: '   ' }).success, false);
    assert.equal(agentTaskSchema.safeParse({ task: 'x', extra: 1 }).success, false);
    assert.equal(agentTaskSchema.safeParse({ task: 'x'.repeat(MAX_AGENT_TASK_CHARS + 1) }).success, false);
    assert.equal(agentTaskSchema.safeParse({ task: '\ud800' }).success, false);
  });
});

describe("a child's budget", () => {
  const nothingSpent = { turn: { tokens: 0, usd: 0 }, conversation: { tokens: 0, usd: 0 } };

  test('a parent without a budget gives its child its own tool budget, or none', () => {
    assert.deepEqual(childBudget(undefined, { budget: undefined, spent: nothingSpent }, 2), { budget: undefined });
    assert.deepEqual(childBudget({ perTurn: { tokens: 500 } }, { budget: undefined, spent: nothingSpent }, 2), {
      budget: { estimate: 'last-call', perTurn: { tokens: 500 }, perConversation: { tokens: 500 } },
    });
  });

  test("what is left of the parent's budget is shared equally among the reply's children", () => {
    const parent = {
      budget: { estimate: 'last-call' as const, perConversation: { tokens: 10_000, usd: 1 } },
      spent: { turn: { tokens: 1_000, usd: 0.1 }, conversation: { tokens: 4_001, usd: 0.4 } },
    };
    const given = childBudget(undefined, parent, 3);
    assert.ok('budget' in given);
    assert.equal(given.budget?.perConversation?.tokens, 1_999, '⌊(10,000 − 4,001) / 3⌋');
    assert.ok(Math.abs(given.budget!.perConversation!.usd! - 0.2) < 1e-12);
    assert.deepEqual(given.budget?.perTurn, given.budget?.perConversation, 'one turn: the same limit');
  });

  test("the smaller of the turn's and the conversation's left, and of the tool's own limit", () => {
    const parent = {
      budget: { estimate: 'count-tokens' as const, perTurn: { tokens: 3_000 }, perConversation: { tokens: 100_000 } },
      spent: { turn: { tokens: 1_000, usd: 0 }, conversation: { tokens: 50_000, usd: 0 } },
    };
    const shared = childBudget(undefined, parent, 1);
    assert.ok('budget' in shared);
    assert.deepEqual(shared.budget?.perConversation, { tokens: 2_000 });
    assert.equal(shared.budget?.estimate, 'count-tokens', "the parent's way of estimating");
    const own = childBudget({ perConversation: { tokens: 700 } }, parent, 1);
    assert.ok('budget' in own);
    assert.deepEqual(own.budget?.perTurn, { tokens: 700 });
  });

  test('a parent with nothing left, or too little to share, starts no child', () => {
    const spentAll = {
      budget: { estimate: 'last-call' as const, perConversation: { tokens: 1_000 } },
      spent: { turn: { tokens: 0, usd: 0 }, conversation: { tokens: 1_000, usd: 0 } },
    };
    const none = childBudget(undefined, spentAll, 1);
    assert.ok('exhausted' in none);
    assert.match(none.exhausted, /^BudgetExhausted/);
    const little = {
      budget: { estimate: 'last-call' as const, perTurn: { tokens: 10 } },
      spent: { turn: { tokens: 8, usd: 0 }, conversation: { tokens: 8, usd: 0 } },
    };
    const tooLittle = childBudget(undefined, little, 4);
    assert.ok('exhausted' in tooLittle);
    assert.match(tooLittle.exhausted, /^BudgetExhausted: what is left .* too little to share/);
    const usdGone = {
      budget: { estimate: 'last-call' as const, perConversation: { usd: 0.5 } },
      spent: { turn: { tokens: 0, usd: 0 }, conversation: { tokens: 0, usd: 0.5 } },
    };
    assert.ok('exhausted' in childBudget(undefined, usdGone, 1));
  });

  test('an unknown cost (no price) leaves the USD limit whole', () => {
    const parent = {
      budget: { estimate: 'last-call' as const, perConversation: { usd: 2 } },
      spent: { turn: { tokens: 10, usd: null }, conversation: { tokens: 10, usd: null } },
    };
    const given = childBudget(undefined, parent, 2);
    assert.ok('budget' in given);
    assert.equal(given.budget?.perConversation?.usd, 1);
  });
});

describe("what a parent counts of a child's spending", () => {
  test("usage and cost include the child's; per model from then on, the parent's own model first", () => {
    const state = stateOf({ options: withDefaults({ tools: ['get_weather'], model: 'claude-sonnet-4-5' }) });
    state.setPrices(PRICES);
    state.beginTurn();
    state.recordModelCall(usage);
    assert.equal(state.snapshot().byModel, undefined, 'no split before a child spent anything');
    const childCost = costUsd(childUsage, PRICES);
    state.recordAgentSpend({ model: 'claude-haiku-4-5', modelCalls: 2, usage: childUsage, costUsd: childCost });
    const snapshot = state.snapshot();
    assert.equal(snapshot.modelCalls, 1, "the parent's own calls only");
    assert.deepEqual(snapshot.usage, {
      inputTokens: 400,
      outputTokens: 70,
      cacheReadInputTokens: 10,
      cacheCreationInputTokens: 5,
    });
    assert.deepEqual(Object.keys(snapshot.byModel!), ['claude-sonnet-4-5', 'claude-haiku-4-5']);
    assert.deepEqual(snapshot.byModel!['claude-haiku-4-5'], { calls: 2, usage: childUsage, costUsd: childCost });
    assert.equal(snapshot.byModel!['claude-sonnet-4-5']!.calls, 1);
    assert.ok(Math.abs(snapshot.costUsd! - (costUsd(usage, PRICES) + childCost)) < 1e-12);
    // The budget's next check sees it in the turn and the conversation.
    const billed = 400 + 70 + 10 + 5;
    assert.deepEqual(
      [state.spent().turn.tokens, state.spent().conversation.tokens],
      [billed, billed],
      'the turn and the conversation both count the child',
    );
    const turn = state.finishTurn({ text: 'Done', status: 'awaiting_user' });
    assert.equal(turn.usage.inputTokens, 400);
    assert.deepEqual(Object.keys(turn.byModel ?? {}), ['claude-sonnet-4-5', 'claude-haiku-4-5']);
  });

  test("a grandchild's spending comes up in its child's per-model split, and adds to the same model", () => {
    const state = stateOf();
    state.beginTurn();
    state.recordModelCall(usage);
    const model = state.options.model;
    state.recordAgentSpend({
      model,
      modelCalls: 2,
      usage: childUsage,
      costUsd: null,
      byModel: {
        [model]: { calls: 1, usage, costUsd: null },
        'claude-haiku-4-5': { calls: 1, usage: childUsage, costUsd: null },
      },
    });
    const byModel = state.snapshot().byModel!;
    assert.equal(byModel[model]!.calls, 2, "the parent's call and its child's");
    assert.equal(byModel['claude-haiku-4-5']!.calls, 1, "the grandchild's");
    assert.equal(
      Object.values(byModel).reduce((sum, part) => sum + part.calls, 0),
      3,
    );
    assert.equal(state.snapshot().costUsd, null, 'an unknown cost stays unknown');
  });

  test('a child ends as its own conversation: its result carries how its one turn ended, for its parent', () => {
    const child = stateOf({ agent: lineage(['a']) });
    child.beginTurn();
    child.recordModelCall(usage);
    child.finishTurn({ text: 'GM is at $38.50', status: 'awaiting_user' });
    const result = child.result();
    assert.deepEqual(result.agentAnswer, { model: child.options.model, status: 'awaiting_user' });
    const failedChild = stateOf({ agent: lineage(['a']) });
    failedChild.beginTurn();
    failedChild.failTurn({ type: 'ModelError', message: 'overloaded' });
    assert.deepEqual(failedChild.result().agentAnswer?.failure, { type: 'ModelError', message: 'overloaded' });
    assert.equal(stateOf().result().agentAnswer, undefined, 'a root has no agent answer');
  });
});

describe('approvals relayed from sub-agents', () => {
  test('kept by the conversation whose call it is and the child it came through', () => {
    const relayed = new RelayedApprovals();
    assert.ok(relayed.add(approval('c1', 'root/agent-1-0-a'), 'root/agent-1-0-a'));
    assert.ok(relayed.add(approval('c1', 'root/agent-1-0-a/agent-1-0-b'), 'root/agent-1-0-a'));
    assert.equal(relayed.size, 2, 'the same call id from two agents: two approvals');
    const ambiguous = relayed.find('c1', undefined);
    assert.ok('problem' in ambiguous && /name the agent/.test(ambiguous.problem));
    const named = relayed.find('c1', 'root/agent-1-0-a/agent-1-0-b');
    assert.ok('relayed' in named && named.relayed.via === 'root/agent-1-0-a');
    relayed.markDecided('root/agent-1-0-a/agent-1-0-b', 'c1');
    assert.deepEqual(
      relayed.pending().map((a) => a.agent),
      ['root/agent-1-0-a'],
      'a decided approval no longer waits for a person',
    );
    assert.ok('relayed' in relayed.find('c1', undefined), 'only one still waits: found by call id alone');
    relayed.settle('root/agent-1-0-a', 'c1', 'root/agent-1-0-other');
    assert.equal(relayed.size, 2, 'news from another child settles nothing');
    relayed.settle('root/agent-1-0-a', 'c1', 'root/agent-1-0-a');
    assert.equal(relayed.size, 1);
    relayed.dropVia('root/agent-1-0-a');
    assert.equal(relayed.size, 0, "a child that ended takes its descendants' approvals with it");
  });

  test('at most MAX_RELAYED_APPROVALS wait; a repeated request is the same approval', () => {
    const relayed = new RelayedApprovals();
    for (let i = 0; i < MAX_RELAYED_APPROVALS; i++) assert.ok(relayed.add(approval(`c${i}`, 'child'), 'child'));
    assert.equal(relayed.add(approval('one-more', 'child'), 'child'), false);
    assert.ok(relayed.add(approval('c0', 'child'), 'child'), 'one already kept is kept again');
    assert.equal(relayed.size, MAX_RELAYED_APPROVALS);
  });

  test('a repeated request does not ask again for a call already decided', () => {
    const relayed = new RelayedApprovals();
    relayed.add(approval('c1', 'child'), 'child');
    relayed.markDecided('child', 'c1');
    relayed.add(approval('c1', 'child'), 'child');
    assert.deepEqual(relayed.pending(), [], 'the decision is on its way down; nobody is asked twice');
  });

  test("the parent shows a child's approval as its own, waits for it, and routes the decision down", () => {
    const state = stateOf();
    state.beginTurn();
    const request = approval('toolu_9', 'root/agent-1-0-a');
    assert.ok(state.relayApproval(request, 'root/agent-1-0-a'));
    assert.equal(state.status, 'awaiting_approval');
    assert.deepEqual(state.snapshot().pendingApprovals, [request]);
    assertRejected(
      () => state.validateDecision({ callId: 'toolu_9', argumentsDigest: 'wrong', approve: true }),
      /digest mismatch/,
    );
    assertRejected(
      () => state.validateDecision({ callId: 'toolu_9', argumentsDigest: 'digest-toolu_9', approve: true, agent: 'x' }),
      /No tool call toolu_9 of sub-agent x/,
    );
    const decision = { callId: 'toolu_9', argumentsDigest: 'digest-toolu_9', approve: true };
    state.validateDecision(decision);
    assert.deepEqual(state.decide(decision), { via: 'root/agent-1-0-a', agent: 'root/agent-1-0-a' });
    assert.equal(state.status, 'running', 'nothing waits for a person any more');
    assert.deepEqual(state.snapshot().pendingApprovals, []);
    assertRejected(() => state.validateDecision(decision), /No tool call toolu_9/);
    assert.equal(state.decide(decision), undefined, 'a second decision goes nowhere');
  });

  test("a grandchild's approval goes down through the child it came from", () => {
    const state = stateOf();
    state.beginTurn();
    state.relayApproval(approval('c1', 'root/agent-1-0-a/agent-1-0-b'), 'root/agent-1-0-a');
    const route = state.decide({
      callId: 'c1',
      argumentsDigest: 'digest-c1',
      approve: false,
      agent: 'root/agent-1-0-a/agent-1-0-b',
    });
    assert.deepEqual(route, { via: 'root/agent-1-0-a', agent: 'root/agent-1-0-a/agent-1-0-b' });
  });

  test("a call of the parent's own and a child's with the same id: the plain decision is the parent's own", () => {
    const state = stateOf();
    state.beginTurn();
    const own = { ...approval('c1', 'x'), agent: undefined };
    delete own.agent;
    state.requestApproval(own);
    state.relayApproval(approval('c1', 'child'), 'child');
    assert.equal(state.snapshot().pendingApprovals.length, 2);
    assert.equal(state.decide({ callId: 'c1', argumentsDigest: 'digest-c1', approve: true }), undefined);
    assert.equal(state.decisionOf('c1')?.approve, true);
    assert.equal(state.status, 'awaiting_approval', "the child's still waits");
    assert.deepEqual(state.decide({ callId: 'c1', argumentsDigest: 'digest-c1', approve: true, agent: 'child' }), {
      via: 'child',
      agent: 'child',
    });
  });

  test('once its own call is settled and its children wait for nobody, the parent runs again', () => {
    const state = stateOf();
    state.beginTurn();
    const own = { ...approval('own', 'x') } as PendingApproval;
    delete own.agent;
    state.requestApproval(own);
    state.relayApproval(approval('c1', 'child'), 'child');
    state.decide({ callId: 'c1', argumentsDigest: 'digest-c1', approve: true, agent: 'child' });
    state.decide({ callId: 'own', argumentsDigest: 'digest-own', approve: true });
    state.settleApproval('own');
    assert.equal(state.status, 'running', "the child's decided approval waits for nobody");
  });

  test('a child that ended drops what it had waiting; so does its news that the call settled', () => {
    const state = stateOf();
    state.beginTurn();
    state.relayApproval(approval('c1', 'child-1'), 'child-1');
    state.relayApproval(approval('c2', 'child-2'), 'child-2');
    state.settleRelayed({ via: 'child-1', agent: 'child-2', callId: 'c2' });
    assert.equal(state.snapshot().pendingApprovals.length, 2, "child-1 cannot settle child-2's call");
    state.settleRelayed({ via: 'child-2', agent: 'child-2', callId: 'c2' });
    assert.equal(state.status, 'awaiting_approval');
    state.settleRelayed({ via: 'child-1' });
    assert.equal(state.status, 'running');
    assert.deepEqual(state.snapshot().pendingApprovals, []);
  });
});

describe('the signals between a parent and its children', () => {
  test('news and decisions are checked: unknown kinds, extra keys, huge or broken text are refused', () => {
    const news = { kind: 'settled', from: 'child', agent: 'child', callId: 'c1', outcome: 'approved' };
    assert.ok(agentApprovalNewsSchema.safeParse(news).success);
    assert.ok(
      agentApprovalNewsSchema.safeParse({ kind: 'requested', from: 'c', approval: approval('c1', 'c') }).success,
    );
    for (const bad of [
      null,
      'garbage',
      { ...news, kind: 'other' },
      { ...news, extra: 1 },
      { ...news, from: 'x'.repeat(100_000) },
      { ...news, callId: '\ud800' },
      { ...news, outcome: 'maybe' },
      { kind: 'requested', from: 'c', approval: { ...approval('c1', 'c'), agent: undefined } },
    ]) {
      assert.equal(agentApprovalNewsSchema.safeParse(bad).success, false, JSON.stringify(bad)?.slice(0, 80));
    }
    const decision = { callId: 'c1', argumentsDigest: 'd', approve: true, agent: 'child' };
    assert.ok(agentDecisionSchema.safeParse(decision).success);
    assert.equal(agentDecisionSchema.safeParse({ ...decision, agent: undefined }).success, false);
    assert.equal(agentDecisionSchema.safeParse({ ...decision, approve: 'yes' }).success, false);
    assert.equal(agentDecisionSchema.safeParse({ ...decision, agent: 'x'.repeat(5_000) }).success, false);
  });
});
