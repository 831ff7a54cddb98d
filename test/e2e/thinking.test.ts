// Thinking and effort, end to end on a real Temporal dev server and the local Messages API, which signs the thinking
// blocks it issues and answers 400 when one comes back changed, out of place or missing in a tool loop (as the API
// does). So a chain that completes has sent every thinking block back unchanged and in place — on the live path, with
// no option on a model that thinks by default, with continue-as-new between calls, after the API's compaction and
// the orchestrator's summary, and (second describe) after the worker process is SIGKILLed mid-chain and a fresh one,
// whose transcript cache is empty, rebuilds the context from the workflow.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@temporalio/client';
import { STOCK_QUESTION, STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import type { RecordedRequest } from '../../testing/messages-api/types';
import { activitiesOf, type Harness, startHarness, uniquePrompt } from '../support/harness';
import { durableEventsOf as eventsOf } from '../support/stream-events';
import { crashRig } from '../support/crash-rig';

type Block = { type: string; thinking?: string; signature?: string; data?: string };

/** The assistant messages of a request, by their blocks. */
function assistantMessages(request: RecordedRequest): Block[][] {
  return (request.body.messages as { role: string; content: Block[] | string }[])
    .filter((m) => m.role === 'assistant')
    .map((m) => (typeof m.content === 'string' ? [{ type: 'text' }] : m.content));
}

/**
 * Each request carries every earlier reply's thinking blocks exactly as the server returned them, first in their
 * message: request n's assistant messages are request n-1's plus the reply n-1 answered with.
 */
function assertThinkingCarried(requests: RecordedRequest[], replies: Block[][]): void {
  for (const [n, request] of requests.entries()) {
    const sent = assistantMessages(request);
    const thinkingOf = (blocks: Block[]) =>
      blocks.filter((b) => b.type === 'thinking' || b.type === 'redacted_thinking');
    assert.deepEqual(sent.map(thinkingOf), replies.slice(0, n).map(thinkingOf), `request ${n + 1}`);
    for (const blocks of sent) {
      if (blocks.some((b) => b.type === 'thinking')) assert.equal(blocks[0]!.type, 'thinking', 'thinking comes first');
    }
  }
}

/** The model calls' replies as the history records them (the activity results), in order. */
async function repliesOf(client: Client, id: string): Promise<Block[][]> {
  return (await activitiesOf(client, id))
    .filter((a) => a.type === 'callModel')
    .map((a) => (a.result as { content: Block[] }).content);
}

/** Bytes of a conversation's history (all its events as JSON). */
async function historyBytes(client: Client, id: string): Promise<number> {
  const history = await client.workflow.getHandle(id).fetchHistory();
  return Buffer.byteLength(JSON.stringify(history.events ?? []));
}

describe('thinking and effort on the live path', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h?.close());

  const chain = { tools: STOCK_TOOLS, closeAfterFirstReply: true } as const;

  test('adaptive thinking with effort: every request asks for it, every thinking block goes back in place, thinking is its own event, in usage and in the summaries', async (t) => {
    const prompt = uniquePrompt(STOCK_QUESTION);
    const id = await h.conversations.startConversation({
      firstMessage: prompt,
      ...chain,
      thinking: { type: 'adaptive' },
      effort: 'high',
    });
    const result = await h.conversations.waitForResult(id);
    assert.equal(result.status, 'completed');
    assert.match(result.text, /38\.50/);
    assert.ok(!result.text.includes('Let me'), 'thinking is not in the answer text');

    const requests = h.mock.requestsFor(prompt);
    assert.equal(requests.length, 3);
    for (const request of requests) {
      assert.deepEqual(request.body.thinking, { type: 'adaptive' });
      assert.deepEqual(request.body.output_config, { effort: 'high' });
    }
    const replies = await repliesOf(h.client, id);
    assert.equal(replies.length, 3);
    for (const reply of replies) assert.equal(reply[0]!.type, 'thinking', 'each reply opens with its thinking');
    assertThinkingCarried(requests, replies);

    // Thinking tokens are output tokens: counted, reported apart, priced as output.
    assert.ok(result.usage.thinkingTokens! > 0, JSON.stringify(result.usage));
    assert.ok(result.usage.outputTokens > result.usage.thinkingTokens!);

    const events = await eventsOf(h.conversations, id);
    const thinking = events.filter((e) => e.type === 'thinking');
    assert.equal(thinking.length, 3, 'one thinking event per reply');
    assert.ok(thinking.every((e) => e.type === 'thinking' && e.text.length > 0 && e.block === 0));
    const finished = events.filter((e) => e.type === 'model_call_finished');
    assert.ok(finished.every((e) => e.type === 'model_call_finished' && e.usage.thinkingTokens! > 0));

    const summaries = await activitiesOf(h.client, id);
    const modelSummaries = summaries.filter((a) => a.type === 'callModel').map((a) => a.summary);
    assert.deepEqual(
      modelSummaries,
      [1, 2, 3].map((n) => `claude-sonnet-5-5 · call ${n} · max_tokens 1024 · thinking adaptive · effort high`),
    );

    // The same chain without thinking: what thinking adds to the history, per model call.
    const plainPrompt = uniquePrompt(STOCK_QUESTION);
    const plain = await h.conversations.startConversation({ firstMessage: plainPrompt, ...chain });
    await h.conversations.waitForResult(plain);
    const thinkingChars = replies
      .flat()
      .reduce((n, b) => n + (b.thinking?.length ?? 0) + (b.signature?.length ?? 0), 0);
    const extra = ((await historyBytes(h.client, id)) - (await historyBytes(h.client, plain))) / 3;
    t.diagnostic(
      `history bytes per model call with thinking on: +${Math.round(extra)} (thinking text + signature: ${Math.round(thinkingChars / 3)} characters per call)`,
    );
    // The history holds each thinking block once (the model call's result), not again in later inputs.
    assert.ok(extra < thinkingChars / 3 + 600, `extra ${extra} bytes per call`);
  });

  test('enabled with a budget: budget_tokens below max_tokens on every rung of the ladder (a cut-off reply is asked again higher)', async () => {
    const prompt = uniquePrompt('Budgeted thinking');
    h.mock.script(prompt, [
      { reply: { content: [{ type: 'text', text: 'cut' }], stop_reason: 'max_tokens' } },
      { reply: { content: [{ type: 'text', text: 'Done thinking.' }], stop_reason: 'end_turn' } },
    ]);
    const id = await h.conversations.startConversation({
      firstMessage: prompt,
      model: 'claude-sonnet-4-6',
      maxTokens: 2048,
      thinking: { type: 'enabled', budget_tokens: 1024, display: 'summarized' },
      closeAfterFirstReply: true,
    });
    const result = await h.conversations.waitForResult(id);
    assert.equal(result.status, 'completed');
    const requests = h.mock.requestsFor(prompt);
    assert.deepEqual(
      requests.map((r) => [r.body.max_tokens, r.body.thinking.budget_tokens]),
      [
        [2048, 1024],
        [8192, 1024],
      ],
    );
  });

  test('no thinking option on a model that thinks by default: its thinking and redacted thinking go back in place', async () => {
    const prompt = uniquePrompt('Default thinker');
    h.mock.script(prompt, [
      {
        reply: {
          content: [
            { type: 'thinking', thinking: 'I need the ticker first.' },
            { type: 'redacted_thinking' },
            { type: 'tool_use', name: 'get_ticker_symbol', input: { company_name: 'General Motors' } },
          ],
          stop_reason: 'tool_use',
        },
      },
      {
        reply: {
          content: [
            { type: 'thinking', thinking: 'GM it is.' },
            { type: 'text', text: 'GM trades as GM.' },
          ],
          stop_reason: 'end_turn',
        },
      },
    ]);
    const id = await h.conversations.startConversation({ firstMessage: prompt, tools: STOCK_TOOLS });
    const first = await h.conversations.awaitTurn(id, 1);
    assert.equal(first.status, 'awaiting_user');
    // A second turn: the first turn's thinking is still sent back, unchanged.
    await h.conversations.submitMessage(id, 'Thanks');
    await h.conversations.awaitTurn(id, 2);
    await h.conversations.end(id);
    const requests = h.mock.requestsFor(prompt);
    assert.equal(requests.length, 3);
    assert.equal(requests[0]!.body.thinking, undefined, 'no option: nothing sent, the model decides');
    const replies = await repliesOf(h.client, id);
    assert.deepEqual(
      replies[0]!.map((b) => b.type),
      ['thinking', 'redacted_thinking', 'tool_use'],
    );
    assertThinkingCarried(requests, replies);
    const events = await eventsOf(h.conversations, id);
    assert.ok(events.some((e) => e.type === 'thinking' && e.redacted === true && e.text === ''));
  });

  test('continue-as-new after every model call: the next run sends the thinking blocks the last one received', async () => {
    const prompt = uniquePrompt(STOCK_QUESTION);
    const id = await h.conversations.startConversation({
      firstMessage: prompt,
      ...chain,
      thinking: { type: 'adaptive', display: 'summarized' },
      continueAsNewAfterModelCalls: 1,
    });
    // The state is read before the end: a closed conversation's last run has the count.
    const result = await h.conversations.waitForResult(id);
    assert.equal(result.status, 'completed');
    assert.match(result.text, /38\.50/);
    const requests = h.mock.requestsFor(prompt);
    assert.equal(requests.length, 3);
    // Every call but the first was sent by a run that did not receive the reply it carries back.
    const [, second, third] = requests;
    const firstReply = assistantMessages(second!)[0]!;
    assert.equal(firstReply[0]!.type, 'thinking');
    assert.deepEqual(assistantMessages(third!)[0], firstReply, 'the same blocks, two runs later');
    assert.equal(assistantMessages(third!)[1]![0]!.type, 'thinking');
    assert.ok(result.usage.thinkingTokens! > 0, 'thinking tokens carried across runs');
  });
});

