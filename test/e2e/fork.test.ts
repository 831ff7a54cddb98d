// Forking a conversation (docs/fork.md), on the real dev server and the local Messages API: a fork before a turn
// starts from the origin's transcript up to that turn's message — tool results included, no tool run again — takes a
// new message, and leaves the origin as it was. It works on a conversation that continued-as-new, one that waits for
// an approval (the fork has none), a threaded one (the fork starts a thread of its own), and a fork of a fork; every
// fork lists under the ForkedFrom search attribute and names its origin in the Web UI.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { ConversationClient } from '../../client/conversation-client';
import { ConversationError } from '../../client/errors';
import { DEFAULT_MODEL } from '../../common/options';
import { ForkedFrom } from '../../common/search-attributes';
import { type Harness, namespace, startHarness, uniquePrompt } from '../support/harness';
import { callsTools, says } from '../support/script-steps';
import { stateAwaitingApproval } from '../support/awaiting-approval';
import { waitUntil } from '../support/wait-until';
import { chainSteps, CHAIN_TOOLS } from '../../scripts/bench/chain-script';

const TOOLS = ['get_ticker_symbol', 'get_current_stock_price', 'buy_stock'];
const OPTIONS = { tools: TOOLS };

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

/** Three turns, the first two with a tool call each; the script's last step answers the fork's message. */
async function threeTurns(label: string, options: Record<string, unknown> = {}) {
  const prompt = uniquePrompt(`Look up General Motors (${label}).`);
  h.mock.script(prompt, [
    callsTools(['get_ticker_symbol', { company_name: 'General Motors' }]),
    says('General Motors trades as GM.'),
    callsTools(['get_current_stock_price', { symbol: 'GM' }]),
    says('GM is at 38.50.'),
    says('You are welcome.'),
  ]);
  const id = `fork-origin-${label}-${randomUUID().slice(0, 8)}`;
  const replies = [
    await h.conversations.sendMessage(id, prompt, { start: { ...OPTIONS, ...options } }),
    await h.conversations.sendMessage(id, 'And its price?'),
    await h.conversations.sendMessage(id, 'Thanks.'),
  ];
  return { id, prompt, replies };
}

const toolRuns = (id?: string) => h.executions(id).filter((line) => line.event === 'start').length;

