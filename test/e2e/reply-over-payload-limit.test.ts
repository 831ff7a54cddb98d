// A model reply too large to be an activity result (Temporal refuses a payload over 2 MiB): a fetched PDF comes back
// as a 2.3 MB `web_fetch_tool_result`. The API billed the call all the same, so its usage counts — in the state, the
// cost, the ConversationCostUsd search attribute and the budget, which stops the next request. The turn fails with
// `ModelReplyTooLarge`, naming the limit and what to change; the call is not retried (a retry is paid again), and the
// conversation takes its next message (docs/deployment.md, "Limits at the boundaries").
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ConversationError } from '../../client/errors';
import { ModelFailureType } from '../../common/failure-types';
import { costUsd } from '../../common/pricing';
import { ConversationCostUsd } from '../../common/search-attributes';
import type { ScriptStep, ScriptUsage } from '../../testing/messages-api/types';
import { attemptsOf, type Harness, startHarness, uniquePrompt } from '../support/harness';
import { assertUnharmed } from '../support/hostile';
import { assertNear } from '../support/assert-near';
import { PRICES, usageOf } from '../support/test-prices';
import { says } from '../support/script-steps';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

/** What the API bills for a call that read a fetched PDF: 400,000 input tokens. */
const PDF_CALL: ScriptUsage = {
  input_tokens: 400_000,
  output_tokens: 200,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
};
const PDF_COST = costUsd(usageOf(PDF_CALL), PRICES);

/** A reply that fetched a PDF (base64 in a `document` block, as the API returns one; 2.3 MB by default) and read it. */
function fetchedPdf(stopReason = 'end_turn', pdfBytes = 1_725_000): ScriptStep {
  const data = Buffer.alloc(pdfBytes, 'pdf-bytes ').toString('base64'); // 2,300,000 characters by default
  return {
    reply: {
      content: [
        {
          type: 'server_tool_use',
          id: 'srvtoolu_01fetch',
          name: 'web_fetch',
          input: { url: 'https://example.com/annual-report.pdf' },
        },
        {
          type: 'web_fetch_tool_result',
          content: {
            type: 'web_fetch_result',
            url: 'https://example.com/annual-report.pdf',
            retrieved_at: '2026-11-28T06:00:00Z',
            content: {
              type: 'document',
              source: { type: 'base64', media_type: 'application/pdf', data },
              title: 'Annual report',
            },
          },
        },
        { type: 'text', text: 'The report says revenue grew.' },
      ],
      stop_reason: stopReason,
      usage: PDF_CALL,
    },
  };
}

async function failure(sent: Promise<unknown>): Promise<ConversationError> {
  return sent.then(
    () => assert.fail('expected the turn to fail'),
    (err: unknown) => {
      assert.ok(err instanceof ConversationError, String(err));
      return err;
    },
  );
}

test('a reply over the size limit is billed, fails its turn naming the limit, and the budget stops the next request', async () => {
  const prompt = uniquePrompt('Summarise the annual report at https://example.com/annual-report.pdf');
  h.mock.script(prompt, [fetchedPdf(), fetchedPdf(), fetchedPdf()]);
  const id = `oversize-budget-${Date.now()}`;
  const start = {
    serverTools: { webFetch: {} },
    prices: PRICES,
    budget: { perConversation: { tokens: 100_000 } },
  };

  const error = await failure(h.conversations.sendMessage(id, prompt, { start }));
  assert.equal(error.code, 'turn_failed');
  assert.equal(error.failureType, ModelFailureType.ReplyTooLarge);
  assert.match(error.message, /[\d,]+ bytes, over the limit of [\d,]+ bytes/);
  assert.match(error.message, /serverTools\.webFetch\.maxContentTokens/, 'it names what to change');
  assert.deepEqual(
    (await attemptsOf(h.client, id)).map((a) => [a.type, a.attempt]),
    [['callModel', 1]],
    'not retried: a retry is billed again',
  );

  const state = await h.conversations.getState(id);
  assert.equal(state.usage.inputTokens, 400_000);
  assert.equal(state.usage.outputTokens, 200);
  assertNear(state.costUsd, PDF_COST);
  assertNear(
    (await h.client.workflow.getHandle(id).describe()).typedSearchAttributes.get(ConversationCostUsd),
    PDF_COST,
  );

  // 400,200 tokens spent against 100,000: the next request is not sent. (The failed turn left the transcript, so the
  // next request would open with the new message.)
  const again = uniquePrompt('Try again, please.');
  const next = await h.conversations.sendMessage(id, again);
  assert.equal(next.status, 'budget_exhausted');
  assert.equal(
    h.mock.requestsFor(prompt).length + h.mock.requestsFor(again).length,
    1,
    'the budget stopped the second',
  );
  await assertUnharmed(h, id);
});

