// What goes wrong on the way to the model and in the tools, scripted by the local Messages API server: which failures
// are retried (and how soon), which end the conversation with a typed error the caller can read, and which become an
// error result the model reads and answers. In-process worker, real dev server, the real SDK.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { z } from 'zod';
import { defineTool, ToolError } from '../../activities/tool-definition';
import { demoTools } from '../../testing/demo-tools';
import type { ConversationError } from '../../client/errors';
import { STOCK_QUESTION, STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import type { ScriptStep } from '../../testing/messages-api/types';
import { activitiesOf, attemptsOf, type Harness, lastUserBlocks, startHarness, uniquePrompt } from '../support/harness';

/** Never finishes on its own: it ends only when its abort signal fires (the activity timed out or was cancelled). */
const waitForGodot = defineTool({
  name: 'wait_for_godot',
  description: 'Waits for Godot to arrive.',
  input: z.object({}),
  timeout: '1 second',
  maxAttempts: 2,
  retryInitialInterval: '200 milliseconds',
  run: (_input, { signal }) =>
    new Promise((_resolve, reject) => {
      signal.addEventListener('abort', () => reject(new Error('Godot did not come')), { once: true });
    }),
});

/** Refuses on purpose: a ToolError, which asking again would not change. */
const openVault = defineTool({
  name: 'open_vault',
  description: 'Opens the vault.',
  input: z.object({ code: z.string() }),
  run: () => {
    throw new ToolError('VaultLocked', 'the vault is time-locked until Monday');
  },
});

let h: Harness;
before(async () => {
  h = await startHarness({ tools: [...demoTools, waitForGodot, openVault] });
});
after(async () => {
  await h?.close();
});

describe('transient model failures are retried and the conversation completes', () => {
  // Each fault hits the SECOND model call, in the middle of the chain: the retry must carry the same conversation
  // and the tool that already ran must not run again.
  const cases: { name: string; step: ScriptStep; failureType: string; options?: object }[] = [
    { name: '529 overloaded', step: { fault: 'status', status: 529 }, failureType: 'ModelOverloaded' },
    { name: '500 internal server error', step: { fault: 'status', status: 500 }, failureType: 'ModelServerError' },
    { name: '504 gateway timeout', step: { fault: 'status', status: 504 }, failureType: 'ModelServerError' },
    {
      name: 'a connection reset without an answer',
      step: { fault: 'connection-reset' },
      failureType: 'ModelConnectionError',
    },
    {
      name: 'a stream that errors midway',
      step: { fault: 'stream-error', afterBlocks: 1, errorType: 'overloaded_error' },
      failureType: 'ModelStreamError',
    },
    {
      name: 'a reply slower than the model call timeout',
      // The timeout holds for every model call of the conversation: wide enough that a busy machine does not time
      // out the quick ones too.
      step: { demo: true, delayMs: 15_000 },
      failureType: 'timeout',
      options: { timeouts: { modelCall: '5 seconds' } },
    },
  ];

  for (const { name, step, failureType, options } of cases) {
    test(`${name}: retried (${failureType}) with the same messages; the tool before it ran once; the answer is 38.50`, async () => {
      const prompt = uniquePrompt(STOCK_QUESTION);
      h.mock.script(prompt, [{ demo: true }, step]);
      const id = `fault-${name.replace(/\W+/g, '-')}-${Date.now()}`;
      const reply = await h.conversations.sendMessage(id, prompt, {
        start: {
          tools: STOCK_TOOLS,
          closeAfterFirstReply: true,
          ...options,
        },
      });
      assert.match(reply.text, /38\.50/);
      assert.equal(reply.modelCalls, 3, 'the failed attempt is not a model call of its own');

      const requests = h.mock.requestsFor(prompt);
      assert.equal(requests.length, 4, 'one failed attempt, then the chain goes on');
      assert.deepEqual(requests[2]!.body.messages, requests[1]!.body.messages, 'the retry sends the same conversation');
      assert.deepEqual(
        lastUserBlocks(requests[2]!).map((b) => b.content),
        ['GM'],
      );

      const attempts = await attemptsOf(h.client, id);
      assert.deepEqual(
        attempts.map((a) => [a.type, a.attempt]),
        [
          ['callModel', 1],
          ['get_ticker_symbol', 1],
          ['callModel', 2],
          ['get_current_stock_price', 1],
          ['callModel', 1],
        ],
      );
      assert.equal(attempts[2]!.lastFailureType, failureType, attempts[2]!.lastFailure);
      assert.deepEqual(
        h.executions(id, 'get_ticker_symbol').map((e) => e.event),
        ['start', 'finish'],
      );
    });
  }

  test('429 with retry-after: 2: the next attempt comes no sooner than 2 s later', async () => {
    const prompt = uniquePrompt(STOCK_QUESTION);
    h.mock.script(prompt, [{ fault: 'status', status: 429, headers: { 'retry-after': '2' } }]);
    const id = `fault-429-${Date.now()}`;
    const reply = await h.conversations.sendMessage(id, prompt, {
      start: { tools: STOCK_TOOLS, closeAfterFirstReply: true },
    });
    assert.match(reply.text, /38\.50/);
    const [limited, retried] = h.mock.requestsFor(prompt);
    assert.equal(limited!.status, 429);
    // Without the header the first retry would come after the policy's initial interval, 1 s.
    const waited = retried!.at - limited!.at;
    assert.ok(waited >= 2000, `the retry came ${waited} ms after the 429`);
    const [first] = await attemptsOf(h.client, id);
    assert.equal(first!.attempt, 2);
    assert.equal(first!.lastFailureType, 'ModelRateLimited');
  });
});

describe('a request the API rejects fails its turn after exactly one attempt; the conversation takes the next message', () => {
  const cases = [
    { status: 400, failureType: 'ModelInvalidRequest', errorType: 'invalid_request_error' },
    { status: 401, failureType: 'ModelAuthentication', errorType: 'authentication_error' },
    { status: 403, failureType: 'ModelPermissionDenied', errorType: 'permission_error' },
    { status: 404, failureType: 'ModelNotFound', errorType: 'not_found_error' },
    { status: 413, failureType: 'ModelRequestTooLarge', errorType: 'request_too_large' },
  ];
  for (const { status, failureType, errorType } of cases) {
    test(`${status} → ${failureType}, and the API's message reaches the client`, async () => {
      const prompt = uniquePrompt(STOCK_QUESTION);
      const message = `scripted ${status} for this test`;
      h.mock.script(prompt, [{ fault: 'status', status, message }]);
      const id = `rejected-${status}-${Date.now()}`;
      await assert.rejects(
        h.conversations.sendMessage(id, prompt, { start: { tools: STOCK_TOOLS } }),
        (err: ConversationError) => {
          assert.equal(err.name, 'ConversationError');
          assert.equal(err.code, 'turn_failed');
          assert.equal(err.failureType, failureType);
          assert.match(err.message, new RegExp(`^${status} ${errorType}: ${message} \\(request req_\\w+\\)$`));
          return true;
        },
      );
      assert.equal(h.mock.requestsFor(prompt).length, 1, 'never retried');
      assert.deepEqual(
        (await attemptsOf(h.client, id)).map((a) => a.attempt),
        [1],
      );
      assert.equal(h.executions(id).length, 0);
      const state = await h.conversations.getState(id);
      assert.equal(state.status, 'awaiting_user', 'the conversation stays open');
      assert.equal(state.transcriptLength, 0, "the failed turn's message left the transcript");

      // Once the API takes requests again (a key fixed, a bill paid), the next message is answered.
      const reply = await h.conversations.sendMessage(id, prompt);
      assert.equal(reply.text, 'The current stock price of General Motors (GM) is $38.50.');
      assert.equal(reply.turn, 2);
      assert.deepEqual(
        (await h.conversations.getTranscript(id)).map((m) => m.role),
        ['user', 'assistant', 'user', 'assistant', 'user', 'assistant'],
      );
    });
  }

  test("the API's 400 for a prompt longer than the context window ends the conversation with context_window_exceeded", async () => {
    const prompt = uniquePrompt(STOCK_QUESTION);
    h.mock.script(prompt, [
      { fault: 'status', status: 400, message: 'prompt is too long: 210345 tokens > 200000 maximum' },
    ]);
    const id = `prompt-too-long-${Date.now()}`;
    const reply = await h.conversations.sendMessage(id, prompt, { start: { tools: STOCK_TOOLS } });
    assert.equal(reply.status, 'context_window_exceeded');
    assert.match(
      reply.text,
      /no longer fits in the model's context window: 400 invalid_request_error: prompt is too long/,
    );
    assert.equal((await h.conversations.waitForResult(id)).status, 'context_window_exceeded');
  });
});

test('the max_tokens ladder exhausted: the turn ends with max_tokens_exhausted after 1000 then 4000, and no tool runs', async () => {
  const prompt = uniquePrompt(STOCK_QUESTION);
  const cutOff: ScriptStep = {
    fault: 'truncated-tool-use',
    text: 'Let me look that up.',
    tool: { name: 'get_ticker_symbol', input: { company_name: 'General Motors' } },
  };
  h.mock.script(prompt, [cutOff, cutOff, cutOff]);
  const id = `ladder-${Date.now()}`;
  const reply = await h.conversations.sendMessage(id, prompt, {
    start: {
      tools: STOCK_TOOLS,
      maxTokens: 1000,
      maxTokensCap: 4000,
    },
  });
  assert.equal(reply.status, 'max_tokens_exhausted');
  assert.equal(reply.stopReason, 'max_tokens');
  assert.match(reply.text, /4000 output tokens/);

  const requests = h.mock.requestsFor(prompt);
  assert.deepEqual(
    requests.map((r) => r.body.max_tokens),
    [1000, 4000],
    'four times higher, capped, then no further',
  );
  assert.ok(
    requests.every((r) => r.body.messages.length === 1),
    'nothing of a cut-off reply was sent back',
  );
  assert.equal(h.executions(id).length, 0, 'the cut-off tool call never ran');
  const result = await h.conversations.waitForResult(id);
  assert.equal(result.status, 'max_tokens_exhausted');
  assert.deepEqual(
    (await activitiesOf(h.client, id)).map((a) => a.type),
    ['callModel', 'callModel'],
  );
});

describe('tool failures become error results the model reads, and the conversation goes on', () => {
  test('a tool that hangs past its timeout: each attempt is aborted, and the model gets a TimeoutError', async () => {
    const prompt = uniquePrompt('Is Godot coming?');
    h.mock.script(prompt, [
      { reply: { content: [{ type: 'tool_use', name: 'wait_for_godot', input: {} }], stop_reason: 'tool_use' } },
    ]);
    const id = `hang-${Date.now()}`;
    const reply = await h.conversations.sendMessage(id, prompt, {
      start: {
        tools: ['wait_for_godot'],
        closeAfterFirstReply: true,
      },
    });

    const [, second] = h.mock.requestsFor(prompt);
    const [result] = lastUserBlocks(second!);
    assert.equal(result!.is_error, true);
    assert.equal(result!.content, 'TimeoutError: wait_for_godot did not finish within 1 second (2 attempt(s)).');
    assert.equal(reply.status, 'completed');
    assert.equal(reply.text, `I couldn't look that up: ${result!.content}`);

    // Each attempt's abort signal fired (the worker enforces the timeout too), so the handler let go: an `error` line.
    // The last one may be written just after the server moved on, hence the short wait.
    for (let i = 0; i < 100 && h.executions(id, 'wait_for_godot').length < 4; i++)
      await new Promise((r) => setTimeout(r, 100));
    const runs = h.executions(id, 'wait_for_godot');
    // Per attempt, in log order. Across attempts the order may interleave: the server can time attempt 1 out and hand
    // out attempt 2 a moment before the worker's own timer aborts attempt 1 and writes its `error` line.
    const byAttempt = [1, 2].map((attempt) => runs.filter((e) => e.attempt === attempt).map((e) => e.event));
    assert.deepEqual(
      byAttempt,
      [
        ['start', 'error'],
        ['start', 'error'],
      ],
      'two attempts, as its policy says, each aborted',
    );
    assert.equal(runs.length, 4, 'and no third');
    assert.equal(new Set(runs.map((e) => e.idempotencyKey)).size, 1, 'one idempotency key for both');
    const activities = await activitiesOf(h.client, id);
    assert.deepEqual(
      activities.map((a) => [a.type, a.failed ?? false]),
      [
        ['callModel', false],
        ['wait_for_godot', true],
        ['callModel', false],
      ],
    );
  });

  test('a tool that raises a ToolError: not retried, and the model gets "Name: message"', async () => {
    const prompt = uniquePrompt('Open the vault');
    h.mock.script(prompt, [
      {
        reply: {
          content: [{ type: 'tool_use', name: 'open_vault', input: { code: '1234' } }],
          stop_reason: 'tool_use',
        },
      },
    ]);
    const id = `boom-${Date.now()}`;
    const reply = await h.conversations.sendMessage(id, prompt, {
      start: { tools: ['open_vault'], closeAfterFirstReply: true },
    });

    const [, second] = h.mock.requestsFor(prompt);
    const [result] = lastUserBlocks(second!);
    assert.equal(result!.is_error, true);
    assert.equal(result!.content, 'VaultLocked: the vault is time-locked until Monday');
    assert.equal(reply.status, 'completed');
    assert.equal(reply.text, "I couldn't look that up: VaultLocked: the vault is time-locked until Monday");
    assert.deepEqual(
      h.executions(id, 'open_vault').map((e) => [e.event, e.attempt]),
      [
        ['start', 1],
        ['error', 1],
      ],
      'one attempt only',
    );
  });
});