describe('fork', () => {
  test('before turn 2 of three: the first turn with its tool results, no tool run again, a new answer, the origin untouched', async () => {
    const { id, prompt, replies } = await threeTurns('basic');
    assert.deepEqual(
      replies.map((r) => r.text),
      ['General Motors trades as GM.', 'GM is at 38.50.', 'You are welcome.'],
    );
    const originTranscript = await h.conversations.getTranscript(id);
    const originState = await h.conversations.getState(id);
    const runsBefore = toolRuns();
    assert.equal(toolRuns(id), 2);

    h.mock.script(prompt, [says('Ford trades as F.')]);
    const started = Date.now();
    const fork = await h.conversations.fork(id, { at: { beforeTurn: 2 }, message: 'What about Ford?' });
    const forkLatencyMs = Date.now() - started;
    assert.equal(fork.turn, 2, "the fork's message is its turn 2");
    assert.equal(fork.forkedFrom.workflowId, id);
    assert.equal(fork.forkedFrom.turn, 2);
    const answer = await h.conversations.awaitTurn(fork.id, fork.turn);
    assert.equal(answer.text, 'Ford trades as F.');
    assert.equal(answer.turn, 2);

    const forkTranscript = await h.conversations.getTranscript(fork.id);
    // The first turn as the origin had it: message, tool call, tool result, answer.
    assert.deepEqual(forkTranscript.slice(0, 4), originTranscript.slice(0, 4));
    assert.equal(
      (originTranscript[2]!.content as Array<{ type: string }>)[0]!.type,
      'tool_result',
      'the tool result is in',
    );
    assert.deepEqual(forkTranscript[4], { role: 'user', content: 'What about Ford?' });
    assert.equal(forkTranscript.length, 6);
    // The fork's model call carried the origin's first turn.
    const forkRequest = h.mock.requestsFor(prompt).at(-1)!;
    assert.equal(forkRequest.body.messages.length, 5);

    // No tool ran again, for the fork or the origin; the origin is as it was.
    assert.equal(toolRuns(), runsBefore);
    assert.equal(toolRuns(fork.id), 0);
    assert.deepEqual(await h.conversations.getTranscript(id), originTranscript);
    const after = await h.conversations.getState(id);
    assert.equal(after.turns, originState.turns);
    assert.equal(after.modelCalls, originState.modelCalls);

    const forkState = await h.conversations.getState(fork.id);
    assert.deepEqual(forkState.forkedFrom, fork.forkedFrom);
    assert.equal(forkState.turns, 2, 'turns go on from the origin’s numbering');
    assert.equal(forkState.modelCalls, 1, "the fork's counters are its own");
    assert.equal(forkState.runs, 1);

    // For the report: the fork's first run (one turn, one model call) against a fresh conversation's of one call.
    const freshPrompt = uniquePrompt('A fresh conversation.');
    h.mock.script(freshPrompt, [says('Fresh.')]);
    const freshId = `fork-fresh-${randomUUID().slice(0, 8)}`;
    await h.conversations.sendMessage(freshId, freshPrompt, { start: OPTIONS });
    const bytes = async (workflowId: string) =>
      JSON.stringify(await h.client.workflow.getHandle(workflowId).fetchHistory()).length;
    console.log(
      `# fork: latency ${forkLatencyMs} ms (fork point query + start); first-run history ${await bytes(fork.id)} bytes, a fresh one-call conversation's ${await bytes(freshId)} bytes`,
    );
  });

  test('the Web UI names the origin, and ForkedFrom lists the forks', async () => {
    const { id } = await threeTurns('listed');
    const fork = await h.conversations.fork(id, { at: { afterTurn: 1 } });
    assert.equal(fork.turn, 2, 'after turn 1 is before turn 2');
    const described = await h.conversations.handle(fork.id).describe();
    assert.equal(described.typedSearchAttributes.get(ForkedFrom), id);
    const staticSummary = await described.staticSummary();
    const staticDetails = await described.staticDetails();
    assert.match(staticSummary ?? '', new RegExp(`^Fork of ${id} before turn 2`));
    assert.match(staticDetails ?? '', new RegExp(`forked from: ${id}, before turn 2 \\(run `));
    const listed = await waitUntil('the fork to be listed', async () => {
      const found: string[] = [];
      for await (const execution of h.client.workflow.list({ query: `ForkedFrom = "${id}"` })) {
        found.push(execution.workflowId);
      }
      return found.length > 0 && found;
    });
    assert.deepEqual(listed, [fork.id]);
    const state = await h.conversations.getState(fork.id);
    assert.equal(state.status, 'awaiting_user');
    assert.equal(state.turns, 1);
  });

  test("a conversation that has ended; the fork's Web UI details link to the origin's page when the UI is known", async () => {
    const { id, prompt } = await threeTurns('ended');
    await h.conversations.end(id);
    assert.equal((await h.conversations.waitForResult(id)).status, 'completed');
    const withUi = new ConversationClient({
      client: h.client,
      taskQueue: h.taskQueue,
      tools: TOOLS,
      webUiUrl: 'http://ui.example:8233/',
    });
    h.mock.script(prompt, [says('After the end, a fork.')]);
    const fork = await withUi.fork(id, { at: { beforeTurn: 3 }, message: 'One more?' });
    assert.equal((await withUi.awaitTurn(fork.id, 3)).text, 'After the end, a fork.');
    const details = await (await withUi.handle(fork.id).describe()).staticDetails();
    assert.match(
      details ?? '',
      new RegExp(`forked from: \\[${id}\\]\\(http://ui\\.example:8233/namespaces/${namespace}/workflows/${id}\\)`),
    );
  });

  test('a fork of a fork names its own origin; after the last turn, the whole transcript', async () => {
    const { id, prompt } = await threeTurns('twice');
    h.mock.script(prompt, [says('First fork.'), says('Second fork.')]);
    const first = await h.conversations.fork(id, { at: { beforeTurn: 3 }, message: 'Fork one' });
    await h.conversations.awaitTurn(first.id, first.turn);
    const second = await h.conversations.fork(first.id, { at: { afterTurn: 3 }, message: 'Fork two' });
    assert.equal(second.turn, 4);
    assert.equal(second.forkedFrom.workflowId, first.id);
    const answer = await h.conversations.awaitTurn(second.id, 4);
    assert.equal(answer.text, 'Second fork.');
    const transcript = await h.conversations.getTranscript(second.id);
    const firstTranscript = await h.conversations.getTranscript(first.id);
    assert.deepEqual(transcript.slice(0, firstTranscript.length), firstTranscript);
    const described = await h.conversations.handle(second.id).describe();
    assert.equal(described.typedSearchAttributes.get(ForkedFrom), first.id);
  });

  test('a conversation that continued-as-new after every model call', async () => {
    const { id, prompt } = await threeTurns('continued', { continueAsNewAfterModelCalls: 1 });
    const state = await h.conversations.getState(id);
    assert.ok(state.runs >= 5, `${state.runs} runs`);
    const originTranscript = await h.conversations.getTranscript(id);
    h.mock.script(prompt, [says('From the fork.')]);
    const fork = await h.conversations.fork(id, { at: { beforeTurn: 3 }, message: 'Once more?' });
    assert.equal((await h.conversations.awaitTurn(fork.id, 3)).text, 'From the fork.');
    const transcript = await h.conversations.getTranscript(fork.id);
    assert.deepEqual(transcript.slice(0, 8), originTranscript.slice(0, 8), 'two turns with their tool results');
    assert.deepEqual(transcript[8], { role: 'user', content: 'Once more?' });
  });

  test('a conversation waiting for an approval: the fork has no pending approval and takes a message', async () => {
    const prompt = uniquePrompt('Buy me some GM.');
    h.mock.script(prompt, [
      says('Sure, how many?'),
      callsTools(['buy_stock', { symbol: 'GM', quantity: 3 }]),
      says('Fine, no order then.'),
    ]);
    const id = `fork-origin-approval-${randomUUID().slice(0, 8)}`;
    await h.conversations.sendMessage(id, prompt, { start: OPTIONS });
    await h.conversations.submitMessage(id, 'Three shares.');
    const waiting = await stateAwaitingApproval(h.conversations, id);
    assert.equal(waiting.pendingApprovals.length, 1);

    const fork = await h.conversations.fork(id, { at: { beforeTurn: 2 }, message: 'Actually, none.' });
    const answer = await h.conversations.awaitTurn(fork.id, 2);
    assert.equal(answer.text, 'Fine, no order then.');
    const forkState = await h.conversations.getState(fork.id);
    assert.deepEqual(forkState.pendingApprovals, []);
    assert.equal(forkState.status, 'awaiting_user');
    // The origin still waits for its approval; nothing was bought.
    assert.equal((await h.conversations.getState(id)).pendingApprovals.length, 1);
    assert.equal(h.executions(undefined, 'buy_stock').length, 0);
    // Forking past the turn under way is refused.
    await assert.rejects(
      h.conversations.fork(id, { at: { beforeTurn: 3 } }),
      (err: unknown) =>
        err instanceof ConversationError && err.code === 'rejected' && /turn 2 is under way/.test(err.message),
    );
    await h.conversations.cancel(id);
  });

  test("a threaded conversation: the fork's first call starts a thread of its own", async () => {
    const { id, prompt } = await threeTurns('threads', { threads: true });
    const originRequests = h.mock.requestsFor(prompt);
    assert.equal(originRequests.at(-1)!.body.thread?.type, 'continue', 'the origin continues its thread');
    h.mock.script(prompt, [says('Threaded fork.')]);
    const fork = await h.conversations.fork(id, { at: { beforeTurn: 3 }, message: 'Again?' });
    assert.equal((await h.conversations.awaitTurn(fork.id, 3)).text, 'Threaded fork.');
    const forkRequest = h.mock.requestsFor(prompt).at(-1)!;
    assert.equal(forkRequest.body.thread?.type, 'create');
    assert.equal(forkRequest.body.messages.length, 9, 'the whole transcript, in a new thread');
  });

  test('another model and the same message: both answers, side by side', async () => {
    const { id, prompt, replies } = await threeTurns('model');
    h.mock.script(prompt, [says('The other model says: GM, 38.50.')]);
    const fork = await h.conversations.fork(id, {
      at: { beforeTurn: 2 },
      options: { model: 'claude-opus-4-1', system: 'Be terse.' },
      message: 'And its price?',
    });
    const answer = await h.conversations.awaitTurn(fork.id, 2);
    const original = await h.conversations.awaitTurn(id, 2);
    assert.equal(original.text, replies[1]!.text);
    assert.equal(answer.text, 'The other model says: GM, 38.50.');
    const request = h.mock.requestsFor(prompt).at(-1)!;
    assert.equal(request.body.model, 'claude-opus-4-1');
    assert.match(JSON.stringify(request.body.system), /Be terse\./);
    assert.equal((await h.conversations.getState(fork.id)).model, 'claude-opus-4-1');
    assert.equal((await h.conversations.getState(id)).model, DEFAULT_MODEL, 'the origin keeps its model');
  });

  test('turns that cannot be forked before: one not yet begun, an unknown conversation', async () => {
    const { id } = await threeTurns('bounds');
    await assert.rejects(
      h.conversations.fork(id, { at: { beforeTurn: 5 } }),
      (err: unknown) =>
        err instanceof ConversationError &&
        err.code === 'rejected' &&
        /3 turns have ended; the latest point is before turn 4/.test(err.message),
    );
    await assert.rejects(
      h.conversations.fork(`no-such-${randomUUID()}`, { at: { beforeTurn: 1 } }),
      (err: unknown) => err instanceof ConversationError && err.code === 'not_found',
    );
  });
});

