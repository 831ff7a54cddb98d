// The soak's load: kinds of conversation, each driven through ConversationClient the way a user would, and judged by
// what the user gets back. "mixed" gives every fifth conversation a typed answer, every fifth a budget (one the chain
// fits in, or one it does not: `budget_exhausted` is then the expected outcome), every fifth a stream reader that
// disconnects at random and re-attaches from its last offset, and draws the rest from the other kinds; "chain" is the
// ticker → price chain only. Every answer comes from the local Messages API's demo model (faults before it), so a call
// retried after a kill gets the same answer, and a scripted fault never decides what a conversation says.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { type ConversationClient } from '../../client/conversation-client';
import { ConversationError } from '../../client/errors';
import type { StartOptions } from '../../client/call-options';
import { STOCK_QUESTION, STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import { ConversationAwaitingApproval } from '../../common/search-attributes';
import type { LoadMix } from './args';
import { judgeReading, readingProblem, type SeenItem } from './stream-reading';

/** `expected`: the outcome the user expected, by kind (an answer, a typed answer, `budget_exhausted`, …). */
export type Verdict = { ok: true; expected: string } | { ok: false; why: string };

/** What the stream readers did, over the whole run. */
export interface ReaderStats {
  readers: number;
  /** Disconnects on purpose (the reader's connection aborted at a random moment), each followed by a re-attach. */
  disconnects: number;
  /** Re-attaches after an error (the server away). */
  errors: number;
  /** Durable events read. */
  events: number;
  /** Offsets missing from what a reader saw, and offsets it saw twice: both fail the run. */
  gaps: number;
  repeats: number;
}

export const newReaderStats = (): ReaderStats => ({
  readers: 0,
  disconnects: 0,
  errors: 0,
  events: 0,
  gaps: 0,
  repeats: 0,
});

export interface ScenarioContext {
  conversations: ConversationClient;
  id: string;
  /** The first message, with a tag that makes it unique (the Messages API's scripts match on it). */
  prompt: string;
  deadline: number;
  /** Retries a client call while the server is away (restarting); a ConversationError with a verdict is thrown on. */
  retrying<T>(what: string, call: () => Promise<T>): Promise<T>;
  /** A PRNG for the scenario's own choices (when a reader disconnects). */
  random(): number;
  /** What this run's stream readers did, added to by each. */
  readers: ReaderStats;
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
const answered: Verdict = { ok: true, expected: 'answered' };
const expectedOutcome = (outcome: string): Verdict => ({ ok: true, expected: outcome });
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
  return expect.test(result.text) ? answered : fail(`answered ${JSON.stringify(result.text.slice(0, 100))}`);
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
  return result.turns === turns ? answered : fail(`${result.turns} turns, expected ${turns}`);
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
  run: async (context) => {
    const verdict = await oneShot(context, { tools: STOCK_TOOLS }, /TickerNotFound/);
    return verdict.ok ? expectedOutcome('tool error reported') : verdict;
  },
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
      context.conversations.sendMessage(context.id, "What's the weather in Paris?", {
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
      const ended = await endAndCheck(context, 1);
      return ended.ok ? expectedOutcome(approve ? 'approval honoured' : 'rejection honoured') : ended;
    },
  };
}

const HEARTBEAT = { modelHeartbeat: '5 seconds' };

/** A typed answer: the chain's quote as data, parsed by a zod schema, checked field by field. */
const Quote = z.object({ symbol: z.string().min(1), price: z.number().positive() });

function typedAnswer(mode: 'native' | 'tool'): Scenario {
  return {
    name: `typed answer (${mode})`,
    weight: 1,
    modelCalls: 3,
    question: STOCK_QUESTION,
    async run(context) {
      // Update-with-start, one update id for every try: a try whose answer was lost gets the same outcome.
      const updateId = randomUUID();
      const reply = await context.retrying('typed turn', () =>
        context.conversations.sendMessage(context.id, context.prompt, {
          start: { tools: STOCK_TOOLS, timeouts: HEARTBEAT },
          output: { schema: Quote, mode },
          updateId,
          ...remaining(context.deadline),
        }),
      );
      if (reply.status !== 'awaiting_user') return fail(`turn ended ${reply.status}: ${reply.text.slice(0, 100)}`);
      const { symbol, price } = reply.output;
      if (symbol !== 'GM' || price !== 38.5) return fail(`typed answer ${JSON.stringify(reply.output)}`);
      if (JSON.stringify(JSON.parse(reply.text)) !== JSON.stringify(reply.output))
        return fail(`the text is not the answer's JSON: ${reply.text.slice(0, 100)}`);
      const ended = await endAndCheck(context, 1);
      return ended.ok ? expectedOutcome('typed answer') : ended;
    },
  };
}

/**
 * A turn budget in tokens. One the chain fits in many times over (faults bill the tokens of attempts cut off
 * mid-stream, so a tight fit could tip over): the answer. One it cannot fit in: the turn, and so this one-shot
 * conversation, ends `budget_exhausted` before the chain is done, with nothing sent past the limit but the one call
 * the guard allows over it.
 */
function budgeted(fits: boolean): Scenario {
  const tokens = fits ? 100_000 : BUDGET_TOO_SMALL;
  return {
    name: fits ? 'budget, fits' : 'budget, too small',
    weight: 1,
    modelCalls: 3,
    question: STOCK_QUESTION,
    async run(context) {
      await startWith(context, {
        tools: STOCK_TOOLS,
        closeAfterFirstReply: true,
        timeouts: HEARTBEAT,
        budget: { perTurn: { tokens }, perConversation: { tokens: tokens * 2 } },
      });
      const result = await context.retrying('result', () => context.conversations.waitForResult(context.id));
      const billed =
        result.usage.inputTokens +
        result.usage.outputTokens +
        result.usage.cacheReadInputTokens +
        result.usage.cacheCreationInputTokens;
      if (fits) {
        if (result.status !== 'completed') return fail(`ended ${result.status}: ${result.text.slice(0, 100)}`);
        if (!PRICE.test(result.text)) return fail(`answered ${JSON.stringify(result.text.slice(0, 100))}`);
        return expectedOutcome(`answered within budget`);
      }
      if (result.status !== 'budget_exhausted')
        return fail(`a ${tokens}-token turn budget ended ${result.status}: ${result.text.slice(0, 100)}`);
      // A guard, not a meter: at most one call (its prompt and max_tokens) past the limit.
      if (billed > tokens + BUDGET_SLACK) return fail(`${billed} tokens billed against a ${tokens}-token budget`);
      return expectedOutcome('budget_exhausted');
    },
  };
}

/** Below what the chain takes on the demo model (913 tokens over its three calls), above its first two calls. */
const BUDGET_TOO_SMALL = 800;
/** What one call may take past a budget: its prompt and its max_tokens (1,024), generously. */
const BUDGET_SLACK = 3_000;

/**
 * The chain, read as it happens by a stream reader that disconnects at random moments (its connection aborted) and
 * re-attaches from its last offset + 1, until it has read the conversation's end. What it read must have no offset
 * missing, none twice, and the turn's end; the answer must be the chain's.
 */
const streamReader: Scenario = {
  name: 'stream reader, disconnecting',
  weight: 1,
  modelCalls: 3,
  question: STOCK_QUESTION,
  async run(context) {
    await startWith(context, { tools: STOCK_TOOLS, closeAfterFirstReply: true, timeouts: HEARTBEAT });
    const reading = readDisconnecting(context);
    const result = await context.retrying('result', () => context.conversations.waitForResult(context.id));
    const items = await reading;
    const verdict = judgeReading(items);
    const stats = context.readers;
    stats.events += verdict.events;
    stats.gaps += verdict.gaps.length;
    stats.repeats += verdict.repeats.length;
    const problem = readingProblem(verdict);
    if (problem) return fail(problem);
    if (!verdict.sawConversationEnd) return fail('stream reader: the conversation end was never read');
    if (result.status !== 'completed') return fail(`ended ${result.status}: ${result.text.slice(0, 100)}`);
    if (!PRICE.test(result.text)) return fail(`answered ${JSON.stringify(result.text.slice(0, 100))}`);
    return expectedOutcome('answered, read whole');
  },
};

/** Reads the conversation's events until its end (or the deadline), dropping the connection at random. */
async function readDisconnecting(context: ScenarioContext): Promise<SeenItem[]> {
  const seen: SeenItem[] = [];
  const stats = context.readers;
  stats.readers++;
  let last = -1;
  let ended = false;
  while (!ended && Date.now() < context.deadline) {
    const connection = new AbortController();
    // Most connections are dropped within a few seconds; some last until the end.
    const lifetime = context.random() < 0.8 ? 100 + context.random() * 3_000 : undefined;
    const timer = lifetime === undefined ? undefined : setTimeout(() => connection.abort(), lifetime);
    const stop = setTimeout(() => connection.abort(), Math.max(0, context.deadline - Date.now()));
    try {
      for await (const item of context.conversations.events(context.id, {
        fromOffset: last + 1,
        signal: connection.signal,
        liveIntervalMs: 500,
      })) {
        const { event } = item;
        seen.push({
          offset: item.offset,
          ...(item.live && { live: true }),
          type: event.type,
          ...('turn' in event && typeof event.turn === 'number' && { turn: event.turn }),
        });
        if (!item.live) last = item.offset;
        if (event.type === 'conversation_ended') ended = true;
        if (connection.signal.aborted) break;
      }
      if (!ended && connection.signal.aborted) stats.disconnects++;
    } catch {
      if (connection.signal.aborted) stats.disconnects++;
      else {
        stats.errors++;
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    } finally {
      clearTimeout(timer);
      clearTimeout(stop);
    }
  }
  return seen;
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

/** Every fifth conversation asks for a typed answer, every fifth has a budget, every fifth a disconnecting reader. */
export const TYPED: readonly Scenario[] = [typedAnswer('native'), typedAnswer('tool')];
export const BUDGETED: readonly Scenario[] = [budgeted(true), budgeted(false)];
export const READERS: readonly Scenario[] = [streamReader];

function weighted(scenarios: readonly Scenario[], random: () => number): Scenario {
  const total = scenarios.reduce((sum, s) => sum + s.weight, 0);
  let x = random() * total;
  for (const scenario of scenarios) if ((x -= scenario.weight) < 0) return scenario;
  return scenarios[0]!;
}

/** The kind of conversation `n`: in "mixed", n mod 5 picks typed / budget / reader / the rest (two fifths). */
export function scenarioPicker(mix: LoadMix, random: () => number): (n: number) => Scenario {
  if (mix === 'chain') return () => chain;
  return (n) => {
    const group = [TYPED, BUDGETED, READERS, MIXED, MIXED][n % 5]!;
    return weighted(group, random);
  };
}
