// Hostile input at one entry point: the schema of a typed answer, and the answers a model gives against it. A
// schema is sent through the client, as a raw `sendMessage` update and as a raw start input; an answer is scripted
// in the local Messages API. Each ends one way: refused with a clear error (the client's invalid_options, the
// update validator's rejection, InvalidConversationInput at start), or the turn ends with `invalid_output` after its
// one retry. Never a failed or timed-out workflow task, and the worker keeps serving.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import { ANSWER_CHECK_TIMED_OUT } from '../../activities/check-answer-activity';
import { ConversationError } from '../../client/errors';
import { CHECK_ANSWER_ACTIVITY } from '../../common/activity-contracts';
import { INVALID_OUTPUT } from '../../common/conversation-types';
import { FailureType } from '../../common/failure-types';
import { wellFormed } from '../../common/safe-text';
import type { ScriptStep } from '../../testing/messages-api/types';
import { type Harness, startHarness, uniquePrompt } from '../support/harness';
import { answersJson, answersWithTool, says } from '../support/script-steps';
import { TAGGED_UNION_SCHEMA, taggedItems } from '../support/tagged-union-schema';
import {
  assertUnharmed,
  conversationFailure,
  failedWorkflowTasks,
  skipWithoutCli,
  startFromCli,
  temporalCli,
} from '../support/hostile';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

type Schema = Record<string, unknown>;

const CATASTROPHIC: Schema = {
  type: 'object',
  properties: { s: { type: 'string', pattern: '^(a+)+$' } },
  required: ['s'],
};
/** 2^32 steps for a backtracking RegExp: the answer that stopped every worker on the queue. */
const EVIL = `${'a'.repeat(32)}!`;

async function rejection(promise: Promise<unknown>): Promise<ConversationError> {
  const error = await promise.then(
    () => assert.fail('it was answered'),
    (err: unknown) => err,
  );
  assert.ok(error instanceof ConversationError, String(error));
  return error;
}

/** No lone surrogate: the text can be encoded into a Temporal message. */
function assertWellFormed(text: string) {
  assert.equal(text, wellFormed(text), 'the message is well-formed');
}