describe('fork of a compacted conversation', () => {
  /** As test/e2e/context-window.test.ts: 14 lookups of ~5,000 tokens each overflow a 60,000-token window. */
  const STEPS = 14;
  let c: Harness;
  before(async () => {
    c = await startHarness({ contextWindowTokens: 60_000, toolOutputChars: 20_000 });
  });
  after(async () => {
    await c?.close();
  });

  test("the API's compaction stands for the turns it replaced: the fork starts from it, and sends it", async () => {
    const prompt = uniquePrompt('Check the weather and some ticker symbols, one lookup at a time (fork).');
    c.mock.script(prompt, [...chainSteps(STEPS), says('Anything else?'), says('From the compacted fork.')]);
    const id = `fork-origin-compacted-${randomUUID().slice(0, 8)}`;
    const first = await c.conversations.sendMessage(id, prompt, {
      start: {
        tools: CHAIN_TOOLS,
        limits: { maxModelCallsPerTurn: 100, maxToolCallsPerTurn: 100 },
        contextManagement: { mode: 'compaction', compaction: { triggerTokens: 50_000 } },
      },
    });
    assert.equal(first.text, `Done after ${STEPS} lookups.`);
    await c.conversations.sendMessage(id, 'Thanks.');
    const state = await c.conversations.getState(id);
    assert.equal(state.context.compactions, 1);
    const origin = await c.conversations.getTranscript(id);
    assert.equal(firstBlockType(origin[0]), 'compaction');
    const toolRunsBefore = c.executions().length;

    // Turn 1 began among the messages the compaction replaced: there is no point before it any more.
    await assert.rejects(
      c.conversations.fork(id, { at: { beforeTurn: 1 } }),
      (err: unknown) => err instanceof ConversationError && /a compaction replaced them/.test(err.message),
    );
    const fork = await c.conversations.fork(id, { at: { beforeTurn: 2 }, message: 'Something else.' });
    assert.equal((await c.conversations.awaitTurn(fork.id, 2)).text, 'From the compacted fork.');
    const transcript = await c.conversations.getTranscript(fork.id);
    const cut = origin.length - 2; // turn 2's message and answer
    assert.deepEqual(transcript.slice(0, cut), origin.slice(0, cut));
    const request = c.mock.requestsFor(prompt).at(-1)!;
    assert.equal(firstBlockType(request.body.messages[0]), 'compaction', 'the fork sends the compacted context');
    assert.equal(c.executions().length, toolRunsBefore, 'no tool ran again');
  });
});

