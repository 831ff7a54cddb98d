// A budget guards every request the orchestrator sends, not only the first call of each step: each rung of the
// max_tokens ladder, the orchestrator's own summary call and count_tokens are checked before they go out, and what
// attempts that failed mid-stream billed counts in usage, cost and budgets (and in Temporal's retries of the call).
// Real dev server, real worker, the SDK against the local Messages API with pinned usage.
//
// The promise (README, "Cost and budgets"): a request goes out only if what was spent plus its estimate fits every
// limit. A rung and a summary are estimated at their worst case (prompt + max_tokens); an ordinary call from the last
// call. So a turn ends over its limit by at most one call's worst case — its prompt plus its max_tokens — and nothing
// is sent after that.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { billedTokens } from '../../common/budget';
import type { TokenUsage } from '../../common/conversation-types';
import { costUsd } from '../../common/pricing';
import type { ScriptStep, ScriptUsage } from '../../testing/messages-api/types';
import { type Harness, startHarness, uniquePrompt } from '../support/harness';
import { assertNear } from '../support/assert-near';
import { PRICES } from '../support/test-prices';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

/** Nothing cached: every figure below is input plus output. */
const pinned = (input: number, output?: number): ScriptUsage => ({
  input_tokens: input,
  ...(output !== undefined && { output_tokens: output }),
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
});
const usage = (input: number, output: number): TokenUsage => ({
  inputTokens: input,
  outputTokens: output,
  cacheCreationInputTokens: 0,
  cacheReadInputTokens: 0,
});
/** A reply cut off by max_tokens: the local server bills all of them as output. */
const cutOff = (input: number): ScriptStep => ({
  reply: {
    content: [{ type: 'text', text: 'A very long answer that does not fit' }],
    stop_reason: 'max_tokens',
    usage: pinned(input),
  },
});

describe('the max_tokens ladder', () => {
  test('the issue: four cut-off replies under perTurn {3000 tokens, $0.01} end budget_exhausted after one call', async () => {
    const prompt = uniquePrompt('Write me a very long essay.');
    h.mock.script(prompt, [cutOff(500), cutOff(500), cutOff(500), cutOff(500)]);
    const reply = await h.conversations.sendMessage(`ladder-issue-${Date.now()}`, prompt, {
      start: {
        prices: PRICES,
        budget: { perTurn: { tokens: 3_000, usd: 0.01 } },
      },
    });
    assert.equal(reply.status, 'budget_exhausted');
    const requests = h.mock.requestsFor(prompt);
    assert.deepEqual(
      requests.map((r) => r.body.max_tokens),
      [1024],
      'the rung of 4,096 (worst case 500 + 4,096 more) is never sent',
    );
    assert.match(
      reply.text,
      /a retry with max_tokens 4096 \(the reply was cut off at 1024 output tokens\) would take up to 4596 more/,
    );
    // The cut-off reply is counted: its prompt and the 1,024 output tokens it billed.
    assert.deepEqual(reply.usage, usage(500, 1_024));
    assertNear(reply.costUsd, costUsd(usage(500, 1_024), PRICES));
    // Over the USD limit by less than the one call's worst case (its prompt plus its max_tokens, all of it billed).
    const worstCase = costUsd(usage(500, 1_024), PRICES);
    assert.ok(reply.costUsd! <= 0.01 + worstCase);
    assert.ok(billedTokens(reply.usage) <= 3_000);
  });

  test('a rung whose worst case fits is sent; the next one, which would not fit, is not', async () => {
    const prompt = uniquePrompt('Write me a very long essay.');
    h.mock.script(prompt, [cutOff(500), cutOff(500), cutOff(500), cutOff(500)]);
    // Before the 4,096 rung: 1,524 spent + 500 + 4,096 = 6,120 ≤ 8,000. Before the 16,384 rung: 6,120 + 16,884 > 8,000.
    const reply = await h.conversations.sendMessage(`ladder-rung-${Date.now()}`, prompt, {
      start: {
        budget: { perTurn: { tokens: 8_000 } },
      },
    });
    assert.equal(reply.status, 'budget_exhausted');
    assert.deepEqual(
      h.mock.requestsFor(prompt).map((r) => r.body.max_tokens),
      [1024, 4096],
    );
    assert.deepEqual(reply.usage, usage(1_000, 5_120));
    assert.equal(reply.modelCalls, 2);
    assert.match(
      reply.text,
      /this turn has used 6120 tokens and a retry with max_tokens 16384 \(the reply was cut off at 4096 output tokens\) would take up to 16884 more, over its limit of 8000 tokens/,
    );
    assert.ok(billedTokens(reply.usage) <= 8_000);
  });
});

