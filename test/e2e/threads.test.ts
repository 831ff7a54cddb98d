// Message threads (the conversation option `threads`, common/threads.ts): the first call creates a thread with the
// whole conversation, each later call continues it with only the messages its turn added — no system prompt, no
// tools. Any thread refusal sends the same call whole as a new thread and the conversation goes on; a request the API
// cannot thread (thinking) goes whole without one, and so does every later call. A reply is never continued twice: a
// retried attempt, a re-run after the worker is SIGKILLed, a max_tokens rung and a fallback model's call all create.
// Across continue-as-new the next run continues the thread with only what is new.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { CallModelInput, CallModelResult } from '../../common/activity-contracts';
import type { ThreadErrorCode } from '../../testing/messages-api/threads';
import { THREADS_BETA } from '../../common/threads';
import { SUMMARY_HEADING } from '../../common/orchestrator-summary';
import { chainSteps, CHAIN_TOOLS } from '../../scripts/bench/chain-script';
import { STOCK_QUESTION, STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import type { RecordedRequest } from '../../testing/messages-api/types';
import { activitiesOf, attemptsOf, type Harness, startHarness, uniquePrompt } from '../support/harness';
import { crashRig } from '../support/crash-rig';

const OPTIONS = { tools: STOCK_TOOLS, threads: true, system: 'Answer briefly.', closeAfterFirstReply: true };

/** Each request as `create`, `continue` or `none`, with how many messages it carried. */
const shapes = (requests: RecordedRequest[]) =>
  requests.map((r) => [(r.body.thread?.type as string | undefined) ?? 'none', r.body.messages.length]);

/** The model calls' results, as the history records them. */
async function modelResults(client: Harness['client'], id: string) {
  const activities = await activitiesOf(client, id);
  return activities
    .filter((a) => a.type === 'callModel' && a.result)
    .map((a) => ({ input: a.input as CallModelInput, result: a.result as CallModelResult, summary: a.summary }));
}

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

describe('threads on the live path', () => {
  test('the stock chain: a create with everything, then continues with only the tool results', async () => {
    const prompt = uniquePrompt(STOCK_QUESTION);
    const id = `threads-live-${randomUUID().slice(0, 8)}`;
    const reply = await h.conversations.sendMessage(id, prompt, { start: OPTIONS });
    assert.match(reply.text, /38\.50/);

    const requests = h.mock.requestsFor(prompt);
    assert.deepEqual(shapes(requests), [
      ['create', 1],
      ['continue', 1],
      ['continue', 1],
    ]);
    const [create, ...continues] = requests;
    assert.ok(create!.body.system && create!.body.tools, 'the create carries the system prompt and the tools');
    for (const request of continues) {
      assert.equal(request.body.system, undefined);
      assert.equal(request.body.tools, undefined);
      assert.equal(request.body.messages[0].content[0].type, 'tool_result', 'only what the turn added');
      assert.ok(request.headers['anthropic-beta']?.includes(THREADS_BETA));
    }
    const calls = await modelResults(h.client, id);
    assert.deepEqual(
      calls.map((c) => c.result.thread?.mode),
      ['created', 'continued', 'continued'],
    );
    // Each continue names the previous reply, and the request went out with it.
    assert.equal(continues[0]!.body.thread.previous_message_id, calls[0]!.result.id);
    assert.equal(continues[1]!.body.thread.previous_message_id, calls[1]!.result.id);
    assert.equal(calls[1]!.input.thread?.continueFrom, calls[0]!.result.id);
    assert.match(calls[0]!.summary ?? '', /new thread/);
    assert.match(calls[1]!.summary ?? '', /continues its thread/);
  });

  test('threads off (the default): no thread field, no beta, the whole conversation every call', async () => {
    const prompt = uniquePrompt(STOCK_QUESTION);
    const id = `threads-off-${randomUUID().slice(0, 8)}`;
    await h.conversations.sendMessage(id, prompt, { start: { ...OPTIONS, threads: undefined } });
    const requests = h.mock.requestsFor(prompt);
    assert.deepEqual(shapes(requests), [
      ['none', 1],
      ['none', 3],
      ['none', 5],
    ]);
    assert.ok(requests.every((r) => !r.headers['anthropic-beta']?.includes(THREADS_BETA)));
    const calls = await modelResults(h.client, id);
    assert.ok(calls.every((c) => c.result.thread === undefined && c.input.thread === undefined));
  });
});

describe('a thread refusal sends the same call whole as a new thread, and the chain goes on', () => {
  const codes: ThreadErrorCode[] = [
    'thread_not_found',
    'thread_already_continued',
    'thread_continue_in_flight',
    'thread_fingerprint_mismatch',
  ];
  for (const code of codes) {
    test(`${code}: create with the whole conversation, then continue from the new reply`, async () => {
      const prompt = uniquePrompt(STOCK_QUESTION);
      h.mock.script(prompt, [{ demo: true }, { fault: 'thread', error: code }]);
      const id = `threads-${code.slice(7, 15)}-${randomUUID().slice(0, 8)}`;
      const reply = await h.conversations.sendMessage(id, prompt, { start: OPTIONS });
      assert.match(reply.text, /38\.50/);
      const requests = h.mock.requestsFor(prompt);
      assert.deepEqual(shapes(requests), [
        ['create', 1],
        ['continue', 1],
        ['create', 3],
        ['continue', 1],
      ]);
      assert.equal(requests[1]!.status, code === 'thread_not_found' ? 404 : 400);
      assert.ok(requests[2]!.body.system && requests[2]!.body.tools);
      const calls = await modelResults(h.client, id);
      assert.deepEqual(
        calls.map((c) => [c.result.thread?.mode, c.result.thread?.error, c.result.attempt]),
        [
          ['created', undefined, 1],
          ['fell_back', code, 1],
          ['continued', undefined, 1],
        ],
        'the fallback happens within the same attempt',
      );
    });
  }

  test('thinking, which threads do not support: the call goes whole without a thread, and so does every later one', async () => {
    const prompt = uniquePrompt(STOCK_QUESTION);
    const id = `threads-thinking-${randomUUID().slice(0, 8)}`;
    const reply = await h.conversations.sendMessage(id, prompt, {
      start: { ...OPTIONS, thinking: { type: 'adaptive' }, maxTokens: 4096 },
    });
    assert.match(reply.text, /38\.50/);
    const requests = h.mock.requestsFor(prompt);
    assert.deepEqual(shapes(requests), [
      ['create', 1],
      ['none', 1],
      ['none', 3],
      ['none', 5],
    ]);
    assert.equal(requests[0]!.status, 400);
    const calls = await modelResults(h.client, id);
    assert.deepEqual(
      calls.map((c) => c.result.thread),
      [{ mode: 'unthreaded', unsupported: ['thinking'] }, undefined, undefined],
    );
  });
});

describe('a reply is never continued twice', () => {
  test('a retried attempt (the continue failed with a 529) sends create with the whole conversation', async () => {
    const prompt = uniquePrompt(STOCK_QUESTION);
    h.mock.script(prompt, [{ demo: true }, { fault: 'status', status: 529 }]);
    const id = `threads-retry-${randomUUID().slice(0, 8)}`;
    const reply = await h.conversations.sendMessage(id, prompt, { start: OPTIONS });
    assert.match(reply.text, /38\.50/);
    assert.deepEqual(shapes(h.mock.requestsFor(prompt)), [
      ['create', 1],
      ['continue', 1],
      ['create', 3],
      ['continue', 1],
    ]);
    const calls = await modelResults(h.client, id);
    assert.deepEqual(
      calls.map((c) => [c.result.thread?.mode, c.result.attempt]),
      [
        ['created', 1],
        ['created', 2],
        ['continued', 1],
      ],
    );
  });

  test('a max_tokens rung asks again with create, then the chain continues from the rung’s reply', async () => {
    const prompt = uniquePrompt(STOCK_QUESTION);
    h.mock.script(prompt, [
      { demo: true },
      { fault: 'truncated-tool-use', tool: { name: 'get_current_stock_price', input: { symbol: 'GM' } } },
    ]);
    const id = `threads-rung-${randomUUID().slice(0, 8)}`;
    const reply = await h.conversations.sendMessage(id, prompt, { start: OPTIONS });
    assert.match(reply.text, /38\.50/);
    const requests = h.mock.requestsFor(prompt);
    assert.deepEqual(shapes(requests), [
      ['create', 1],
      ['continue', 1],
      ['create', 3],
      ['continue', 1],
    ]);
    assert.ok(requests[2]!.body.max_tokens > requests[1]!.body.max_tokens, 'the rung is higher up the ladder');
  });

  test('a fallback model’s call creates its own thread; the next call, on the first model again, creates too', async () => {
    const prompt = uniquePrompt(STOCK_QUESTION);
    h.mock.script(prompt, [{ demo: true }, { fault: 'status', status: 529 }, { fault: 'status', status: 529 }]);
    const id = `threads-fallback-${randomUUID().slice(0, 8)}`;
    const reply = await h.conversations.sendMessage(id, prompt, {
      start: { ...OPTIONS, model: 'claude-sonnet-5-5', fallbackModels: ['claude-opus-5-5'], fallbackAfterAttempts: 2 },
    });
    assert.match(reply.text, /38\.50/);
    const requests = h.mock.requestsFor(prompt);
    assert.deepEqual(
      requests.map((r) => [r.body.thread?.type, r.body.model, r.status]),
      [
        ['create', 'claude-sonnet-5-5', 200],
        ['continue', 'claude-sonnet-5-5', 529],
        ['create', 'claude-sonnet-5-5', 529],
        ['create', 'claude-opus-5-5', 200],
        // The thread was the fallback model's: the fingerprint differs, so no continue is even tried.
        ['create', 'claude-sonnet-5-5', 200],
      ],
    );
  });

  test('a paused turn (pause_turn) is resumed with create; the next call continues from the resumed reply', async () => {
    const prompt = uniquePrompt(STOCK_QUESTION);
    h.mock.script(prompt, [
      {
        reply: {
          content: [
            { type: 'server_tool_use', name: 'web_search', input: { query: 'GM ticker' } },
            { type: 'web_search_tool_result', content: [] },
          ],
          stop_reason: 'pause_turn',
        },
      },
    ]);
    const id = `threads-pause-${randomUUID().slice(0, 8)}`;
    const reply = await h.conversations.sendMessage(id, prompt, {
      start: { ...OPTIONS, serverTools: { webSearch: {} } },
    });
    assert.match(reply.text, /38\.50/);
    const requests = h.mock.requestsFor(prompt);
    assert.deepEqual(shapes(requests), [
      ['create', 1],
      ['create', 2],
      ['continue', 1],
      ['continue', 1],
    ]);
    assert.equal(requests[1]!.body.messages.at(-1).role, 'assistant', 'the paused turn goes back as it is');
  });

  test('continue-as-new after every call: each run continues the thread with only what is new', async () => {
    const prompt = uniquePrompt(STOCK_QUESTION);
    const id = `threads-can-${randomUUID().slice(0, 8)}`;
    const reply = await h.conversations.sendMessage(id, prompt, {
      start: { ...OPTIONS, continueAsNewAfterModelCalls: 1 },
    });
    assert.match(reply.text, /38\.50/);
    assert.deepEqual(shapes(h.mock.requestsFor(prompt)), [
      ['create', 1],
      ['continue', 1],
      ['continue', 1],
    ]);
    const state = await h.conversations.getState(id);
    assert.ok(state.runs >= 3, `a run per call (${state.runs} runs)`);
  });
});

describe('threads with the orchestrator’s own compaction', () => {
  let small: Harness;
  before(async () => {
    small = await startHarness({ contextWindowTokens: 60_000, toolOutputChars: 20_000 });
  });
  after(async () => {
    await small?.close();
  });

  test('a summary rewrites the transcript: the next call creates a new thread with it, then continues again', async () => {
    const prompt = uniquePrompt('Check the weather and some ticker symbols, one lookup at a time (threads).');
    small.mock.script(prompt, chainSteps(14));
    const id = `threads-summary-${randomUUID().slice(0, 8)}`;
    const reply = await small.conversations.sendMessage(id, prompt, {
      start: {
        tools: CHAIN_TOOLS,
        threads: true,
        limits: { maxModelCallsPerTurn: 100, maxToolCallsPerTurn: 100 },
        contextManagement: { mode: 'compaction', compaction: { by: 'orchestrator', triggerTokens: 30_000 } },
      },
    });
    assert.equal(reply.text, 'Done after 14 lookups.');
    const requests = small.mock.requestsFor(prompt);
    const isSummary = (r: RecordedRequest) =>
      JSON.stringify(r.body.messages.at(-1)).includes('Summarise the conversation above');
    const summaries = requests.flatMap((r, i) => (isSummary(r) ? [i] : []));
    assert.ok(summaries.length >= 1, 'the chain was summarised');
    for (const i of summaries) {
      assert.equal(requests[i]!.body.thread, undefined, 'the summary call is not threaded');
      const next = requests[i + 1]!;
      assert.equal(next.body.thread?.type, 'create', 'the call after a summary creates a new thread');
      assert.ok(JSON.stringify(next.body.messages[0]).includes(SUMMARY_HEADING), 'with the summarised transcript');
      assert.equal(requests[i + 2]?.body.thread?.type ?? 'continue', 'continue', 'and the chain continues it');
    }
    const model = requests.filter((r) => !isSummary(r));
    assert.ok(
      model.filter((r) => r.body.thread?.type === 'continue').length >= model.length - 1 - 2 * summaries.length,
      'every other call continues',
    );
  });
});

describe('threads after a worker SIGKILL mid-chain', () => {
  const rig = crashRig('threads-crash');

  test('killed during a continue: the fresh worker’s retry creates a new thread with the whole conversation', async () => {
    await rig.startWorker();
    const prompt = uniquePrompt(STOCK_QUESTION);
    rig.mock.script(prompt, [{ demo: true }, { demo: true, delayMs: 120_000 }]);
    const id = `threads-crash-${randomUUID().slice(0, 8)}`;
    await rig.conversations.startConversation({
      id,
      firstMessage: prompt,
      ...OPTIONS,
      timeouts: { modelHeartbeat: '2 seconds' },
    });
    await rig.killAtRequest(prompt, 2);
    const result = await rig.conversations.waitForResult(id);
    assert.equal(result.status, 'completed');
    assert.match(result.text, /38\.50/);
    const requests = rig.mock.requestsFor(prompt);
    assert.deepEqual(shapes(requests), [
      ['create', 1],
      ['continue', 1],
      ['create', 3],
      ['continue', 1],
    ]);
    assert.notEqual(requests[3]!.body.thread.previous_message_id, requests[1]!.body.thread.previous_message_id);
    // The killed call ran again; the calls before and after it once. The killed call can take more than one retry: an
    // attempt the server hands to the dead worker's last poll, or whose first heartbeat a loaded machine delays past
    // the 2 s timeout, times out before it sends anything (the requests above show no request was sent twice).
    const attempts = (await attemptsOf(rig.client, id)).filter((a) => a.type === 'callModel').map((a) => a.attempt);
    assert.equal(attempts.length, 3);
    assert.equal(attempts[0], 1);
    assert.ok(attempts[1]! >= 2, `the killed call ran again: attempts ${attempts.join(', ')}`);
    assert.equal(attempts[2], 1);
  });
});
