// The soak's load: kinds of conversation, each driven through ConversationClient the way a user would, and judged by
// what the user gets back. "mixed" draws a kind per conversation; "chain" is the ticker → price chain only. Every
// answer comes from the local Messages API's demo model (faults before it), so a call retried after a kill gets the
// same answer, and a scripted fault never decides what a conversation says.
import { randomUUID } from 'node:crypto';
import { type ConversationClient } from '../../client/conversation-client';
import { ConversationError } from '../../client/errors';
import type { StartOptions } from '../../client/conversation-client';
import { STOCK_QUESTION, STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import { ConversationAwaitingApproval } from '../../common/search-attributes';
import type { LoadMix } from './args';

export type Verdict = { ok: true } | { ok: false; why: string };

export interface ScenarioContext {
  conversations: ConversationClient;
  id: string;
  /** The first message, with a tag that makes it unique (the Messages API's scripts match on it). */
  prompt: string;
  deadline: number;
  /** Retries a client call while the server is away (restarting); a ConversationError with a verdict is thrown on. */
  retrying<T>(what: string, call: () => Promise<T>): Promise<T>;
}

export interface Scenario {
  name: string;
  weight: number;
  /** Model calls in a clean run: faults are scripted before each. */
  modelCalls: number;
  question: string;
  run(context: ScenarioContext): Promise<Verdict>;
}

const PRICE = /38\.50/;
const ok: Verdict = { ok: true };
const fail = (why: string): Verdict => ({ ok: false, why });
const remaining = (deadline: number): { timeoutMs: number } => ({ timeoutMs: Math.max(1_000, deadline - Date.now()) });

async function startWith(context: ScenarioContext, options: Omit<StartOptions, 'id'>): Promise<void> {
  await context.retrying('start', async () => {
    try {
      await context.conversations.startConversation({ id: context.id, firstMessage: context.prompt, ...options });
    } catch (error) {
      // A try whose answer was lost while the server restarted did start it.
      if (!(error instanceof ConversationError && error.code === 'already_started')) throw error;
    }
  });
}

async function oneShot(context: ScenarioContext, options: Omit<StartOptions, 'id'>, expect: RegExp): Promise<Verdict> {
  await startWith(context, { closeAfterFirstReply: true, timeouts: { modelHeartbeat: '5 seconds' }, ...options });
  const result = await context.retrying('result', () => context.conversations.waitForResult(context.id));
  if (result.status !== 'completed') return fail(`ended ${result.status}: ${result.text.slice(0, 100)}`);
  return expect.test(result.text) ? ok : fail(`answered ${JSON.stringify(result.text.slice(0, 100))}`);
}

async function turn(context: ScenarioContext, n: number) {
  return context.retrying(`turn ${n}`, () =>
    context.conversations.awaitTurn(context.id, n, remaining(context.deadline)),
  );
}

async function endAndCheck(context: ScenarioContext, turns: number): Promise<Verdict> {
  await context.retrying('end', () => context.conversations.end(context.id));
  const result = await context.retrying('result', () => context.conversations.waitForResult(context.id));
  if (result.status !== 'completed') return fail(`ended ${result.status} after end(), not completed`);
  return result.turns === turns ? ok : fail(`${result.turns} turns, expected ${turns}`);
}

/**
 * Answers every approval the conversation asks for, until `done` resolves; returns how many it was asked. A decision
 * whose answer was lost (the server restarting) is sent again while the approval is still pending.
 */
async function approveAll(context: ScenarioContext, approve: boolean, done: Promise<unknown>): Promise<number> {
  let finished = false;
  void done.finally(() => (finished = true)).catch(() => undefined);
  const asked = new Set<string>();
  while (!finished && Date.now() < context.deadline) {
    try {
      // The search attribute first: describe is answered by the server, a query needs a workflow task of a worker.
      const description = await context.conversations.handle(context.id).describe();
      if (description.typedSearchAttributes.get(ConversationAwaitingApproval) === true) {
        const state = await context.conversations.getState(context.id);
        for (const pending of state.pendingApprovals) {
          asked.add(pending.callId);
          await context.conversations.approveToolCall(context.id, {
            callId: pending.callId,
            argumentsDigest: pending.argumentsDigest,
            approve,
            ...(!approve && { reason: 'Not today.' }),
          });
        }
      }
    } catch {
      // Not started yet, the server restarting, or decided already by a try whose answer was lost: look again.
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  return asked.size;
}

const chain: Scenario = {
  name: 'chain',
  weight: 3,
  modelCalls: 3,
  question: STOCK_QUESTION,
  run: (context) => oneShot(context, { tools: STOCK_TOOLS }, PRICE),
};

const legacyChain: Scenario = {
  name: 'legacy-xml chain',
  weight: 2,
  modelCalls: 3,
  question: STOCK_QUESTION,
  run: (context) => oneShot(context, { tools: STOCK_TOOLS, protocol: 'legacy-xml' }, PRICE),
};

const continueAsNew: Scenario = {
  name: 'continue-as-new mid-chain',
  weight: 1,
  modelCalls: 3,
  question: STOCK_QUESTION,
  run: (context) => oneShot(context, { tools: STOCK_TOOLS, continueAsNewAfterModelCalls: 1 }, PRICE),
};

const toolFailure: Scenario = {
  name: 'tool failure',
  weight: 1,
  modelCalls: 2,
  question: 'What is the current stock price of Acme Widgets?',
  run: (context) => oneShot(context, { tools: STOCK_TOOLS }, /TickerNotFound/),
};

const multiTurn: Scenario = {
  name: 'multi-turn',
  weight: 1,
  modelCalls: 5,
  question: STOCK_QUESTION,
  async run(context) {
    await startWith(context, { tools: [...STOCK_TOOLS, 'get_weather'], timeouts: { modelHeartbeat: '5 seconds' } });
    const first = await turn(context, 1);
    if (!PRICE.test(first.text)) return fail(`turn 1 answered ${JSON.stringify(first.text.slice(0, 100))}`);
    const updateId = randomUUID();
    const second = await context.retrying('turn 2', () =>
      context.conversations.sendMessage(context.id, "What's the weather in Paris?", undefined, {
        ...remaining(context.deadline),
        updateId,
      }),
    );
    if (!/Paris/.test(second.text)) return fail(`turn 2 answered ${JSON.stringify(second.text.slice(0, 100))}`);
    return endAndCheck(context, 2);
  },
};

function approval(approve: boolean): Scenario {
  return {
    name: approve ? 'approval approved' : 'approval rejected',
    weight: 1,
    modelCalls: 2,
    question: 'Buy 3 shares of General Motors',
    async run(context) {
      await startWith(context, { tools: ['buy_stock'], timeouts: { modelHeartbeat: '5 seconds' } });
      const answered = turn(context, 1);
      const decisions = await approveAll(context, approve, answered);
      const result = await answered;
      if (decisions !== 1) return fail(`${decisions} approvals asked for, expected 1`);
      const filled = /filled/.test(result.text);
      if (filled !== approve)
        return fail(
          `${approve ? 'approved' : 'rejected'}, and the answer is ${JSON.stringify(result.text.slice(0, 100))}`,
        );
      return endAndCheck(context, 1);
    },
  };
}

export const MIXED: readonly Scenario[] = [
  chain,
  legacyChain,
  continueAsNew,
  multiTurn,
  approval(true),
  approval(false),
  toolFailure,
];

export function scenarioPicker(mix: LoadMix, random: () => number): () => Scenario {
  if (mix === 'chain') return () => chain;
  const total = MIXED.reduce((sum, s) => sum + s.weight, 0);
  return () => {
    let x = random() * total;
    for (const scenario of MIXED) if ((x -= scenario.weight) < 0) return scenario;
    return MIXED[0]!;
  };
}
