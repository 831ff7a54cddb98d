// Typed answers, the pure parts: the request each mechanism sends (and that the local API, like the real one, takes
// it), how an answer is checked, when it goes back to the model and when the turn fails, which options go together,
// and what the client makes of a zod schema.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { z } from 'zod';
import { ApplicationFailure } from '@temporalio/common';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { buildModelRequest } from '../../activities/model-request';
import { NATIVE_REQUEST_OPTIONS, STOCK_TOOL_DESCRIPTIONS } from '../support/model-request-fixtures';
import { outputSpecOf, typedResult } from '../../client/answer-format';
import { ConversationError } from '../../client/errors';
import { conversationOptionsSchema, withDefaults } from '../../common/options';
import {
  afterAnswer,
  ANSWER_CHECK_BUDGET,
  answerToolDescription,
  checkAnswer,
  checkTextAnswer,
  MAX_ANSWER_ATTEMPTS,
  MAX_ANSWER_CHARS,
  MAX_ANSWER_DEPTH,
  MAX_SCHEMA_BYTES,
  MAX_SCHEMA_DEPTH,
  type OutputSpec,
  outputSpecSchema,
  typedCallOptions,
} from '../../common/structured-output';
import { wellFormed } from '../../common/safe-text';
import { messageOptionsSchema } from '../../common/workflow-messages';
import { validateRequest } from '../../testing/messages-api/validate-request';
import { ConversationState } from '../../workflows/conversation-state';

const Quote = z.object({
  symbol: z.string(),
  price: z.number().positive(),
  currency: z.enum(['USD', 'EUR']),
});
const spec = (mode: 'native' | 'tool'): OutputSpec => outputSpecOf({ schema: Quote, mode });

const tools = STOCK_TOOL_DESCRIPTIONS;
const base = NATIVE_REQUEST_OPTIONS;
const messages: MessageParam[] = [{ role: 'user', content: 'What is the current stock price of General Motors?' }];

describe('the request of a typed turn', () => {
  test('native: output_config.format carries the schema in the API subset; the tools stay', () => {
    const request = buildModelRequest({ ...base, output: spec('native') }, messages, tools);
    const format = request.output_config?.format;
    assert.equal(format?.type, 'json_schema');
    const schema = format!.schema as { additionalProperties: unknown; properties: Record<string, object> };
    assert.equal(schema.additionalProperties, false, 'every object closed');
    assert.ok(!('exclusiveMinimum' in schema.properties['price']!), 'bounds move out of the schema…');
    assert.match(JSON.stringify(schema.properties['price']), /exclusiveMinimum/, '…into its description');
    assert.deepEqual(
      request.tools!.map((tool) => (tool as { name: string }).name),
      ['get_ticker_symbol', 'get_current_stock_price'],
    );
    assert.deepEqual(validateRequest(request), { ok: true }, 'the local API (like the real one) takes it');
  });

  test('the local API refuses a schema outside the subset, as the real API does', () => {
    // z.toJSONSchema's own output, closed: its `exclusiveMinimum` is outside the subset.
    const raw = { type: 'json_schema', schema: { ...spec('native').schema, additionalProperties: false } };
    const verdict = validateRequest({ ...buildModelRequest(base, messages, tools), output_config: { format: raw } });
    assert.equal(verdict.ok, false);
    assert.match((verdict as { message: string }).message, /'exclusiveMinimum' is not supported in structured outputs/);
    const open = { type: 'json_schema', schema: { type: 'object', properties: {} } };
    assert.match(
      (
        validateRequest({ ...buildModelRequest(base, messages, []), output_config: { format: open } }) as never as {
          message: string;
        }
      ).message,
      /additionalProperties' must be explicitly set to false/,
    );
    const wrongType = { format: { type: 'json', schema: {} } };
    assert.match(
      (
        validateRequest({ ...buildModelRequest(base, messages, []), output_config: wrongType }) as never as {
          message: string;
        }
      ).message,
      /output_config.format.type: Input should be 'json_schema'/,
    );
    assert.match(
      (
        validateRequest({ ...buildModelRequest(base, messages, []), output_format: {} }) as never as {
          message: string;
        }
      ).message,
      /moved to output_config.format/,
    );
  });

  test('tool: the answer tool comes last (with the tools’ cache breakpoint), its input_schema is the schema', () => {
    const output = spec('tool');
    const request = buildModelRequest({ ...base, output, toolChoice: { type: 'any' } }, messages, tools);
    const names = request.tools!.map((tool) => (tool as { name: string }).name);
    assert.deepEqual(names, ['get_ticker_symbol', 'get_current_stock_price', 'final_answer']);
    const answer = request.tools!.at(-1) as { input_schema: Record<string, unknown>; cache_control?: unknown };
    assert.deepEqual(answer.cache_control, { type: 'ephemeral' });
    assert.equal(answer.input_schema['$schema'], undefined);
    assert.deepEqual(answer.input_schema['required'], ['symbol', 'price', 'currency']);
    assert.equal(request.output_config, undefined);
    assert.deepEqual(validateRequest(request), { ok: true });
  });
});

