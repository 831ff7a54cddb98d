// A model reply as it enters the transcript (common/protocols/read-reply.ts, and each protocol's reader): whatever the
// model, a proxy or a fallback model sent, the assistant message is one the Messages API accepts back, and every tool
// call has a well-formed id and an orchestrator-made ref. Pure, no server; the local API's validator is the judge.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { forTheHistory } from '../../activities/model-activities';
import type { ReplyBlock, ReplyWithCompaction } from '../../common/compaction';
import { readReply } from '../../common/protocols/read-reply';
import { canonicalJson, digest } from '../../common/digest';
import { jsonText } from '../../common/json-text';
import { protocolFor } from '../../common/protocols';
import { EMPTY_REPLY_TEXT } from '../../common/protocols/reply-content';
import {
  cutDeepInput,
  MAX_TOOL_INPUT_DEPTH,
  MAX_TOOL_USE_ID_CHARS,
  nestsDeeperThan,
} from '../../common/protocols/tool-use-blocks';
import type { ProtocolName } from '../../common/protocols/types';
import { MAX_TOOL_CALL_SUMMARY_CHARS, toolCallSummary } from '../../common/summaries';
import { validateRequest } from '../../testing/messages-api/validate-request';

const QUESTION: MessageParam = { role: 'user', content: 'What is the stock price of General Motors?' };

const reply = (content: unknown[], stop_reason: unknown = 'tool_use'): ReplyWithCompaction =>
  ({ content, stop_reason, stop_sequence: null }) as ReplyWithCompaction;
const toolUse = (id: unknown, input: unknown, name: unknown = 'get_ticker_symbol') => ({
  type: 'tool_use',
  id,
  name,
  input,
});
const GM = { company_name: 'GM' };

function read(content: unknown[], transcript: MessageParam[] = [QUESTION], protocol: ProtocolName = 'native') {
  return readReply(protocolFor(protocol), reply(content), 3, transcript);
}

/** The transcript after the reply and an answer to each of its calls, as the next request carries it. */
function nextRequest(transcript: MessageParam[], content: unknown[], protocol: ProtocolName = 'native') {
  const reading = read(content, transcript, protocol);
  const results = protocolFor(protocol).renderResults(
    reading.toolCalls.map((call) => ({ callId: call.id, name: call.name, isError: true, content: 'checked' })),
  );
  const messages = [
    ...transcript,
    reading.assistant,
    reading.toolCalls.length > 0 ? results : { role: 'user', content: 'Next.' },
  ];
  return { reading, messages, verdict: validateRequest({ model: 'claude-sonnet-4-6', max_tokens: 10, messages }) };
}

/** `depth` objects, one inside the other (parsed: JSON.parse does not recurse). */
const nested = (depth: number): unknown => JSON.parse(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);

describe('tool_use ids', () => {
  test("a valid, unused id is kept; a repeated one becomes the orchestrator's", () => {
    const { reading, verdict } = nextRequest([QUESTION], [toolUse('toolu_a', GM), toolUse('toolu_a', GM)]);
    assert.deepEqual(verdict, { ok: true });
    assert.deepEqual(
      reading.toolCalls.map((call) => [call.id, call.ref]),
      [
        ['toolu_a', '3-0'],
        ['toolu_orch_3_1', '3-1'],
      ],
    );
  });

  test('an id the transcript already holds is not reused', () => {
    const transcript: MessageParam[] = [
      QUESTION,
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_old', name: 'get_ticker_symbol', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_old', content: 'GM' }] },
    ];
    const { reading, verdict } = nextRequest(transcript, [toolUse('toolu_old', GM)]);
    assert.deepEqual(verdict, { ok: true });
    assert.equal(reading.toolCalls[0]!.id, 'toolu_orch_3_0');
  });

  test('ids the API refuses, or too long, or not strings, are replaced, and all ids stay unique', () => {
    const bad = ['x'.repeat(MAX_TOOL_USE_ID_CHARS + 1), 'toolu a', 'toolu_\ud800', '', 'call:0', 42, null, undefined];
    const { reading, verdict } = nextRequest(
      [QUESTION],
      bad.map((id) => toolUse(id, GM)),
    );
    assert.deepEqual(verdict, { ok: true });
    assert.deepEqual(
      reading.toolCalls.map((call) => call.id),
      bad.map((_, i) => `toolu_orch_3_${i}`),
    );
    assert.equal(read([toolUse('x'.repeat(MAX_TOOL_USE_ID_CHARS), GM)]).toolCalls[0]!.id.length, MAX_TOOL_USE_ID_CHARS);
  });

  test("the model cannot make the orchestrator's id collide: it gets a suffix", () => {
    const { reading, verdict } = nextRequest([QUESTION], [toolUse('toolu_orch_3_1', GM), toolUse('bad id', GM)]);
    assert.deepEqual(verdict, { ok: true });
    assert.deepEqual(
      reading.toolCalls.map((call) => call.id),
      ['toolu_orch_3_1', 'toolu_orch_3_1_1'],
    );
  });
});