const firstBlockType = (message: { content: unknown } | undefined) =>
  Array.isArray(message?.content) ? (message.content[0] as { type: string } | undefined)?.type : undefined;

describe('fork after a step inside a turn', () => {
  test('a 3-step turn forked after step 1 with another model: step 1 kept with its tool result, the tool ran once, the fork answers the turn, the origin untouched', async () => {
    const prompt = uniquePrompt('What is General Motors trading at (step)?');
    h.mock.script(prompt, [
      callsTools(['get_ticker_symbol', { company_name: 'General Motors' }]),
      callsTools(['get_current_stock_price', { symbol: 'GM' }]),
      says('GM is at 38.50.'),
    ]);
    const id = `fork-step-${randomUUID().slice(0, 8)}`;
    const original = await h.conversations.sendMessage(id, prompt, { start: OPTIONS });
    assert.equal(original.text, 'GM is at 38.50.');
    assert.equal(original.modelCalls, 3);
    const originTranscript = await h.conversations.getTranscript(id);
    const originState = await h.conversations.getState(id);
    const tickerRuns = () => h.executions(undefined, 'get_ticker_symbol').filter((l) => l.event === 'start').length;
    const tickerRunsBefore = tickerRuns();
    assert.equal(toolRuns(id), 2);

    h.mock.script(prompt, [says('The other model, from the ticker alone: GM.')]);
    const fork = await h.conversations.fork(id, {
      at: { afterStep: { turn: 1, step: 1 } },
      options: { model: 'claude-opus-4-1' },
    });
    assert.equal(fork.turn, 1, 'the fork goes on with turn 1');
    assert.deepEqual(fork.forkedFrom, { ...fork.forkedFrom, workflowId: id, turn: 1, step: 1 });
    const answer = await h.conversations.awaitTurn(fork.id, fork.turn);
    assert.equal(answer.text, 'The other model, from the ticker alone: GM.');
    assert.equal(answer.turn, 1);
    assert.equal(answer.modelCalls, 1, "the fork's own calls: the one after step 1");

    // The fork's only model call went to the other model with the turn up to step 1's tool result, no user message after it.
    const request = h.mock.requestsFor(prompt).at(-1)!;
    assert.equal(request.body.model, 'claude-opus-4-1');
    assert.equal(request.body.messages.length, 3);
    const forkTranscript = await h.conversations.getTranscript(fork.id);
    assert.deepEqual(forkTranscript.slice(0, 3), originTranscript.slice(0, 3));
    assert.equal((forkTranscript[2]!.content as Array<{ type: string }>)[0]!.type, 'tool_result');
    assert.equal(forkTranscript.length, 4);

    // No tool ran again: the ticker tool ran once in all, the fork ran none.
    assert.equal(tickerRuns(), tickerRunsBefore);
    assert.equal(toolRuns(fork.id), 0);
    assert.deepEqual(await h.conversations.getTranscript(id), originTranscript);
    const after = await h.conversations.getState(id);
    assert.equal(after.modelCalls, originState.modelCalls);
    assert.equal(after.turns, originState.turns);

    // The fork's event log starts with the turn it went on with, and ends it as any turn.
    const types: string[] = [];
    for await (const item of h.conversations.events(fork.id, { fromOffset: 0 })) {
      types.push(item.event.type);
      if (item.event.type === 'turn_finished' || item.event.type === 'turn_failed') break;
    }
    assert.equal(types[0], 'turn_started');
    assert.equal(types.at(-1), 'turn_finished');

    // It is a conversation like any: the next message is its turn 2, and it can be forked again before turn 1's end.
    h.mock.script(prompt, [says('Still GM.')]);
    const next = await h.conversations.sendMessage(fork.id, 'And the ticker?');
    assert.equal(next.turn, 2);
    assert.equal(next.text, 'Still GM.');
    const forkState = await h.conversations.getState(fork.id);
    assert.deepEqual(forkState.forkedFrom, fork.forkedFrom);
    assert.equal(forkState.model, 'claude-opus-4-1');
  });

  test('a step point with a message, or one the turn does not have, is refused before anything starts', async () => {
    const { id } = await threeTurns('step-bounds');
    await assert.rejects(
      h.conversations.fork(id, { at: { afterStep: { turn: 1, step: 1 } }, message: 'Hello' }),
      (err: unknown) =>
        err instanceof ConversationError && err.code === 'invalid_options' && /takes no message/.test(err.message),
    );
    await assert.rejects(
      h.conversations.fork(id, { at: { afterStep: { turn: 1, step: 2 } } }),
      (err: unknown) =>
        err instanceof ConversationError &&
        err.code === 'rejected' &&
        /step 2 is its answer: fork after turn 1/.test(err.message),
    );
  });
});