describe('the tool choice of a typed turn', () => {
  test('native leaves the tool choice alone', () => {
    assert.deepEqual(typedCallOptions({ output: spec('native') }, undefined), { output: spec('native') });
    assert.deepEqual(typedCallOptions({ output: spec('native') }, { type: 'auto' }).toolChoice, { type: 'auto' });
  });

  test('tool: `any` (real tools or the answer, never prose); after a wrong or missing answer the answer tool', () => {
    assert.deepEqual(typedCallOptions({ output: spec('tool') }, undefined).toolChoice, { type: 'any' });
    assert.deepEqual(typedCallOptions({ output: spec('tool') }, { type: 'auto' }).toolChoice, { type: 'any' });
    assert.deepEqual(typedCallOptions({ output: spec('tool'), forceAnswer: true }, undefined).toolChoice, {
      type: 'tool',
      name: 'final_answer',
    });
  });

  test("tool: a conversation's own forced tool on the first call still comes first", () => {
    const forced = { type: 'tool' as const, name: 'get_ticker_symbol' };
    assert.deepEqual(typedCallOptions({ output: spec('tool') }, forced).toolChoice, forced);
    assert.deepEqual(typedCallOptions({ output: spec('tool'), forceAnswer: true }, forced).toolChoice, {
      type: 'tool',
      name: 'final_answer',
    });
  });

  test('a turn without a typed answer sends neither', () => {
    assert.deepEqual(typedCallOptions(undefined, undefined), {});
    assert.deepEqual(typedCallOptions({}, { type: 'any' }), { toolChoice: { type: 'any' } });
  });
});

describe('checking an answer', () => {
  const { schema } = spec('native');

  test('an answer that matches is taken as it is', () => {
    assert.deepEqual(checkAnswer(schema, { symbol: 'GM', price: 39.5, currency: 'USD' }), {
      ok: true,
      value: { symbol: 'GM', price: 39.5, currency: 'USD' },
    });
  });

  test('the error names each problem with its path, bounds the API does not enforce included', () => {
    const check = checkAnswer(schema, { symbol: 'GM', price: -1, currency: 'GBP' });
    assert.equal(check.ok, false);
    assert.match((check as { error: string }).error, /price: Too small/);
    assert.match((check as { error: string }).error, /currency: /);
  });

  test('native: text that is not JSON is a wrong answer', () => {
    assert.deepEqual(checkTextAnswer(schema, 'GM trades at 39.5'), { ok: false, error: 'the answer is not JSON' });
    assert.equal(checkTextAnswer(schema, '{"symbol":"GM","price":39.5,"currency":"USD"}').ok, true);
  });

  test(`a wrong answer goes back once; the ${MAX_ANSWER_ATTEMPTS}nd wrong one fails the turn`, () => {
    const wrong = { ok: false, error: 'x' } as const;
    assert.equal(afterAnswer(wrong, 1), 'retry');
    assert.equal(afterAnswer(wrong, 2), 'fail');
    assert.equal(afterAnswer({ ok: true, value: {} }, 2), 'accept');
  });

  test('checking is deterministic: the same answer, the same verdict', () => {
    const answer = { symbol: 'GM', price: -1, currency: 'USD' };
    assert.deepEqual(checkAnswer(schema, answer), checkAnswer(schema, answer));
  });
});