describe('tool_use names and inputs', () => {
  test('an input that is not an object is answered as malformed, and the transcript holds {}', () => {
    const inputs = ['GM', null, ['GM'], 7, true, undefined];
    const { reading, verdict } = nextRequest(
      [QUESTION],
      inputs.map((input, i) => toolUse(`toolu_${i}`, input)),
    );
    assert.deepEqual(verdict, { ok: true });
    for (const call of reading.toolCalls) {
      assert.deepEqual(call.input, {});
      assert.equal(call.malformed, 'the input of get_ticker_symbol must be a JSON object');
    }
  });

  test(`an input nested deeper than ${MAX_TOOL_INPUT_DEPTH} levels is malformed; ${MAX_TOOL_INPUT_DEPTH} levels are fine`, () => {
    const { reading, verdict } = nextRequest([QUESTION], [toolUse('toolu_deep', nested(10_000))]);
    assert.deepEqual(verdict, { ok: true });
    assert.deepEqual(reading.toolCalls[0]!.input, {});
    assert.match(reading.toolCalls[0]!.malformed!, /nests deeper than 64 levels/);
    const fine = read([toolUse('toolu_ok', nested(MAX_TOOL_INPUT_DEPTH))]).toolCalls[0]!;
    assert.equal(fine.malformed, undefined);
    assert.ok(nestsDeeperThan(nested(MAX_TOOL_INPUT_DEPTH + 1), MAX_TOOL_INPUT_DEPTH));
    assert.ok(!nestsDeeperThan(nested(MAX_TOOL_INPUT_DEPTH), MAX_TOOL_INPUT_DEPTH));
    assert.ok(nestsDeeperThan([[[1]]], 2) && !nestsDeeperThan([[1], { a: 2 }], 2));
  });

  test('a name no tool can have becomes invalid_tool_name, and the call is malformed without repeating it', () => {
    const names = ['get ticker', 'n'.repeat(5_000), '', 42, 'tool_\ud800'];
    const { reading, verdict } = nextRequest(
      [QUESTION],
      names.map((name, i) => toolUse(`toolu_${i}`, {}, name)),
    );
    assert.deepEqual(verdict, { ok: true });
    for (const call of reading.toolCalls) {
      assert.equal(call.name, 'invalid_tool_name');
      assert.ok(call.malformed!.length < 200);
    }
  });
});

describe('content and stop reasons', () => {
  test('no content at all takes its place as a text the API accepts (native and legacy XML)', () => {
    for (const protocol of ['native', 'legacy-xml'] as const) {
      for (const content of [[], [{ type: 'text', text: '' }], [{ type: 'text', text: ' \n\t' }]]) {
        const { reading, verdict } = nextRequest([QUESTION], content, protocol);
        assert.deepEqual(verdict, { ok: true }, `${protocol}: ${JSON.stringify(content)}`);
        const text = reading.assistant.content;
        assert.ok(text === EMPTY_REPLY_TEXT || JSON.stringify(text).includes(EMPTY_REPLY_TEXT));
        assert.deepEqual(reading.toolCalls, []);
      }
    }
  });

  test('blank text next to a call, blocks of unknown types and malformed blocks are left out', () => {
    const { reading, verdict } = nextRequest(
      [QUESTION],
      [
        { type: 'text', text: '' },
        { type: 'text', text: '\n\n' },
        { type: 'text', text: 42 },
        { type: 'banana' },
        null,
        'text',
        { type: 'thinking', thinking: 'no signature' },
        { type: 'thinking', thinking: 'Let me look.', signature: 'sig' },
        toolUse('toolu_1', GM),
      ],
    );
    assert.deepEqual(verdict, { ok: true });
    assert.deepEqual(
      (reading.assistant.content as { type: string }[]).map((block) => block.type),
      ['thinking', 'tool_use'],
    );
  });

  test('a content that is not even a list reads as empty', () => {
    const reading = readReply(protocolFor('native'), { content: 'nope', stop_reason: 'end_turn' } as never, 1, [
      QUESTION,
    ]);
    assert.deepEqual(reading.assistant, { role: 'assistant', content: [{ type: 'text', text: EMPTY_REPLY_TEXT }] });
  });

  test('a stop reason the API does not define reads as null', () => {
    for (const protocol of ['native', 'legacy-xml'] as const) {
      const readAs = (stop: unknown): string | null =>
        readReply(protocolFor(protocol), reply([{ type: 'text', text: 'Hi' }], stop), 1, [QUESTION]).stopReason;
      assert.equal(readAs('end_turn'), 'end_turn');
      assert.equal(readAs('refusal'), 'refusal');
      for (const stop of ['banana', null, 42, 'x'.repeat(10_000), '__proto__']) assert.equal(readAs(stop), null);
    }
  });
});

