// What an attempt of a model call billed, read from what its stream showed before it failed, and how that total
// crosses from one attempt to the next and to the workflow (heartbeat or failure details, checked on the way in); and
// a model failure's message, which the worker encodes itself, bounded and well-formed.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import type { Message } from '@anthropic-ai/sdk/resources/messages';
import { attemptUsage } from '../../activities/billed-attempts';
import { toModelFailure } from '../../activities/model-failure';
import { billedIn } from '../../common/usage';

const usage = (input: number, output: number, cacheRead = 0, cacheWrite = 0) =>
  ({
    input_tokens: input,
    output_tokens: output,
    cache_read_input_tokens: cacheRead,
    cache_creation_input_tokens: cacheWrite,
  }) as Message['usage'];

describe('attemptUsage', () => {
  test('nothing before message_start: nothing was billed', () => {
    assert.equal(attemptUsage(undefined), undefined);
  });

  test("message_start's prompt, and about a token per 4 characters of what streamed when the API's count is behind", () => {
    const content = [
      { type: 'text', text: 'x'.repeat(398), citations: null },
      { type: 'tool_use', id: 'toolu_1', name: 'f', input: { a: 'bc' } }, // {"a":"bc"}: 10 characters
    ] as Message['content'];
    assert.deepEqual(attemptUsage({ usage: usage(1_000, 1, 200, 50), content }), {
      inputTokens: 1_000,
      outputTokens: 102,
      cacheReadInputTokens: 200,
      cacheCreationInputTokens: 50,
    });
  });

  test("the API's own output count wins when it is larger", () => {
    const content = [{ type: 'text', text: 'short', citations: null }] as Message['content'];
    assert.equal(attemptUsage({ usage: usage(10, 40), content })?.outputTokens, 40);
  });
});

describe('the total on the way', () => {
  const billed = { inputTokens: 1, outputTokens: 2, cacheReadInputTokens: 3, cacheCreationInputTokens: 4 };

  test('heartbeat details: read beside the live reply, ignored when absent or malformed', () => {
    assert.deepEqual(billedIn({ call: 1, attempt: 2, blocks: [], billed }), billed);
    assert.equal(billedIn({ call: 1, attempt: 2, blocks: [] }), undefined);
    assert.equal(billedIn({ billed: { ...billed, inputTokens: -1 } }), undefined);
    assert.equal(billedIn({ billed: { ...billed, outputTokens: '2' } }), undefined);
    assert.equal(billedIn('x'), undefined);
  });

  test("a model failure's details carry it, with what the API said", () => {
    const failure = toModelFailure(new Error('socket hang up'), billed);
    assert.deepEqual(failure.details, [{ billed }]);
    assert.deepEqual(toModelFailure(new Error('socket hang up')).details, []);
  });
});

describe('a model failure message', () => {
  test('is bounded and well-formed, whatever the API (or a proxy) said', () => {
    const said = Anthropic.APIError.generate(
      500,
      { type: 'error', error: { type: 'api_error', message: `half \ud800 ${'x'.repeat(50_000)}` } },
      undefined,
      new Headers(),
    );
    const { message } = toModelFailure(said);
    assert.ok(message.length <= 10_000);
    assert.match(message, /^500 api_error: half \ufffd x+\n\[output truncated/);
  });
});