describe('checking an answer costs bounded time, whatever the answer', () => {
  const catastrophic = {
    type: 'object',
    properties: { s: { type: 'string', pattern: '^(a+)+$' } },
    required: ['s'],
  };

  test('a pattern that backtracks exponentially: the answer is checked at once, and wrong', () => {
    // On a backtracking RegExp this check takes about 2^32 steps; the test finishing is the point.
    const check = checkAnswer(catastrophic, { s: `${'a'.repeat(32)}!` });
    assert.deepEqual(check, { ok: false, error: 's: Invalid string: must match pattern /^(a+)+$/' });
    assert.equal(checkAnswer(catastrophic, { s: 'aaaa' }).ok, true);
  });

  test(`an answer nested deeper than ${MAX_ANSWER_DEPTH} levels is wrong, measured without recursion`, () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    assert.deepEqual(checkTextAnswer(catastrophic, deep), {
      ok: false,
      error: `the answer is too large to check: it nests deeper than ${MAX_ANSWER_DEPTH} levels`,
    });
  });

  test(`an answer over ${MAX_ANSWER_CHARS} characters is wrong before it is parsed`, () => {
    const check = checkTextAnswer(catastrophic, JSON.stringify({ s: 'a'.repeat(MAX_ANSWER_CHARS) }));
    assert.match((check as { error: string }).error, /characters; the limit is 1000000/);
    assert.match(
      (checkAnswer(catastrophic, { s: 'a'.repeat(MAX_ANSWER_CHARS) }) as { error: string }).error,
      /characters of JSON; the limit is/,
    );
  });

  test(`an answer that needs more than ${ANSWER_CHECK_BUDGET} units of work is wrong`, () => {
    const options = Array.from({ length: 12 }, (_, i) => ({
      type: 'object',
      properties: { a: { const: i } },
      required: ['a'],
    }));
    const schema = { type: 'object', properties: { w: { type: 'array', items: { anyOf: options } } } };
    const answer = { w: Array.from({ length: 40_000 }, () => ({ a: 'none' })) };
    assert.deepEqual(checkAnswer(schema, answer), {
      ok: false,
      error: 'the answer could not be checked within its budget; give a simpler, smaller answer',
    });
  });

  test('what is wrong is told in at most ten problems, each shortened and well-formed', () => {
    const schema = { type: 'object', properties: {}, additionalProperties: false };
    const answer = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`\ud800${'k'.repeat(1000)}${i}`, i]));
    const { error } = checkAnswer(schema, answer) as { error: string };
    assert.ok(error.length < 400, `${error.length} characters`);
    assert.equal(error, wellFormed(error), 'no lone surrogate');
    const many = { type: 'object', properties: { l: { type: 'array', items: { type: 'string' } } } };
    const problems = (checkAnswer(many, { l: Array.from({ length: 30 }, (_, i) => i) }) as { error: string }).error;
    assert.equal(problems.split('; ').length, 11);
    assert.match(problems, /; and 20 more$/);
  });

  test('a schema from before these checks (carried state) makes a wrong answer, never a throw', () => {
    const backreference = { type: 'object', properties: { s: { type: 'string', pattern: '(a)\\1' } } };
    const check = checkAnswer(backreference, { s: 'aa' });
    assert.match((check as { error: string }).error, /^the answer schema cannot be used: .*backreferences/);
  });
});

describe('schemas that can never be checked or sent are refused where options are checked', () => {
  const refusedBy = (schema: Record<string, unknown>) => {
    const parsed = outputSpecSchema.safeParse({ schema });
    assert.equal(parsed.success, false);
    return parsed.error!.issues[0]!.message;
  };

  test(`a schema nested 10,000 deep: more than ${MAX_SCHEMA_DEPTH} levels, measured without recursion`, () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 5_000; i++) deep = { type: 'object', properties: { a: deep } };
    assert.equal(refusedBy(deep), `the answer schema is too large: it nests deeper than ${MAX_SCHEMA_DEPTH} levels`);
    for (const schema of [conversationOptionsSchema, messageOptionsSchema]) {
      assert.equal(schema.safeParse({ output: { schema: deep } }).success, false);
    }
  });

  test(`a schema over ${MAX_SCHEMA_BYTES} bytes`, () => {
    const properties = Object.fromEntries(Array.from({ length: 3_000 }, (_, i) => [`p${i}`, { type: 'string' }]));
    assert.match(refusedBy({ type: 'object', properties }), /bytes; the limit is 64000/);
  });

  test('a pattern RE2 cannot run, with where it is and why', () => {
    assert.equal(
      refusedBy({ type: 'object', properties: { s: { type: 'string', pattern: '^(?=a)' } } }),
      'the answer schema cannot be used: at properties.s.pattern: the pattern cannot be checked in linear time: ' +
        'lookaround ((?=…), (?!…), (?<=…), (?<!…)) is not supported',
    );
  });
});