describe('the worker and the workflow read the same reply the same way', () => {
  test('the reply as the activity records it reads exactly like the reply the worker cached', () => {
    const content = [
      { type: 'text', text: 'Looking.', citations: null },
      { ...toolUse('toolu_x', null), caller: { type: 'direct' } },
      toolUse('toolu_x', 'GM'),
      toolUse('bad id', nested(10_000)),
      toolUse(null, GM, null),
      toolUse('toolu_ok', { company_name: 'GM', deep: nested(MAX_TOOL_INPUT_DEPTH - 1) }),
    ];
    const transcript: MessageParam[] = [QUESTION];
    const inWorker = readReply(protocolFor('native'), reply(content), 5, transcript);
    const recorded = JSON.parse(JSON.stringify(content.map((block) => forTheHistory(block as ReplyBlock))));
    const inWorkflow = readReply(protocolFor('native'), reply(recorded), 5, transcript);
    assert.deepEqual(inWorkflow.assistant, inWorker.assistant);
    assert.deepEqual(inWorkflow.toolCalls, inWorker.toolCalls);
  });

  test('an input too deep to serialise is cut one level past the limit, so it can be recorded and is still refused', () => {
    const deep = nested(10_000);
    assert.throws(() => JSON.stringify(deep), RangeError);
    const cut = cutDeepInput(deep);
    assert.doesNotThrow(() => JSON.stringify(cut));
    assert.ok(nestsDeeperThan(cut, MAX_TOOL_INPUT_DEPTH));
    assert.ok(!nestsDeeperThan(cut, MAX_TOOL_INPUT_DEPTH + 1));
    const shallow = { a: [1, { b: 2 }] };
    assert.equal(cutDeepInput(shallow), shallow);
  });
});

describe('walks over model input in workflow code are not recursive', () => {
  test('JSON text of data nested 10,000 deep, as JSON.stringify writes shallow data', () => {
    const data = { b: [1, 'two', null, { z: true, a: 1.5 }], a: 'é\u2028"', skip: undefined };
    assert.equal(jsonText(data), JSON.stringify(data));
    assert.equal(jsonText(nested(10_000)).length, 10_000 * 6 + 1);
    assert.equal(jsonText(nested(10_000), { maxChars: 20 }).slice(0, 20), '{"a":{"a":{"a":{"a":');
  });

  test('the approval digest is the one released histories hold, and survives 10,000 levels', () => {
    const value = {
      name: 'buy_stock',
      input: {
        symbol: 'GM',
        quantity: 3,
        nested: { b: [1, 'two', null, { z: true, a: 1.5 }], a: 'é\u2028"' },
        skip: undefined,
      },
    };
    // Computed by the released recursive canonicalJson.
    assert.equal(digest(value), '69e42042de5eb545');
    assert.equal(
      canonicalJson(value),
      '{"input":{"nested":{"a":"é\u2028\\"","b":[1,"two",null,{"a":1.5,"z":true}]},"quantity":3,"symbol":"GM"},"name":"buy_stock"}',
    );
    assert.match(digest(nested(10_000)), /^[0-9a-f]{16}$/);
  });

  test(`a tool call's summary stops at ${MAX_TOOL_CALL_SUMMARY_CHARS} characters whatever the arguments`, () => {
    assert.equal(
      toolCallSummary('get_ticker_symbol', { company_name: 'General Motors' }),
      'get_ticker_symbol(company_name="General Motors")',
    );
    // One 10,000-deep value under every key: the walk meets it 10,000 times, as if each were its own.
    const deep = nested(10_000);
    const many = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`.repeat(50), deep]));
    const summary = toolCallSummary('get_ticker_symbol', many);
    assert.equal(summary.length, MAX_TOOL_CALL_SUMMARY_CHARS);
    assert.ok(summary.endsWith('…'));
  });
});
