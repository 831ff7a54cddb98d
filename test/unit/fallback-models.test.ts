// Fallback models' pure parts: the options and their checks, the chain, the classifier's verdict on an overloaded
// model's last allowed attempt, usage and cost per model in the conversation's state and across continue-as-new.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { isOverloaded, toModelFailure } from '../../activities/model-failure';
import { modelActivityId, parseModelActivityId } from '../../common/activity-contracts';
import { StreamMerger } from '../../streaming/client/stream-merger';
import { StreamView } from '../../streaming/client/stream-view';
import type { ConversationInput } from '../../common/conversation-input';
import {
  addModelUsage,
  allOverloadedMessage,
  DEFAULT_FALLBACK_AFTER_ATTEMPTS,
  fallbackNote,
  modelChain,
  overloadedAttempts,
} from '../../common/fallback-models';
import { conversationOptionsSchema, withDefaults } from '../../common/options';
import { costUsd, PUBLISHED_PRICES } from '../../common/pricing';
import type { LiveReply, StreamEvent, StreamItem } from '../../streaming/stream-events';
import { conversationInputSchema } from '../../common/workflow-messages';
import { ConversationState } from '../../workflows/conversation-state';
import { assertNear } from '../support/assert-near';

const usage = { inputTokens: 1000, outputTokens: 100, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
const SONNET = PUBLISHED_PRICES['claude-sonnet-5-5']!;
const OPUS = PUBLISHED_PRICES['claude-opus-5-5']!;

/** An HTTP error as the SDK makes it; `undefined` status: an `event: error` in the middle of a stream, as it makes it. */
function apiError(status: number | undefined, type: string, headers: Record<string, string> = {}) {
  const body = { type: 'error', error: { type, message: `${type} happened` } };
  if (status === undefined) return new Anthropic.APIError(undefined, body, undefined, new Headers(headers));
  return Anthropic.APIError.generate(status, body, undefined, new Headers(headers));
}

describe('options', () => {
  test('fallbackModels is absent by default, and nothing about fallbacks is added to the options', () => {
    const options = withDefaults({});
    assert.equal('fallbackModels' in options, false);
    assert.equal('fallbackAfterAttempts' in options, false);
    assert.equal(overloadedAttempts(options), undefined);
    assert.deepEqual(modelChain(options), ['claude-sonnet-5-5']);
  });

  test('the chain is the model, then the fallbacks in order; 3 attempts each unless the option says', () => {
    const options = withDefaults({ fallbackModels: ['claude-opus-5-5', 'claude-haiku-4-5'] });
    assert.deepEqual(modelChain(options), ['claude-sonnet-5-5', 'claude-opus-5-5', 'claude-haiku-4-5']);
    assert.equal(overloadedAttempts(options), DEFAULT_FALLBACK_AFTER_ATTEMPTS);
    assert.equal(DEFAULT_FALLBACK_AFTER_ATTEMPTS, 3);
    assert.equal(overloadedAttempts(withDefaults({ fallbackModels: ['x'], fallbackAfterAttempts: 1 })), 1);
  });

  test('fallback models are trimmed, and checked like the model for thinking', () => {
    assert.deepEqual(withDefaults({ fallbackModels: [' claude-opus-5-5 '] }).fallbackModels, ['claude-opus-5-5']);
    const parsed = conversationOptionsSchema.safeParse({
      model: 'claude-sonnet-4-6',
      maxTokens: 4096,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      fallbackModels: ['claude-sonnet-4-5', 'claude-opus-5-5'],
    });
    assert.equal(parsed.success, false);
    assert.deepEqual(
      parsed.error!.issues.map((issue) => issue.path),
      [['fallbackModels', 1]],
      'only the model that refuses enabled thinking',
    );
  });
});

describe('notes and messages', () => {
  test('the summary of a fallback call says which models were overloaded; the first model says nothing', () => {
    const chain = ['a', 'b', 'c'];
    assert.equal(fallbackNote(chain, 0), '');
    assert.equal(fallbackNote(chain, 1), ' · fallback 1 (a overloaded)');
    assert.equal(fallbackNote(chain, 2), ' · fallback 2 (a, b overloaded)');
  });

  test('every model overloaded: the message names them and the attempts', () => {
    assert.equal(
      allOverloadedMessage(['a', 'b'], 1),
      'Every model stayed overloaded (1 attempt each): a, b. Nothing of the turn was answered; send the message again later.',
    );
    assert.match(allOverloadedMessage(['a', 'b'], 3), /3 attempts each/);
  });

  test('a fallback call is an activity of its own, whose id readers know as the same model call', () => {
    assert.equal(modelActivityId(7, 0), 'model-7');
    assert.equal(modelActivityId(7, 2), 'model-7-fallback-2');
    assert.deepEqual(parseModelActivityId(modelActivityId(7, 0)), { call: 7, fallback: 0 });
    assert.deepEqual(parseModelActivityId(modelActivityId(7, 2)), { call: 7, fallback: 2 });
    for (const id of ['model-0', 'model-07', 'model-7-fallback-0', 'model-7-fallback-', 'tool-model-7', 'model-7 ']) {
      assert.equal(parseModelActivityId(id), undefined, id);
    }
  });
});

describe('classifier: an overloaded model on its last allowed attempt', () => {
  test('a 529 and a mid-stream overloaded_error are overloaded; 429, 500 and other stream errors are not', () => {
    assert.equal(isOverloaded(apiError(529, 'overloaded_error')), true);
    assert.equal(isOverloaded(apiError(undefined, 'overloaded_error')), true);
    assert.equal(isOverloaded(apiError(429, 'rate_limit_error')), false);
    assert.equal(isOverloaded(apiError(500, 'api_error')), false);
    assert.equal(isOverloaded(apiError(undefined, 'api_error')), false);
    assert.equal(isOverloaded(new Error('overloaded')), false);
  });

  test('before the last allowed attempt: retried as before (ModelOverloaded, ModelStreamError)', () => {
    const policy = { attempt: 1, after: 2 };
    const status = toModelFailure(apiError(529, 'overloaded_error'), undefined, policy);
    assert.equal(status.type, 'ModelOverloaded');
    assert.equal(status.nonRetryable, false);
    const midStream = toModelFailure(apiError(undefined, 'overloaded_error'), undefined, policy);
    assert.equal(midStream.type, 'ModelStreamError');
    assert.equal(midStream.nonRetryable, false);
  });

  test('on it: ModelOverloaded, not retried, whether the 529 came as a status or mid-stream', () => {
    for (const error of [apiError(529, 'overloaded_error'), apiError(undefined, 'overloaded_error')]) {
      const failure = toModelFailure(error, undefined, { attempt: 2, after: 2 });
      assert.equal(failure.type, 'ModelOverloaded');
      assert.equal(failure.nonRetryable, true);
      assert.equal(failure.nextRetryDelay, undefined);
    }
    // x-should-retry: true does not keep an overloaded model once its attempts are spent.
    const insisted = toModelFailure(apiError(529, 'overloaded_error', { 'x-should-retry': 'true' }), undefined, {
      attempt: 3,
      after: 2,
    });
    assert.equal(insisted.nonRetryable, true);
  });

  test('other failures on the last allowed attempt keep their own verdict (Temporal retries a 500 or a 429)', () => {
    const policy = { attempt: 5, after: 2 };
    const rateLimited = toModelFailure(apiError(429, 'rate_limit_error', { 'retry-after': '2' }), undefined, policy);
    assert.equal(rateLimited.type, 'ModelRateLimited');
    assert.equal(rateLimited.nonRetryable, false);
    assert.equal(rateLimited.nextRetryDelay, 2000);
    const server = toModelFailure(apiError(500, 'api_error'), undefined, policy);
    assert.equal(server.type, 'ModelServerError');
    assert.equal(server.nonRetryable, false);
  });

  test('without a policy (no fallback models) a 529 is retried on every attempt', () => {
    assert.equal(toModelFailure(apiError(529, 'overloaded_error')).nonRetryable, false);
  });
});

describe('usage and cost per model', () => {
  test('addModelUsage: calls count replies only, usage adds up, an unknown price makes the cost unknown', () => {
    let byModel = addModelUsage(undefined, 'a', usage, 0.5, true);
    byModel = addModelUsage(byModel, 'a', usage, 0.25, false);
    byModel = addModelUsage(byModel, 'b', usage, null, true);
    assert.deepEqual(byModel, {
      a: { calls: 1, usage: { ...usage, inputTokens: 2000, outputTokens: 200 }, costUsd: 0.75 },
      b: { calls: 1, usage, costUsd: null },
    });
  });

  const withFallbacks = (): ConversationState => {
    const state = new ConversationState(
      { options: withDefaults({ fallbackModels: ['claude-opus-5-5'] }), firstMessage: 'Hello' },
      'run-1',
    );
    state.setPrices(SONNET);
    state.setFallbackPrices('claude-opus-5-5', OPUS);
    state.beginTurn();
    return state;
  };

  test('each call is priced at its model prices, per turn and per conversation', () => {
    const state = withFallbacks();
    assert.equal(state.recordModelCall(usage), costUsd(usage, SONNET));
    assert.equal(state.recordModelCall(usage, 'claude-opus-5-5'), costUsd(usage, OPUS));
    state.recordExtraUsage(usage, 'claude-opus-5-5'); // a failed attempt's billing
    const byModel = state.byModel!;
    assert.deepEqual(Object.keys(byModel), ['claude-sonnet-5-5', 'claude-opus-5-5']);
    assert.deepEqual(byModel['claude-sonnet-5-5'], { calls: 1, usage, costUsd: costUsd(usage, SONNET) });
    assert.equal(byModel['claude-opus-5-5']!.calls, 1, 'billed failed attempts are not calls');
    assert.deepEqual(byModel['claude-opus-5-5']!.usage, { ...usage, inputTokens: 2000, outputTokens: 200 });
    assertNear(byModel['claude-opus-5-5']!.costUsd, 2 * costUsd(usage, OPUS), 1e-12);
    assertNear(state.costUsd, costUsd(usage, SONNET) + 2 * costUsd(usage, OPUS), 1e-12);
    const expected = byModel;
    assert.deepEqual(state.currentTurn!.byModel, expected);
    const result = state.finishTurn({ text: 'Hi', stopReason: 'end_turn', status: 'awaiting_user' });
    assert.deepEqual(result.byModel, expected);
    assert.deepEqual(state.snapshot().byModel, expected);
  });

  test('a model with no known price: its cost is unknown, the others stay known', () => {
    const state = withFallbacks();
    state.recordModelCall(usage, 'my-own-model');
    assert.equal(state.byModel!['my-own-model']!.costUsd, null);
    assert.equal(state.costUsd, null);
  });

  test('carried across continue-as-new (the turn in progress too), and accepted by the next run input check', () => {
    const state = withFallbacks();
    state.recordModelCall(usage, 'claude-opus-5-5');
    const carried = state.toCarriedState();
    assert.deepEqual(carried.byModel, state.byModel);
    assert.deepEqual(carried.currentTurn!.byModel, state.byModel);
    const input: ConversationInput = { options: state.options, carried };
    assert.equal(conversationInputSchema.safeParse(input).success, true);
    const next = new ConversationState(input, 'run-2');
    assert.deepEqual(next.byModel, state.byModel);
    const tooMany = Object.fromEntries(
      Array.from({ length: 17 }, (_, i) => [`m${i}`, { calls: 0, usage, costUsd: 0 }]),
    );
    assert.equal(
      conversationInputSchema.safeParse({ ...input, carried: { ...carried, byModel: tooMany } }).success,
      false,
    );
  });

  test('without fallback models nothing per model is kept, carried or reported', () => {
    const state = new ConversationState({ options: withDefaults({}), firstMessage: 'Hello' }, 'run-1');
    state.setPrices(SONNET);
    state.beginTurn();
    state.recordModelCall(usage);
    assert.equal(state.byModel, undefined);
    assert.equal('byModel' in state.toCarriedState(), false);
    assert.equal('byModel' in state.finishTurn({ text: 'Hi', stopReason: 'end_turn', status: 'awaiting_user' }), false);
    assert.equal('byModel' in state.snapshot(), false);
  });
});

describe('readers: a call dropped whole and started again on a fallback model', () => {
  const partial: StreamEvent = { type: 'text', call: 1, attempt: 1, block: 0, at: 0, text: 'Partial words' };
  const answer: StreamEvent = { type: 'text', call: 1, attempt: 1, block: 0, at: 0, text: 'Answered.' };
  const dropped: StreamEvent = { type: 'model_output_discarded', call: 1, reason: 'failed' };

  test('stream view: the overloaded model output is dropped, the fallback (attempt 1 again) shows', () => {
    const view = new StreamView();
    for (const event of [{ type: 'model_call_started', call: 1 } as const, partial, dropped]) view.apply(event);
    view.apply(partial); // a late piece of the dead attempt, before the restart: still dropped
    assert.equal(view.text(), '');
    view.apply({ type: 'model_call_started', call: 1, model: 'claude-opus-5-5' });
    view.apply(answer);
    assert.equal(view.text(), 'Answered.');
  });

  test('stream merger: the fallback live reply is followed again once the log starts the call anew', () => {
    const m = new StreamMerger();
    const live = (text: string): LiveReply => ({
      call: 1,
      attempt: 1,
      blocks: [{ index: 0, kind: 'text', at: 0, text }],
    });
    const texts = (items: StreamItem[]) => items.flatMap((i) => (i.event.type === 'text' ? [i.event.text] : []));
    assert.deepEqual(texts([...m.durable(0, { type: 'model_call_started', call: 1 }), ...m.live(1, 1, live('Part'))]), [
      'Part',
    ]);
    m.durable(1, dropped);
    assert.equal(m.inFlight, undefined);
    m.durable(2, { type: 'model_call_started', call: 1, model: 'claude-opus-5-5' });
    assert.equal(m.inFlight, 1);
    assert.deepEqual(texts(m.live(1, 1, live('Ans'))), ['Ans']);
    assert.deepEqual(texts(m.durable(3, answer)), ['wered.']);
  });
});