describe('options', () => {
  const output = { schema: spec('native').schema };

  test('typed answers need the native protocol (legacy XML has neither output_config nor tool_choice)', () => {
    const parsed = conversationOptionsSchema.safeParse({ protocol: 'legacy-xml', output });
    assert.equal(parsed.success, false);
    assert.match(parsed.error!.issues[0]!.message, /need protocol "native"/);
    const tool = conversationOptionsSchema.safeParse({ protocol: 'legacy-xml', output: { ...output, mode: 'tool' } });
    assert.equal(tool.success, false);
  });

  test('the answer tool may not take the name of a real tool', () => {
    const parsed = conversationOptionsSchema.safeParse({
      tools: ['get_ticker_symbol'],
      output: { ...output, mode: 'tool', toolName: 'get_ticker_symbol' },
    });
    assert.match(parsed.error!.issues[0]!.message, /has the name of one of the conversation's tools/);
  });

  test('the default mechanism is native, the default answer tool final_answer', () => {
    assert.deepEqual(outputSpecSchema.parse(output), { ...output, mode: 'native', toolName: 'final_answer' });
  });

  test('a schema that is not an object is refused', () => {
    const parsed = outputSpecSchema.safeParse({ schema: { type: 'string' } });
    assert.match(parsed.error!.issues[0]!.message, /must describe an object/);
  });
});

describe('the client', () => {
  const invalid = (fn: () => unknown, pattern: RegExp) =>
    assert.throws(
      fn,
      (err: unknown) => err instanceof ConversationError && err.code === 'invalid_options' && pattern.test(err.message),
    );

  test('a zod schema without a JSON Schema form is invalid_options, before anything is sent', () => {
    invalid(() => outputSpecOf({ schema: z.object({ at: z.date() }) }), /no JSON Schema form.*Date/);
    invalid(() => outputSpecOf({ schema: z.string() }), /must describe an object/);
    invalid(() => outputSpecOf({ schema: Quote, mode: 'fast' as never }), /mode/);
  });

  test('the answer comes back parsed by the caller’s schema (transforms apply)', () => {
    const schema = z.object({ price: z.string().transform(Number) });
    const result = { turn: 1, status: 'awaiting_user', text: '', stopReason: 'end_turn', modelCalls: 1, toolCalls: 0 };
    const usage = { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
    const typed = typedResult({ ...result, usage, output: { price: '39.5' } } as never, { schema });
    assert.equal(typed.output.price, 39.5);
    assert.equal(outputSpecOf({ schema }).schema['properties'] !== undefined, true);
  });
});

describe('the state of a typed turn', () => {
  const options = withDefaults({ output: { schema: spec('native').schema } });

  test("a message's own typed answer wins over the conversation's, and survives the queue", () => {
    const state = new ConversationState({ options }, 'run-1');
    state.enqueue('first');
    state.enqueue('second', spec('tool'));
    assert.equal(state.beginTurn().output?.mode, 'native');
    state.finishTurn({ text: '{}', stopReason: 'end_turn', status: 'awaiting_user', answer: { output: {} } });
    assert.equal(state.beginTurn().output?.mode, 'tool');
    assert.equal(state.toCarriedState().currentTurn?.output?.mode, 'tool');
  });

  test('answers are counted per turn; a wrong tool answer forces the answer tool next', () => {
    const state = new ConversationState({ options }, 'run-1');
    state.enqueue('q', spec('tool'));
    state.beginTurn();
    assert.equal(state.recordAnswerAttempt({ forceAnswer: true }), 1);
    assert.equal(state.currentTurn?.forceAnswer, true);
    assert.equal(state.recordAnswerAttempt({ forceAnswer: false }), 2);
    assert.equal(state.currentTurn?.forceAnswer, undefined);
  });

  test("a message asking for a typed answer in a legacy XML conversation is refused as invalid message options (the client's invalid_options)", () => {
    const state = new ConversationState({ options: withDefaults({ protocol: 'legacy-xml' }) }, 'run-1');
    const invalidOptions = (pattern: RegExp) => (err: unknown) =>
      err instanceof ApplicationFailure && err.type === 'InvalidMessageOptions' && pattern.test(err.message);
    assert.throws(
      () => state.validateMessage('q', { output: { schema: spec('native').schema } }),
      invalidOptions(/protocol "native"/),
    );
    assert.throws(
      () => state.validateMessage('q', { output: { schema: 'no' } }),
      invalidOptions(/Invalid message options: output.schema/),
    );
  });

  test('the answer tool is described with the schema as its input', () => {
    const tool = answerToolDescription(spec('tool'));
    assert.equal(tool.name, 'final_answer');
    assert.equal(tool.input_schema.type, 'object');
  });
});
