// The libraries every workflow run shares (workflows/shared-libraries.ts) are deep-frozen by the SDK after they load.
// A library that writes to one of its own exported objects later would then throw inside a workflow task, on every
// retry. These tests freeze zod as the SDK does and then build and run the kinds of schemas workflow code builds.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as zodCore from 'zod/v4/core';
import { z } from 'zod';
import '../../workflows/shared-libraries';
import type * as AnswerSchema from '../../common/answer-schema';
import type * as WorkflowMessages from '../../common/workflow-messages';

/** What the SDK's reusable VM does to a shared module's exports (own properties, recursively; functions frozen whole). */
function deepFreeze(value: unknown, seen = new WeakSet<object>()): void {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return;
  if (seen.has(value) || Object.isFrozen(value)) return;
  seen.add(value);
  if (typeof value === 'object') {
    for (const key of Reflect.ownKeys(value)) {
      try {
        deepFreeze((value as Record<PropertyKey, unknown>)[key], seen);
      } catch {
        // some objects (typed arrays) cannot be frozen; the SDK skips them too
      }
    }
  }
  Object.freeze(value);
}

test('zod fills in its global config while the shared module loads, before the SDK freezes it', () => {
  assert.equal(typeof zodCore.globalConfig.localeError, 'function', 'the default locale');
  assert.ok(zodCore.globalConfig.memoizer, 'the memoizer');
});

test('frozen as the SDK freezes it, zod still builds and runs every kind of schema workflow code uses', () => {
  deepFreeze(z);
  deepFreeze(zodCore);
  // Loaded after the freeze, as a workflow run loads its own modules.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { answerSchema } = require('../../common/answer-schema') as typeof AnswerSchema;
  const { conversationInputSchema } = require('../../common/workflow-messages') as typeof WorkflowMessages;
  /* eslint-enable @typescript-eslint/no-require-imports */
  const input = conversationInputSchema.safeParse({
    options: { tools: ['get_weather'], budget: { perTurn: { usd: 1 } } },
  });
  assert.equal(input.success, true);
  assert.equal(conversationInputSchema.safeParse({ options: { maxTokens: -1 } }).success, false);
  const built = answerSchema({
    type: 'object',
    properties: {
      symbol: { type: 'string', pattern: '^[A-Z]{1,5}$', minLength: 1 },
      price: { type: 'number', minimum: 0 },
      tags: { type: 'array', items: { anyOf: [{ type: 'string', format: 'email' }, { type: 'integer' }] } },
      kind: { enum: ['stock', 'fund'] },
      note: { type: ['string', 'null'] },
      extra: { type: 'object', additionalProperties: { type: 'boolean' } },
    },
    required: ['symbol', 'price'],
  });
  assert.ok(built.ok);
  if (!built.ok) return;
  assert.equal(built.schema.safeParse({ symbol: 'GM', price: 38.5, tags: ['a@b.co', 3], kind: 'stock' }).success, true);
  const wrong = built.schema.safeParse({ symbol: 'gm', price: -1, tags: [1.5], kind: 'x', extra: { a: 1 } });
  assert.equal(wrong.success, false);
  assert.ok(wrong.error!.issues.length >= 4, 'each problem is reported');
});

test('a schema is built by the first run that needs it and checked with by every later run, frozen exports and all', () => {
  // What the SDK's reusable VM does: the preloaded module's exports are frozen, and every run loads its own copy of
  // the other modules. The schemas those copies export are the first run's, and still check as they should.
  /* eslint-disable @typescript-eslint/no-require-imports */
  deepFreeze(require('../../common/shared-once'));
  const commonDir = require.resolve('../../common/shared-once').replace(/shared-once\.ts$/, '');
  const loadAsANewRun = (): typeof WorkflowMessages => {
    for (const key of Object.keys(require.cache)) {
      if (key.startsWith(commonDir) && !key.endsWith('shared-once.ts')) delete require.cache[key];
    }
    return require('../../common/workflow-messages') as typeof WorkflowMessages;
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
  const first = loadAsANewRun();
  const second = loadAsANewRun();
  assert.notEqual(first.sendMessageUpdate, second.sendMessageUpdate, 'each run has modules of its own');
  assert.equal(first.conversationInputSchema, second.conversationInputSchema, 'and checks with the same schema');
  for (const run of [first, second]) {
    const input = run.conversationInputSchema.safeParse({ options: { tools: ['get_weather'], maxTokens: 2048 } });
    assert.equal(input.success, true);
    assert.deepEqual(input.data?.options.tools, ['get_weather']);
    const bad = run.conversationInputSchema.safeParse({ options: { tools: ['get_weather', 'get_weather'] } });
    assert.equal(bad.success, false);
    assert.match(bad.error!.issues[0]!.message, /listed twice/);
  }
  // A default is the run's own: one run's options never change another's.
  const a = second.conversationInputSchema.parse({}).options;
  a.tools.push('changed');
  assert.deepEqual(first.conversationInputSchema.parse({}).options.tools, []);
});