test('after a turn whose reply was too large the conversation answers its next message', async () => {
  const prompt = uniquePrompt('Summarise the annual report at https://example.com/annual-report.pdf');
  const instead = uniquePrompt('Use the press release instead.');
  h.mock.script(prompt, [fetchedPdf()]);
  h.mock.script(instead, [says('Without the PDF: revenue grew, by the press release.')]);
  const id = `oversize-next-${Date.now()}`;

  const error = await failure(h.conversations.sendMessage(id, prompt, { start: { serverTools: { webFetch: {} } } }));
  assert.equal(error.failureType, ModelFailureType.ReplyTooLarge);
  assert.equal((await h.conversations.getState(id)).status, 'awaiting_user');

  const next = await h.conversations.sendMessage(id, instead);
  assert.equal(next.text, 'Without the PDF: revenue grew, by the press release.');
  // The failed turn left the transcript; what the model is sent next is the new message alone, which the API accepts.
  const [second] = h.mock.requestsFor(instead);
  assert.equal(second?.status, 200);
  assert.deepEqual(
    second.body.messages.map((m: { role: string }) => m.role),
    ['user'],
  );
  assert.doesNotMatch(JSON.stringify(second.body.messages), /web_fetch_tool_result/);
  await assertUnharmed(h, id);
});

test('a reply too large is not asked again, up the max_tokens ladder or of a fallback model; its model is billed', async () => {
  const prompt = uniquePrompt('Summarise the annual report at https://example.com/annual-report.pdf');
  h.mock.script(prompt, [fetchedPdf('max_tokens'), fetchedPdf()]);
  const id = `oversize-ladder-${Date.now()}`;
  const start = {
    model: 'claude-sonnet-5-5',
    fallbackModels: ['claude-opus-5-5'],
    fallbackAfterAttempts: 1,
    serverTools: { webFetch: {} },
    prices: PRICES,
  };
  const error = await failure(h.conversations.sendMessage(id, prompt, { start }));
  assert.equal(error.failureType, ModelFailureType.ReplyTooLarge);
  assert.deepEqual(
    h.mock.requestsFor(prompt).map((r) => r.body.model),
    ['claude-sonnet-5-5'],
    'one request: no rung up the ladder, no fallback',
  );
  const state = await h.conversations.getState(id);
  assertNear(state.costUsd, PDF_COST);
  const { calls, usage, costUsd: cost } = state.byModel!['claude-sonnet-5-5']!;
  assert.equal(calls, 0, 'no reply came of it');
  assert.equal(usage.inputTokens, 400_000);
  assertNear(cost, PDF_COST);
});

describe("a worker's own limit (WORKER_MAX_MODEL_REPLY_BYTES)", () => {
  let small: Harness;
  before(async () => {
    small = await startHarness({ maxModelReplyBytes: 50_000 });
  });
  after(async () => {
    await small?.close();
  });

  test('a reply under it is kept, one over it fails the turn naming it', async () => {
    const prompt = uniquePrompt('Summarise the two short reports');
    small.mock.script(prompt, [fetchedPdf('end_turn', 30_000), fetchedPdf('end_turn', 45_000)]);
    const id = `oversize-own-limit-${Date.now()}`;
    const first = await small.conversations.sendMessage(id, prompt, { start: { serverTools: { webFetch: {} } } });
    assert.equal(first.text, 'The report says revenue grew.', 'a 40 KB reply is kept');
    const error = await failure(small.conversations.sendMessage(id, 'And the second one?'));
    assert.equal(error.failureType, ModelFailureType.ReplyTooLarge);
    assert.match(error.message, /over the limit of 50,000 bytes/);
    assert.match(error.message, /largest block is a web_fetch_tool_result of 6\d,\d{3} bytes/);
  });
});