describe('thinking with compaction, outputs that fill the window in two tool calls', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ contextWindowTokens: 100_000, toolOutputChars: 110_000 });
  });
  after(() => h?.close());

  for (const by of ['api', 'orchestrator'] as const) {
    test(`compacted by the ${by}: the thinking blocks of the messages kept stay as they were, first in their message`, async () => {
      const prompt = uniquePrompt(STOCK_QUESTION);
      const id = await h.conversations.startConversation({
        firstMessage: prompt,
        tools: STOCK_TOOLS,
        closeAfterFirstReply: true,
        thinking: { type: 'adaptive' },
        contextManagement: { mode: 'compaction', compaction: { by, triggerTokens: 50_000 } },
      });
      const result = await h.conversations.waitForResult(id);
      assert.equal(result.status, 'completed', JSON.stringify(result));
      assert.match(result.text, /General Motors/);
      assert.equal((await h.conversations.getState(id)).context.compactions, 1);
      // The model calls (the orchestrator's summary request carries no thinking option).
      const requests = h.mock.requestsFor(prompt).filter((r) => r.body.thinking !== undefined);
      assert.equal(requests.length, 3);
      const replies = await repliesOf(h.client, id);
      const issued = new Set(
        replies
          .flat()
          .filter((b) => b.type === 'thinking')
          .map((b) => b.signature),
      );
      for (const request of requests) {
        for (const blocks of assistantMessages(request)) {
          const content = blocks.filter((b) => b.type !== 'compaction');
          if (content.some((b) => b.type === 'tool_use')) assert.equal(content[0]!.type, 'thinking');
          for (const b of content) if (b.type === 'thinking') assert.ok(issued.has(b.signature), 'a block issued');
        }
      }
    });
  }
});

