// Thinking and effort, the pure parts: the option checks (like the API's, on every rung of the max_tokens ladder),
// the request's fields, thinking blocks read into the transcript unchanged, usage, summaries, and thinking in the
// event stream (merged live and final once, shown apart from the answer's text).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { buildModelRequest } from '../../activities/model-request';
import { callModelResultOf } from '../../activities/managed-context';
import { StreamMerger } from '../../streaming/client/stream-merger';
import { StreamView } from '../../streaming/client/stream-view';
import { readReply } from '../../common/protocols/read-reply';
import { modelOutputCap, nextMaxTokens } from '../../common/max-tokens-ladder';
import { withDefaults } from '../../common/options';
import { nativeProtocol } from '../../common/protocols/native';
import { modelCallSummary } from '../../common/summaries';
import { thinkingProblems, thinksByDefault } from '../../common/thinking';
import { addUsage, ZERO_USAGE } from '../../common/usage';
import { NATIVE_REQUEST_OPTIONS, STOCK_TOOL_DESCRIPTIONS } from '../support/model-request-fixtures';

describe('thinking options', () => {
  test('thinking: budget_tokens below the first rung is below every rung of the ladder, up to the cap', () => {
    for (const [maxTokens, budget, model] of [
      [1025, 1024, 'claude-sonnet-4-6'],
      [2048, 2047, 'claude-sonnet-4-6'],
      [64_000, 63_999, 'claude-sonnet-4-6'],
      [4096, 1024, 'claude-opus-4-1'],
    ] as const) {
      const options = withDefaults({ model, maxTokens, thinking: { type: 'enabled', budget_tokens: budget } });
      const cap = options.maxTokensCap ?? modelOutputCap(model);
      for (
        let rung: number | undefined = Math.min(maxTokens, cap);
        rung !== undefined;
        rung = nextMaxTokens(rung, cap)
      ) {
        assert.ok(budget < rung, `budget ${budget} on rung ${rung}`);
      }
    }
  });

  test('thinking: a budget at or above the first rung, the cap included, is refused before anything is sent', () => {
    assert.throws(
      () =>
        withDefaults({
          model: 'claude-sonnet-4-6',
          maxTokens: 2048,
          thinking: { type: 'enabled', budget_tokens: 2048 },
        }),
      /thinking\.budget_tokens: budget_tokens \(2048\) must be below max_tokens on every call/,
    );
    assert.throws(
      () =>
        withDefaults({
          model: 'claude-sonnet-4-6',
          maxTokens: 8000,
          maxTokensCap: 4000,
          thinking: { type: 'enabled', budget_tokens: 4000 },
        }),
      /maxTokens is above maxTokensCap/,
    );
    assert.throws(
      () =>
        withDefaults({
          model: 'claude-opus-4-1',
          maxTokens: 40_000,
          thinking: { type: 'enabled', budget_tokens: 32_000 },
        }),
      /capped at 32000/,
    );
  });

  test('thinking: what each known model refuses; unknown models are left to the API', () => {
    assert.equal(thinksByDefault('claude-sonnet-5-5'), true);
    assert.equal(thinksByDefault('claude-sonnet-4-5-20250929'), false);
    const problems = (model: string, type: 'adaptive' | 'disabled' | 'between_tools') =>
      thinkingProblems({ model, maxTokens: 4096, cap: 64_000, thinking: { type } }).map((p) => p.message);
    assert.match(problems('claude-sonnet-5-5', 'disabled')[0]!, /lowest setting is "between_tools"/);
    assert.deepEqual(problems('claude-sonnet-5-5', 'between_tools'), []);
    assert.match(problems('claude-opus-5-5', 'disabled')[0]!, /lower effort instead/);
    assert.match(problems('claude-haiku-4-5-20251001', 'adaptive')[0]!, /does not accept thinking "adaptive"/);
    assert.deepEqual(problems('claude-some-future-model', 'between_tools'), []);
  });

  test('thinking with a forced tool choice: refused with the API’s reason; auto, none and no thinking are fine', () => {
    const forced = { toolChoice: { type: 'any' as const }, tools: ['get_ticker_symbol'] };
    assert.throws(() => withDefaults({ ...forced, thinking: { type: 'adaptive' } }), /Thinking may not be enabled/);
    withDefaults({ ...forced, thinking: { type: 'disabled' }, model: 'claude-sonnet-4-6' });
    withDefaults(forced); // no option: left to the model (and to the API for a model that thinks by default)
    withDefaults({ toolChoice: { type: 'auto' }, tools: ['get_ticker_symbol'], thinking: { type: 'adaptive' } });
    assert.throws(
      () => withDefaults({ thinking: { type: 'adaptive' }, output: { schema: { type: 'object' }, mode: 'tool' } }),
      /output: a typed answer in mode "tool" forces the answer tool/,
    );
  });
});