describe("the orchestrator's summary call", () => {
  test('is checked at its worst case before it goes out: refused, the turn ends budget_exhausted, nothing is sent', async () => {
    const prompt = uniquePrompt('What is the weather in Paris?');
    h.mock.script(prompt, [
      {
        reply: {
          content: [{ type: 'tool_use', name: 'get_weather', input: { location: 'Paris' } }],
          stop_reason: 'tool_use',
          usage: pinned(900, 100),
        },
      },
      { reply: { content: [{ type: 'text', text: 'Mild.' }], stop_reason: 'end_turn', usage: pinned(1_000, 100) } },
      {
        reply: { content: [{ type: 'text', text: 'Still mild.' }], stop_reason: 'end_turn', usage: pinned(1_000, 100) },
      },
    ]);
    const id = `summary-budget-${Date.now()}`;
    const options = {
      tools: ['get_weather'],
      // The summary is due once the next call's input passes 1,000 tokens: at the start of turn 2.
      contextManagement: {
        mode: 'compaction' as const,
        compaction: { by: 'orchestrator' as const, triggerTokens: 1_000 },
      },
      // A call estimated from the last one (about 1,100 tokens) fits; the summary's worst case (about 1,000 + 4,096) does not.
      budget: { perTurn: { tokens: 5_000 } },
    };
    assert.equal((await h.conversations.sendMessage(id, prompt, { start: options })).text, 'Mild.');
    const second = await h.conversations.sendMessage(id, 'And tomorrow?');
    assert.equal(second.status, 'budget_exhausted');
    assert.match(
      second.text,
      /the orchestrator's summary of the context \(max_tokens 4096\) would take up to \d+ more, over its limit of 5000 tokens/,
    );
    assert.equal(h.mock.requestsFor(prompt).length, 2, 'neither the summary nor the model call was sent');
    assert.equal((await h.conversations.getState(id)).status, 'awaiting_user');
  });
});

describe('count_tokens', () => {
  test('is not sent once the budget is spent', async () => {
    const prompt = uniquePrompt('What is the weather in Paris?');
    h.mock.script(prompt, [
      {
        reply: {
          content: [{ type: 'tool_use', name: 'get_weather', input: { location: 'Paris' } }],
          stop_reason: 'tool_use',
          usage: pinned(2_000, 100), // far more than estimated: the turn's 1,500 are spent
        },
      },
    ]);
    const reply = await h.conversations.sendMessage(`count-spent-${Date.now()}`, prompt, {
      start: {
        tools: ['get_weather'],
        budget: { perTurn: { tokens: 1_500 }, estimate: 'count-tokens' },
      },
    });
    assert.equal(reply.status, 'budget_exhausted');
    assert.match(reply.text, /this turn has used 2100 tokens/);
    const counted = h.mock.requests.filter(
      (r) => r.path === '/v1/messages/count_tokens' && JSON.stringify(r.body.messages[0]).includes(prompt),
    );
    assert.equal(counted.length, 1, 'counted before the first call only');
    assert.equal(h.mock.requestsFor(prompt).length, 1);
  });
});

describe('attempts that failed mid-stream', () => {
  /** message_start bills 1,000 input tokens; 400 characters stream (about 100 tokens) before `event: error`. */
  const failedMidStream: ScriptStep = {
    fault: 'stream-error',
    afterBlocks: 1,
    text: 'x'.repeat(400),
    usage: pinned(1_000),
  };

  for (const streaming of [true, false]) {
    test(`count in the turn’s usage and cost, and in its budget (${streaming ? 'streamed' : 'not streamed'} live)`, async () => {
      const prompt = uniquePrompt('Tell me about Paris.');
      h.mock.script(prompt, [
        failedMidStream,
        {
          reply: {
            content: [{ type: 'tool_use', name: 'get_weather', input: { location: 'Paris' } }],
            stop_reason: 'tool_use',
            usage: pinned(1_000, 100),
          },
        },
        { reply: { content: [{ type: 'text', text: 'Mild.' }], stop_reason: 'end_turn', usage: pinned(1_000, 100) } },
      ]);
      // Without the failed attempt 1,100 tokens are spent before call 2, which (about 1,150) would fit 3,000; with it,
      // 2,200 are, and it does not.
      const reply = await h.conversations.sendMessage(`billed-failure-${Date.now()}`, prompt, {
        start: {
          tools: ['get_weather'],
          prices: PRICES,
          budget: { perTurn: { tokens: 3_000 } },
          streaming: { enabled: streaming },
        },
      });
      assert.equal(h.mock.requestsFor(prompt).length, 2, 'the failed attempt, then its retry');
      assert.deepEqual(reply.usage, usage(2_000, 200));
      assertNear(reply.costUsd, costUsd(usage(2_000, 200), PRICES));
      assert.equal(reply.status, 'budget_exhausted');
      assert.match(reply.text, /this turn has used 2200 tokens/);
      assert.equal(reply.modelCalls, 1, 'a failed attempt is not a model call of its own');
    });
  }

  test('a retry the budget can no longer afford is not sent: the turn ends budget_exhausted', async () => {
    const prompt = uniquePrompt('Tell me about Rome.');
    h.mock.script(prompt, [
      { ...failedMidStream, usage: pinned(1_950) },
      { reply: { content: [{ type: 'text', text: 'Old.' }], stop_reason: 'end_turn', usage: pinned(1_000, 100) } },
    ]);
    const id = `billed-retry-${Date.now()}`;
    const reply = await h.conversations.sendMessage(id, prompt, { start: { budget: { perTurn: { tokens: 2_000 } } } });
    assert.equal(reply.status, 'budget_exhausted');
    assert.match(reply.text, /failed after billing 2050 tokens/);
    assert.equal(h.mock.requestsFor(prompt).length, 1, 'no second attempt');
    assert.deepEqual(reply.usage, usage(1_950, 100));
    assert.equal((await h.conversations.getState(id)).status, 'awaiting_user');
  });
});