describe('answers that cost a backtracking or recursive check unbounded time: the turn ends with invalid_output', () => {
  const deepArray = `{"s":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;

  for (const { name, schema, mode, answer, why } of [
    {
      name: 'a catastrophic pattern, native: s = "a"×32 + "!"',
      schema: CATASTROPHIC,
      mode: 'native',
      answer: answersJson({ s: EVIL }),
      why: /s: Invalid string: must match pattern \/\^\(a\+\)\+\$\//,
    },
    {
      name: 'a catastrophic pattern, answer tool: s = "a"×32 + "!"',
      schema: CATASTROPHIC,
      mode: 'tool',
      answer: answersWithTool({ s: EVIL }),
      why: /must match pattern/,
    },
    {
      name: 'a catastrophic patternProperties key with additionalProperties: false',
      schema: { type: 'object', patternProperties: { '^(a+)+$': { type: 'number' } }, additionalProperties: false },
      mode: 'native',
      answer: answersJson({ [EVIL]: 1 }),
      why: /Unrecognized key/,
    },
    {
      name: 'a catastrophic propertyNames pattern',
      schema: { type: 'object', propertyNames: { pattern: '^(a+)+$' } },
      mode: 'tool',
      answer: answersWithTool({ [EVIL]: 1 }),
      why: /Invalid key/,
    },
    {
      name: 'an email format against 100,000 characters',
      schema: { type: 'object', properties: { e: { type: 'string', format: 'email' } }, required: ['e'] },
      mode: 'native',
      answer: answersJson({ e: `${'a.'.repeat(50_000)}@` }),
      why: /e: Invalid email address/,
    },
    {
      name: 'an answer nested 10,000 deep',
      schema: CATASTROPHIC,
      mode: 'native',
      answer: says(deepArray),
      why: /the answer is too large to check: it nests deeper than 64 levels/,
    },
    {
      // The reply's reader already replaced the over-deep input by {} and answered the call with an error.
      name: 'an answer tool input nested 2,000 deep',
      schema: CATASTROPHIC,
      mode: 'tool',
      answer: answersWithTool({ s: JSON.parse(`${'['.repeat(2_000)}${']'.repeat(2_000)}`) as unknown }),
      why: /nests deeper than 64 levels/,
    },
    {
      name: 'an answer that makes 12 nested union branches fail on 40,000 items',
      schema: TAGGED_UNION_SCHEMA,
      mode: 'native',
      answer: answersJson(taggedItems(40_000, 'none')),
      why: /could not be checked within its budget/,
    },
    {
      name: 'an answer over 1,000,000 characters',
      schema: CATASTROPHIC,
      mode: 'native',
      answer: answersJson({ s: 'a'.repeat(1_100_000) }),
      why: /the answer has 1100008 characters; the limit is 1000000/,
    },
    {
      name: 'lone surrogates in the schema’s property names and the answer’s keys',
      schema: {
        type: 'object',
        properties: { '\ud800name': { type: 'string', pattern: '^\ud800' } },
        required: ['\ud800name'],
        additionalProperties: false,
      },
      mode: 'native',
      answer: answersJson({ '\udc00other': 'x' }),
      why: /\ufffdname: Invalid input: expected string, received undefined; \(the answer\): Unrecognized key: "\ufffdother"/,
    },
  ] as const) {
    test(name, async () => {
      const prompt = uniquePrompt('Answer as data.');
      const id = `hostile-answer-${Date.now()}`;
      h.mock.script(prompt, [answer, answer]);
      const error = await rejection(
        h.conversations.sendMessage(id, prompt, {
          start: { timeouts: { idle: '10 minutes' } },
          output: { schema, mode },
        }),
      );
      assert.equal(error.code, 'turn_failed');
      assert.equal(error.failureType, INVALID_OUTPUT);
      assert.match(error.message, /did not match the schema after 2 attempts/);
      assert.match(error.message, why);
      assertWellFormed(error.message);
      assert.ok(error.message.length < 5_000, `a bounded message (${error.message.length} characters)`);
      assert.equal(h.mock.requestsFor(prompt).length, 2, 'the one retry, then the end of the turn');
      assert.equal((await h.conversations.getState(id)).status, 'awaiting_user');
      await assertUnharmed(h, id);
      await h.conversations.end(id);
    });
  }
});

/**
 * A schema as JSON text, nested `levels` objects deep in `properties` (2 JSON levels each). Written directly: Node's
 * JSON.stringify overflows its stack long before 10,000 levels, and the Temporal CLI reads at most 10,000.
 */
function nestedSchemaJson(levels: number): string {
  return `${'{"type":"object","properties":{"a":'.repeat(levels)}{"type":"string"}${'}}'.repeat(levels)}`;
}

/** `cli` given an `--input-file` for each input, in a file of its own (a long input does not fit in an argument). */
async function withInputFiles(
  inputs: string[],
  cli: (...flags: string[]) => ReturnType<typeof temporalCli>,
): ReturnType<typeof temporalCli> {
  const dir = await mkdtemp(join(tmpdir(), 'typed-answer-'));
  try {
    const files = await Promise.all(
      inputs.map(async (input, index) => {
        const file = join(dir, `input-${index}.json`);
        await writeFile(file, input);
        return ['--input-file', file];
      }),
    );
    return await cli(...files.flat());
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe(
  'schemas that can never be checked or sent: refused by the client, the update validator and at start',
  {
    skip: skipWithoutCli,
  },
  () => {
    const properties = Object.fromEntries(Array.from({ length: 3_000 }, (_, i) => [`p${i}`, { type: 'string' }]));
    for (const { name, schema, why } of [
      { name: 'nested 10,000 deep', schema: nestedSchemaJson(4_990), why: /it nests deeper than 64 levels/ },
      { name: 'over 64,000 bytes', schema: { type: 'object', properties }, why: /bytes; the limit is 64000/ },
      {
        name: 'over 50,000 values',
        schema: { type: 'object', properties: { n: { enum: Array.from({ length: 60_000 }, () => 0) } } },
        why: /it has more than 50000 values/,
      },
      {
        name: 'a backreference',
        schema: { type: 'object', properties: { s: { type: 'string', pattern: '^(a)\\1$' } } },
        why: /at properties\.s\.pattern: the pattern cannot be checked in linear time: backreferences/,
      },
      {
        name: 'a lookahead in a patternProperties key',
        schema: { type: 'object', patternProperties: { '^(?=a)': {} } },
        why: /at patternProperties\..*: the pattern cannot be checked in linear time: lookaround/,
      },
      {
        name: 'more than 100 patterns (each compiled whenever the schema is built)',
        schema: {
          type: 'object',
          properties: Object.fromEntries(
            Array.from({ length: 101 }, (_, i) => [`p${i}`, { type: 'string', pattern: `^[a-z]+${i}$` }]),
          ),
        },
        why: /the schema has more than 100 patterns and formats/,
      },
      {
        name: 'a repeat count RE2 refuses',
        schema: { type: 'object', properties: { s: { type: 'string', pattern: '(?:a{1000}){1000}' } } },
        why: /RE2 cannot run it \(invalid repeat count\)/,
      },
      {
        name: 'a pattern that is not a regular expression',
        schema: { type: 'object', properties: { s: { type: 'string', pattern: '(' } } },
        why: /not a valid ECMA-262 regular expression/,
      },
      {
        name: 'a format whose check needs lookahead',
        schema: { type: 'object', properties: { h: { type: 'string', format: 'hostname' } } },
        why: /the format \\?"hostname\\?" cannot be checked in linear time/,
      },
      {
        name: 'a $ref cycle that never steps into the answer',
        schema: {
          type: 'object',
          $defs: { a: { $ref: '#/$defs/b' }, b: { anyOf: [{ $ref: '#/$defs/a' }] } },
          properties: { x: { $ref: '#/$defs/a' } },
        },
        why: /a \$ref cycle must step into the answer/,
      },
      {
        name: 'a $ref to the root through allOf',
        schema: { type: 'object', allOf: [{ $ref: '#' }] },
        why: /a \$ref cycle must step into the answer/,
      },
      {
        name: 'lone surrogates in a property name and its pattern',
        schema: { type: 'object', properties: { '\ud800x': { type: 'string', pattern: '\udc00(?!x)' } } },
        why: /at properties\.\ufffdx\.pattern: .*lookaround/,
      },
      { name: 'a string schema', schema: { type: 'string' }, why: /must describe an object/ },
      { name: 'an object schema without a type', schema: { properties: {} }, why: /must describe an object/ },
      {
        name: 'a keyword zod cannot check (not)',
        schema: { type: 'object', not: { type: 'null' } },
        why: /not is not supported/,
      },
    ] as const) {
      test(name, async () => {
        const json = typeof schema === 'string' ? schema : JSON.stringify(schema);
        const id = `hostile-schema-${Date.now()}`;
        const parsed = JSON.parse(json) as Schema;
        const byClient = await rejection(
          h.conversations.sendMessage(id, 'Hi', { start: {}, output: { schema: parsed } }),
        );
        assert.equal(byClient.code, 'invalid_options');
        assert.match(byClient.message, why);
        await assert.rejects(h.client.workflow.getHandle(id).describe(), /not found/i, 'nothing was started');

        // Past the client: `sendMessage` from the Temporal CLI to a running conversation is rejected by its validator.
        const running = await h.conversations.startConversation({ timeouts: { idle: '10 minutes' } });
        const update = await withInputFiles(['"Hi"', `{"output":{"schema":${json}}}`], (...files) =>
          temporalCli('workflow', 'update', 'execute', '--workflow-id', running, '--name', 'sendMessage', ...files),
        );
        assert.equal(update.ok, false, update.output);
        assert.match(update.output, /Invalid message options: output\.schema/);
        assert.match(update.output, why);
        assert.equal((await h.conversations.getState(running)).status, 'awaiting_user');
        await assertUnharmed(h, running);
        await h.conversations.end(running);

        // A start from the Temporal CLI with it in the options: the conversation fails at once.
        const startedId = `hostile-schema-start-${Date.now()}`;
        const start = await withInputFiles([`{"options":{"output":{"schema":${json}}}}`], (...files) =>
          startFromCli(h, startedId, ...files),
        );
        assert.equal(start.ok, true, start.output);
        const failure = await conversationFailure(h, startedId);
        assert.equal(failure.type, FailureType.InvalidConversationInput);
        assert.match(failure.message, why);
        assertWellFormed(failure.message);
        assert.equal(await failedWorkflowTasks(h, startedId), 0, 'no workflow task failed');
      });
    }
  },
);

describe('a check that cannot finish (a starved worker): a wrong answer that says why, never a stuck turn', () => {
  let starved: Harness;
  let attempts = 0;
  before(async () => {
    // Every attempt of the check fails as one that ran out of time does.
    starved = await startHarness({
      activityInterceptors: [
        () => ({
          inbound: {
            async execute(input, next) {
              if (Context.current().info.activityType !== CHECK_ANSWER_ACTIVITY) return next(input);
              attempts++;
              throw ApplicationFailure.retryable(
                'checking the answer took longer than 5000 ms',
                ANSWER_CHECK_TIMED_OUT,
              );
            },
          },
        }),
      ],
    });
  });
  after(async () => {
    await starved?.close();
  });

  test('each answer is tried 3 times, then counted wrong; the turn ends with invalid_output', async () => {
    const prompt = uniquePrompt('Answer as data.');
    const id = `hostile-answer-starved-${Date.now()}`;
    const answer: ScriptStep = { reply: { content: [{ type: 'json', value: { s: 'aaa' } }], stop_reason: 'end_turn' } };
    starved.mock.script(prompt, [answer, answer]);
    const error = await rejection(
      starved.conversations.sendMessage(id, prompt, {
        start: { timeouts: { idle: '10 minutes' } },
        output: { schema: CATASTROPHIC },
      }),
    );
    assert.equal(error.code, 'turn_failed');
    assert.equal(error.failureType, INVALID_OUTPUT);
    assert.match(
      error.message,
      /after 2 attempts: the answer could not be checked \(.*checking the answer took longer than 5000 ms\)/,
    );
    const [, second] = starved.mock.requestsFor(prompt);
    assert.match(JSON.stringify(second!.body.messages.at(-1)), /the answer could not be checked/, 'the model was told');
    assert.equal((await starved.conversations.getState(id)).status, 'awaiting_user');
    assert.equal(attempts, 6, 'three attempts for each of the two answers');
    await assertUnharmed(starved, id);
    await starved.conversations.end(id);
  });
});