describe('the request', () => {
  const messages: MessageParam[] = [{ role: 'user', content: 'Hello' }];

  test('thinking and effort go out as thinking and output_config.effort, next to a typed answer’s format', () => {
    const request = buildModelRequest(
      {
        ...NATIVE_REQUEST_OPTIONS,
        thinking: { type: 'enabled', budget_tokens: 2048, display: 'omitted' },
        effort: 'low',
        output: { schema: { type: 'object', properties: {} }, mode: 'native', toolName: 'final_answer' },
      },
      messages,
      STOCK_TOOL_DESCRIPTIONS,
    );
    assert.deepEqual(request.thinking, { type: 'enabled', budget_tokens: 2048, display: 'omitted' });
    assert.equal(request.output_config?.effort, 'low');
    assert.equal(request.output_config?.format?.type, 'json_schema');
    const plain = buildModelRequest(NATIVE_REQUEST_OPTIONS, messages, STOCK_TOOL_DESCRIPTIONS);
    assert.ok(!('thinking' in plain) && !('output_config' in plain), 'nothing when the conversation sets nothing');
  });

  test('the cache breakpoint never lands on a thinking block', () => {
    const request = buildModelRequest(
      NATIVE_REQUEST_OPTIONS,
      [...messages, { role: 'assistant', content: [{ type: 'thinking', thinking: 'hm', signature: 'sig' }] }],
      [],
    );
    assert.ok(!JSON.stringify(request.messages).includes('cache_control'));
  });
});

test('a reply’s thinking and redacted thinking enter the transcript unchanged and first, as the API wants them back', () => {
  const thinking = { type: 'thinking', thinking: 'Need the ticker.\n', signature: 'EqQB+/=' } as const;
  const redacted = { type: 'redacted_thinking', data: 'EmwK…' } as const;
  const reading = readReply(
    nativeProtocol,
    {
      content: [
        thinking,
        redacted,
        { type: 'tool_use', id: 'toolu_1', name: 'get_ticker_symbol', input: {}, caller: { type: 'direct' } },
      ],
      stop_reason: 'tool_use',
    } as never,
    1,
    [],
  );
  const content = reading.assistant.content as unknown[];
  assert.deepEqual(content.slice(0, 2), [thinking, redacted]);
  assert.equal(reading.text, '', 'thinking is not the answer');
});

test('usage: thinking tokens come from output_tokens_details, are summed, and are absent when no reply had any', () => {
  const message = {
    id: 'msg_1',
    model: 'm',
    content: [],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 50, output_tokens_details: { thinking_tokens: 30 } },
  };
  const { usage } = callModelResultOf(message as never);
  assert.equal(usage.thinkingTokens, 30);
  assert.equal(usage.outputTokens, 50, 'thinking tokens are output tokens already');
  assert.deepEqual(addUsage(usage, usage).thinkingTokens, 60);
  assert.ok(!('thinkingTokens' in addUsage(ZERO_USAGE, ZERO_USAGE)));
});

test('summaries: thinking and effort when set, nothing otherwise', () => {
  assert.equal(modelCallSummary('m', 2, 1024), 'm · call 2 · max_tokens 1024');
  assert.equal(
    modelCallSummary('m', 2, 4096, { thinking: { type: 'enabled', budget_tokens: 2048 }, effort: 'max' }),
    'm · call 2 · max_tokens 4096 · thinking enabled 2048 · effort max',
  );
});

test('stream: thinking seen live is not repeated by the final reply, and is kept apart from the answer text', () => {
  const merger = new StreamMerger();
  const view = new StreamView();
  const apply = (items: { event: Parameters<StreamView['apply']>[0] }[]) => items.forEach((i) => view.apply(i.event));
  const shown = (items: ReturnType<StreamMerger['durable']>) =>
    items.map((i) => [i.event.type, 'text' in i.event ? i.event.text : undefined, i.seen === true]);
  apply(merger.durable(0, { type: 'model_call_started', call: 1 }));
  apply(
    merger.live(1, 1, { call: 1, attempt: 1, blocks: [{ index: 0, kind: 'thinking', at: 0, text: 'Let me think' }] }),
  );
  const final = [
    ...merger.durable(1, { type: 'thinking', call: 1, attempt: 1, block: 0, at: 0, text: 'Let me think about GM.' }),
    ...merger.durable(2, { type: 'thinking', call: 1, attempt: 1, block: 1, at: 0, text: '', redacted: true }),
    ...merger.durable(3, { type: 'text', call: 1, attempt: 1, block: 2, at: 0, text: 'GM.' }),
  ];
  assert.deepEqual(shown(final), [
    ['thinking', ' about GM.', false],
    ['thinking', '', false],
    ['text', 'GM.', false],
  ]);
  apply(final);
  assert.equal(view.thinking(), 'Let me think about GM.');
  assert.equal(view.text(), 'GM.');
  assert.ok(view.blocks().some((b) => b.kind === 'thinking' && b.redacted === true));

  // A redacted block seen live is told once: the final reply marks it seen.
  apply(merger.durable(4, { type: 'model_call_finished', call: 1, stopReason: 'end_turn', usage: ZERO_USAGE }));
  apply(merger.durable(5, { type: 'model_call_started', call: 2 }));
  const live = merger.live(2, 1, {
    call: 2,
    attempt: 1,
    blocks: [{ index: 0, kind: 'thinking', at: 0, text: '', redacted: true }],
  });
  assert.deepEqual(shown(live), [['thinking', '', false]]);
  const again = merger.durable(6, { type: 'thinking', call: 2, attempt: 1, block: 0, at: 0, text: '', redacted: true });
  assert.deepEqual(shown(again), [['thinking', '', true]]);
});