describe('thinking after a worker SIGKILL mid-chain', () => {
  const rig = crashRig('thinking-crash');

  test('killed during the second model call: a fresh worker rebuilds the context from the workflow, thinking blocks unchanged', async () => {
    await rig.startWorker();
    const prompt = uniquePrompt(STOCK_QUESTION);
    rig.mock.script(prompt, [{ demo: true }, { demo: true, delayMs: 120_000 }]);
    const id = `thinking-crash-${randomUUID().slice(0, 8)}`;
    await rig.conversations.startConversation({
      id,
      firstMessage: prompt,
      tools: STOCK_TOOLS,
      closeAfterFirstReply: true,
      thinking: { type: 'adaptive' },
      effort: 'medium',
      timeouts: { modelHeartbeat: '2 seconds' },
    });
    await rig.killAtRequest(prompt, 2);
    const result = await rig.conversations.waitForResult(id);
    assert.equal(result.status, 'completed');
    assert.match(result.text, /38\.50/);

    const requests = rig.mock.requestsFor(prompt);
    assert.equal(requests.length, 4, 'three calls, the second twice');
    assert.deepEqual(requests[2]!.body.messages, requests[1]!.body.messages, 'the retry sends the same conversation');
    const replies = await repliesOf(rig.client, id);
    assertThinkingCarried([requests[0]!, requests[2]!, requests[3]!], replies);
    for (const request of requests) assert.deepEqual(request.body.output_config, { effort: 'medium' });
  });
});
