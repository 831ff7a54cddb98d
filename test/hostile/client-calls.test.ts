// Hostile input through the client (ConversationClient, the CLI): what a careless or malicious caller passes. Every
// bad argument is a ConversationError with the right code that names the argument and does not repeat the value; the
// client sends nothing to Temporal when it can tell (a gRPC interceptor counts every call), and the calling process
// never sees an uncaught exception or an unhandled rejection.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { Client, Connection, type ConnectionOptions } from '@temporalio/client';
import { ConversationClient } from '../../client/conversation-client';
import { ConversationError, type ConversationErrorCode } from '../../client/errors';
import { STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import { type Harness, namespace, startHarness, temporalAddress, uniquePrompt } from '../support/harness';
import { callsTools, says } from '../support/script-steps';
import { approvalAskedFor } from '../support/awaiting-approval';
import { assertWorkerServes } from '../support/hostile';

let h: Harness;
let connection: Connection;
let conversations: ConversationClient;
/** Every gRPC call the client under test made. */
let rpcs = 0;
/** What reached the process's last resort while the tests ran. */
const escaped: unknown[] = [];
const onEscape = (error: unknown) => escaped.push(error);
/** An open conversation for the calls that need one. */
let openId: string;

before(async () => {
  process.on('uncaughtException', onEscape);
  process.on('unhandledRejection', onEscape);
  h = await startHarness();
  type Interceptor = NonNullable<ConnectionOptions['interceptors']>[number];
  const counting: Interceptor = (options, next) => {
    rpcs++;
    return next(options) as ReturnType<Interceptor>;
  };
  connection = await Connection.connect({ address: temporalAddress, interceptors: [counting] });
  conversations = new ConversationClient({
    client: new Client({ connection, namespace }),
    taskQueue: h.taskQueue,
    tools: [...STOCK_TOOLS, 'buy_stock'],
  });
  openId = `client-calls-open-${Date.now()}`;
  await conversations.sendMessage(openId, uniquePrompt('Hello there'), { start: { tools: STOCK_TOOLS } });
});

after(async () => {
  process.off('uncaughtException', onEscape);
  process.off('unhandledRejection', onEscape);
  await connection?.close();
  await h?.close();
});

/**
 * The call fails with a ConversationError of `code` whose message names the argument (`names`), stays short and
 * well-formed, and nothing went to Temporal.
 */
async function refused(call: () => unknown, code: ConversationErrorCode, names: RegExp): Promise<ConversationError> {
  const before = rpcs;
  let error: unknown;
  try {
    const value = call();
    if (value && typeof (value as AsyncIterator<unknown>).next === 'function') {
      await (value as AsyncIterator<unknown>).next();
    } else {
      await value;
    }
  } catch (err) {
    error = err;
  }
  assert.ok(error instanceof ConversationError, `a ConversationError, not ${String(error).slice(0, 200)}`);
  assert.equal(error.code, code, error.message);
  assert.match(error.message, names);
  assert.ok(error.message.length <= 1_500, `a short message (${error.message.length} characters)`);
  assert.doesNotMatch(error.message, /[\u0000-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])/);
  assert.equal(rpcs, before, 'nothing was sent to Temporal');
  return error;
}

const HUGE = 'x'.repeat(3 * 2 ** 20);
const LONE = 'hello \ud800 there';

describe('timeouts', () => {
  for (const timeoutMs of [NaN, Infinity, -Infinity, -1, 0, 2 ** 53, '1000', null]) {
    test(`sendMessage and awaitTurn with timeoutMs ${String(timeoutMs)}`, async () => {
      await refused(
        () => conversations.sendMessage(openId, 'hi', { timeoutMs } as never),
        'invalid_options',
        /^Invalid options for sendMessage: timeoutMs: /,
      );
      await refused(
        () => conversations.awaitTurn(openId, 1, { timeoutMs } as never),
        'invalid_options',
        /^Invalid wait for awaitTurn: timeoutMs: /,
      );
    });
  }

  test('connect with an address that is a number, or a task queue with a NUL, is refused before it connects', async () => {
    const connect = (options: Record<string, unknown>) => () =>
      ConversationClient.connect({ address: temporalAddress, namespace, taskQueue: 'q', ...options } as never);
    await refused(
      connect({ address: 42 }),
      'invalid_options',
      /^Invalid options for ConversationClient\.connect: address: /,
    );
    await refused(connect({ taskQueue: 'q\u0000' }), 'invalid_options', /taskQueue: a task queue is printable text/);
    await refused(connect({ turnTimeoutMs: -5 }), 'invalid_options', /turnTimeoutMs: a timeout is more than 0 ms/);
  });

  test('a client whose turn timeout is NaN is refused when it is made', async () => {
    await refused(
      () => new ConversationClient({ client: h.client, taskQueue: h.taskQueue, turnTimeoutMs: NaN }),
      'invalid_options',
      /turnTimeoutMs/,
    );
  });
});

describe('list filters', () => {
  const filters: [string, unknown, RegExp][] = [
    ['a string as a date', { startedAfter: 'yesterday' }, /startedAfter: a date is a valid Date/],
    ['an invalid Date', { startedBefore: new Date('not a date') }, /startedBefore: /],
    ['a number as a date', { startedAfter: Date.now() }, /startedAfter/],
    ['a NaN limit', { limit: NaN }, /limit: /],
    ['a negative limit', { limit: -1 }, /limit: a limit is at least 1/],
    ['a fractional limit', { limit: 1.5 }, /limit: a limit is a whole number/],
    ['a string limit', { limit: 'ten' }, /limit: /],
    ['an unknown status', { status: 'sleeping' }, /status: not a conversation status/],
    ['a model with a NUL', { model: 'claude\u0000' }, /model: a model name is printable text/],
    ['an unknown key', { mcpServers: ['x'] }, /filter: unknown key "mcpServers"/],
    ['a key 1 MiB long', { [HUGE.slice(0, 2 ** 20)]: 1 }, /unknown key "x{39}…"/],
    ['a string as the filter', 'awaiting_user', /filter: /],
  ];
  for (const [what, filter, names] of filters) {
    test(`list with ${what}`, async () => {
      await refused(() => conversations.list(filter as never), 'invalid_options', names);
    });
  }
});

describe('event stream options', () => {
  const options: [string, unknown, RegExp][] = [
    ['fromOffset NaN', { fromOffset: NaN }, /fromOffset: /],
    ['fromOffset -1', { fromOffset: -1 }, /fromOffset: an offset is 0 or more/],
    ['fromOffset 1.5', { fromOffset: 1.5 }, /fromOffset: an offset is a whole number/],
    ['fromOffset "3"', { fromOffset: '3' }, /fromOffset: /],
    ['a cursor that is none', { after: 'tomorrow' }, /after: not a cursor/],
    ['a cursor 3 MiB long', { after: HUGE }, /after: /],
    ['liveIntervalMs 0', { liveIntervalMs: 0 }, /liveIntervalMs: an interval is at least 10 ms/],
    ['a string as the signal', { signal: 'abort' }, /signal: a signal is an AbortSignal/],
    ['an unknown key', { from: 0 }, /unknown key "from"/],
  ];
  for (const [what, eventOptions, names] of options) {
    test(`events with ${what}`, async () => {
      await refused(() => conversations.events(openId, eventOptions as never), 'invalid_options', names);
    });
  }
  test('streamMessage with a string as its options', async () => {
    await refused(
      () => conversations.streamMessage(openId, 'hi', 'fast' as never),
      'invalid_options',
      /^Invalid options for streamMessage/,
    );
  });
});

describe('conversation ids', () => {
  const ids: [string, unknown][] = [
    ['empty', ''],
    ['a NUL', 'a\u0000b'],
    ['a line break', 'line\nbreak'],
    ['DEL', 'del\u007f'],
    ['a C1 control', 'next\u0085line'],
    ['a line separator', 'a\u2028b'],
    ['a lone surrogate', 'half \ud800'],
    ['a lone low surrogate', '\udc00'],
    ['1,001 ASCII characters', 'x'.repeat(1_001)],
    ['1,002 bytes of UTF-8 in 501 characters', 'é'.repeat(501)],
    ['3 MiB', HUGE],
    ['a number', 42],
    ['null', null],
    ['an object', { id: 'x' }],
  ];
  const calls: [string, (id: never) => unknown][] = [
    ['sendMessage', (id) => conversations.sendMessage(id, 'hi', { start: { tools: [] } })],
    ['submitMessage', (id) => conversations.submitMessage(id, 'hi')],
    ['startConversation', (id) => conversations.startConversation({ id })],
    ['streamMessage', (id) => conversations.streamMessage(id, 'hi')],
    ['events', (id) => conversations.events(id)],
    ['awaitTurn', (id) => conversations.awaitTurn(id, 1)],
    ['getState', (id) => conversations.getState(id)],
    ['getTranscript', (id) => conversations.getTranscript(id)],
    [
      'approveToolCall',
      (id) => conversations.approveToolCall(id, { callId: 'c', argumentsDigest: 'd', approve: true }),
    ],
    ['end', (id) => conversations.end(id)],
    ['cancel', (id) => conversations.cancel(id)],
    ['waitForResult', (id) => conversations.waitForResult(id)],
    ['handle', (id) => conversations.handle(id)],
  ];
  for (const [what, id] of ids) {
    test(`an id with ${what} is refused by every call`, async () => {
      for (const [name, call] of calls) {
        const error = await refused(() => call(id as never), 'invalid_options', new RegExp(`for ${name}: `));
        assert.match(error.message, /\bid\b/);
      }
    });
  }

  test('the longest id Temporal takes is accepted: 1,000 bytes', async () => {
    const id = `${'é'.repeat(450)}${'x'.repeat(100)}`;
    await assert.rejects(conversations.getState(id), (err: ConversationError) => err.code === 'not_found');
  });
});

describe('message texts', () => {
  const texts: [string, unknown, RegExp][] = [
    ['3 MiB', HUGE, /has 3145728 characters; the limit is 200000/],
    ['a lone surrogate', LONE, /not well-formed/],
    ['only blanks', ' \n\t ', /The message is empty/],
    ['a number', 42, /must be a string/],
    ['undefined', undefined, /must be a string/],
  ];
  for (const [what, text, names] of texts) {
    test(`a text with ${what}`, async () => {
      await refused(() => conversations.sendMessage(openId, text as never), 'invalid_message', names);
      await refused(() => conversations.submitMessage(openId, text as never), 'invalid_message', names);
      await refused(() => conversations.streamMessage(openId, text as never), 'invalid_message', names);
      // (No first message at all is a conversation that waits for one.)
      if (text !== undefined) {
        await refused(() => conversations.startConversation({ firstMessage: text as never }), 'invalid_message', names);
      }
    });
  }
});

describe('option objects of the wrong type', () => {
  const cases: [string, () => unknown, RegExp][] = [
    ['sendMessage options as a string', () => conversations.sendMessage(openId, 'hi', 'x' as never), /options/],
    ['sendMessage options of null', () => conversations.sendMessage(openId, 'hi', null as never), /options/],
    ['sendMessage options as an array', () => conversations.sendMessage(openId, 'hi', [] as never), /options/],
    [
      'sendMessage start as a string',
      () => conversations.sendMessage(openId, 'hi', { start: 'tools' as never }),
      /start: start \(a new conversation's options\) is an object/,
    ],
    ['sendMessage start as an array', () => conversations.sendMessage(openId, 'hi', { start: [] as never }), /start/],
    ['sendMessage start as a number', () => conversations.sendMessage(openId, 'hi', { start: 5 as never }), /start/],
    [
      'sendMessage options with an unknown key',
      () => conversations.sendMessage(openId, 'hi', { timeout: 5 } as never),
      /^Invalid options for sendMessage: options: unknown key "timeout"$/,
    ],
    [
      'sendMessage an update id with a NUL',
      () => conversations.sendMessage(openId, 'hi', { updateId: 'u\u0000' }),
      /updateId: an update id is printable text/,
    ],
    [
      'sendMessage an output that is not an answer format',
      () => conversations.sendMessage(openId, 'hi', { output: 5 } as never),
      /output: /,
    ],
    [
      'sendMessage a start owner with a NUL',
      () => conversations.sendMessage(`client-calls-never-${Date.now()}`, 'hi', { start: { owner: 'a\u0000' } }),
      /^Invalid options\.start\.owner for sendMessage: /,
    ],
    [
      'submitMessage options as a number',
      () => conversations.submitMessage(openId, 'hi', 5 as never),
      /^Invalid options for submitMessage: options: /,
    ],
    [
      'submitMessage options with a timeout (sendMessage has one; a submit answers at once)',
      () => conversations.submitMessage(openId, 'hi', { timeoutMs: 5 } as never),
      /^Invalid options for submitMessage: options: unknown key "timeoutMs"$/,
    ],
    [
      'streamMessage options with a wait of its own',
      () => conversations.streamMessage(openId, 'hi', { updateId: 'u' } as never),
      /^Invalid options for streamMessage: options: unknown key "updateId"$/,
    ],
    ['startConversation options as a string', () => conversations.startConversation('x' as never), /options/],
    ['awaitTurn turn 0', () => conversations.awaitTurn(openId, 0), /turn: /],
    ['awaitTurn turn NaN', () => conversations.awaitTurn(openId, NaN), /turn: /],
    ['awaitTurn turn "1"', () => conversations.awaitTurn(openId, '1' as never), /turn: /],
    ['getTranscript range from -1', () => conversations.getTranscript(openId, { from: -1 }), /from: /],
    ['getTranscript range as a string', () => conversations.getTranscript(openId, 'all' as never), /range/],
    ['getTranscript range with NaN', () => conversations.getTranscript(openId, { to: NaN }), /to: /],
    ['tools("yes")', () => conversations.tools('yes' as never), /refresh/],
    ['mcpServers(1)', () => conversations.mcpServers(1 as never), /refresh/],
    ['a decision as a string', () => conversations.approveToolCall(openId, 'yes' as never), /decision/],
    ['a decision of null', () => conversations.approveToolCall(openId, null as never), /decision/],
    [
      'a decision whose approve is "true"',
      () => conversations.approveToolCall(openId, { callId: 'c', argumentsDigest: 'd', approve: 'true' } as never),
      /approve: /,
    ],
    [
      'a decision with an unknown key',
      () =>
        conversations.approveToolCall(openId, {
          callId: 'c',
          argumentsDigest: 'd',
          approve: true,
          force: true,
        } as never),
      /unknown key "force"/,
    ],
    [
      'a decision whose call id has a lone surrogate',
      () => conversations.approveToolCall(openId, { callId: '\ud800', argumentsDigest: 'd', approve: true }),
      /callId: a call id is printable/,
    ],
    [
      'a decision whose reason is 3 MiB',
      () => conversations.approveToolCall(openId, { callId: 'c', argumentsDigest: 'd', approve: false, reason: HUGE }),
      /reason: /,
    ],
  ];
  for (const [what, call, names] of cases) {
    test(what, async () => {
      await refused(call, 'invalid_options', names);
    });
  }
});

describe('tenants and priorities (docs/fairness.md): refused before anything reaches Temporal', () => {
  const never = () => `client-calls-never-${Date.now()}`;
  const cases: [string, () => unknown, RegExp][] = [
    [
      'a tenant of 65 bytes (Temporal takes 64)',
      () => conversations.startConversation({ tenant: 'a'.repeat(65) }),
      /^Invalid options\.tenant for startConversation: .*at most 64 bytes/,
    ],
    [
      'a tenant of 22 three-byte characters (66 bytes in 22 characters)',
      () => conversations.startConversation({ tenant: '€'.repeat(22) }),
      /tenant: a tenant has at most 64 bytes in UTF-8/,
    ],
    [
      'a tenant of 3 MiB',
      () => conversations.startConversation({ tenant: HUGE }),
      /tenant: a tenant has at most 64 bytes/,
    ],
    ['an empty tenant', () => conversations.startConversation({ tenant: '' }), /tenant: a tenant is not empty/],
    [
      'a tenant with a NUL',
      () => conversations.startConversation({ tenant: 'acme\u0000' }),
      /tenant: a tenant is printable text/,
    ],
    [
      'a tenant with a lone surrogate',
      () => conversations.startConversation({ tenant: 'acme\ud800' }),
      /tenant: a tenant is printable text/,
    ],
    [
      'a tenant as a number',
      () => conversations.startConversation({ tenant: 7 as never }),
      /tenant: a tenant is a string/,
    ],
    [
      'a tenant weight of 0',
      () => conversations.startConversation({ tenant: 'acme', tenantWeight: 0 }),
      /tenantWeight: a tenant weight is between 0\.001 and 1000/,
    ],
    [
      'a negative tenant weight',
      () => conversations.startConversation({ tenant: 'acme', tenantWeight: -1 }),
      /tenantWeight: a tenant weight is between/,
    ],
    [
      'a tenant weight of Infinity',
      () => conversations.startConversation({ tenant: 'acme', tenantWeight: Infinity }),
      /tenantWeight: a tenant weight is a number/,
    ],
    [
      'a tenant weight of NaN',
      () => conversations.startConversation({ tenant: 'acme', tenantWeight: NaN }),
      /tenantWeight: a tenant weight is/,
    ],
    [
      'a tenant weight of 1e6',
      () => conversations.startConversation({ tenant: 'acme', tenantWeight: 1e6 }),
      /tenantWeight: a tenant weight is between/,
    ],
    [
      'a tenant weight without a tenant',
      () => conversations.startConversation({ tenantWeight: 2 }),
      /tenantWeight: tenantWeight needs a tenant/,
    ],
    ['a priority of 0', () => conversations.startConversation({ priority: 0 }), /priority: a priority is from 1/],
    ['a priority of 6', () => conversations.startConversation({ priority: 6 }), /priority: a priority is from 1/],
    ['a priority of 2.5', () => conversations.startConversation({ priority: 2.5 }), /priority: a priority is a whole/],
    [
      'a priority of "1"',
      () => conversations.startConversation({ priority: '1' as never }),
      /priority: a priority is a number/,
    ],
    [
      'a priority of -1e308',
      () => conversations.startConversation({ priority: -1e308 }),
      /priority: a priority is from 1/,
    ],
    [
      "a new conversation's tenant of 65 bytes (sendMessage's start)",
      () => conversations.sendMessage(never(), 'hi', { start: { tenant: 'a'.repeat(65) } }),
      /^Invalid options\.start\.tenant for sendMessage: /,
    ],
    [
      "a new conversation's weight without a tenant (submitMessage's start)",
      () => conversations.submitMessage(never(), 'hi', { start: { tenantWeight: 3 } }),
      /options\.start\.tenantWeight: tenantWeight needs a tenant/,
    ],
    [
      "a message's priority of 9 (sendMessage)",
      () => conversations.sendMessage(openId, 'hi', { priority: 9 }),
      /^Invalid options for sendMessage: priority: a priority is from 1/,
    ],
    [
      "a message's priority of NaN (submitMessage)",
      () => conversations.submitMessage(openId, 'hi', { priority: NaN }),
      /^Invalid options for submitMessage: priority: /,
    ],
    [
      "a message's priority as a string (streamMessage)",
      () => conversations.streamMessage(openId, 'hi', { priority: 'high' as never }),
      /^Invalid options for streamMessage: priority: a priority is a number/,
    ],
    [
      'a message with a tenant of its own (a tenant is the conversation’s)',
      () => conversations.sendMessage(openId, 'hi', { tenant: 'other' } as never),
      /unknown key "tenant" \(a new conversation's options go in options\.start/,
    ],
    [
      "a fork's priority of 0",
      () => conversations.fork(openId, { at: { beforeTurn: 1 }, priority: 0 }),
      /priority: a priority is from 1/,
    ],
    [
      "a fork's weight without a tenant",
      () => conversations.fork(openId, { at: { beforeTurn: 1 }, tenantWeight: 2 }),
      /tenantWeight: tenantWeight needs a tenant/,
    ],
  ];
  for (const [what, call, names] of cases) {
    test(what, async () => {
      await refused(call, 'invalid_options', names);
    });
  }
});

describe("a message's options against the new conversation's: refused before anything is created", () => {
  const answer = { schema: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] } };
  const cases: [string, Parameters<ConversationClient['submitMessage']>[2], RegExp][] = [
    [
      'an answer in mode tool with thinking on',
      { start: { thinking: { type: 'adaptive' } }, output: { ...answer, mode: 'tool' } },
      /^Invalid message options: output: a typed answer in mode "tool" forces the answer tool/,
    ],
    [
      'a typed answer with the legacy XML protocol',
      { start: { protocol: 'legacy-xml' }, output: answer },
      /^Invalid message options: output: typed answers need protocol "native"/,
    ],
    [
      "an answer tool with the name of one of the conversation's tools",
      { start: { tools: ['get_ticker_symbol'] }, output: { ...answer, mode: 'tool', toolName: 'get_ticker_symbol' } },
      /^Invalid message options: output: the answer tool "get_ticker_symbol" has the name of one of the conversation's tools/,
    ],
  ];
  for (const [what, options, names] of cases) {
    test(`${what}: invalid_options from sendMessage, submitMessage and streamMessage`, async () => {
      const id = `client-calls-conflict-${Date.now()}`;
      await refused(() => conversations.sendMessage(id, 'hi', options), 'invalid_options', names);
      await refused(() => conversations.submitMessage(id, 'hi', options), 'invalid_options', names);
      await refused(() => conversations.streamMessage(id, 'hi', options), 'invalid_options', names);
      await assert.rejects(h.client.workflow.getHandle(id).describe(), { name: 'WorkflowNotFoundError' });
    });
  }

  test('a first message larger than the new conversation may carry is refused, and nothing is created', async () => {
    const id = `client-calls-too-big-${Date.now()}`;
    const options = { start: { limits: { maxCarriedBytes: 10_000 } } };
    await refused(
      () => conversations.submitMessage(id, 'x'.repeat(20_000), options),
      'rejected',
      /over its limit of 10000/,
    );
    await assert.rejects(h.client.workflow.getHandle(id).describe(), { name: 'WorkflowNotFoundError' });
  });

  test("a message whose own options conflict with an open conversation's is invalid_options too, and changes nothing", async () => {
    const before = await conversations.getState(openId);
    await assert.rejects(
      conversations.submitMessage(openId, 'hi', { output: { ...answer, mode: 'tool', toolName: 'get_ticker_symbol' } }),
      (err: unknown) => {
        assert.ok(err instanceof ConversationError, String(err));
        assert.equal(err.code, 'invalid_options', err.message);
        assert.match(err.message, /answer tool "get_ticker_symbol" has the name of one of the conversation's tools/);
        return true;
      },
    );
    assert.equal((await conversations.getState(openId)).turns, before.turns);
  });
});

describe('message calls take one options object: the positional shape of old is refused with what to write', () => {
  // A call written for (id, text, start?, wait?) — plain JavaScript, or a cast — would otherwise half work: the start
  // options read as a message's, the answer format dropped. Each is refused before anything is sent.
  const misplaced: [string, () => unknown, RegExp][] = [
    [
      'sendMessage with the start options where the options go',
      () => conversations.sendMessage(openId, 'hi', { tools: STOCK_TOOLS, system: 'Be brief.' } as never),
      /^Invalid options for sendMessage: options: unknown keys "tools", "system" \(a new conversation's options go in options\.start: sendMessage\(id, text, \{ start: \{ tools, system \} \}\)\)$/,
    ],
    [
      'submitMessage with the start options where the options go',
      () => conversations.submitMessage(openId, 'hi', { model: 'claude-sonnet-5-5' } as never),
      /unknown key "model" \(a new conversation's options go in options\.start: submitMessage\(id, text, \{ start: \{ model \} \}\)\)$/,
    ],
    [
      'streamMessage with the start options where the options go',
      () => conversations.streamMessage(openId, 'hi', { owner: 'alice' } as never),
      /unknown key "owner" \(a new conversation's options go in options\.start/,
    ],
  ];
  const positional: [string, () => unknown, RegExp][] = [
    [
      'sendMessage(id, text, undefined, { output })',
      () => conversations.sendMessage(openId, 'hi', ...([undefined, { output: { schema: {} } }] as never[])),
      /^Invalid arguments for sendMessage: no argument after the options; everything goes in one options object: sendMessage\(id, text, \{ start, output, batch, priority, timeoutMs, updateId \}\)$/,
    ],
    [
      'sendMessage(id, text, start, { timeoutMs })',
      () => conversations.sendMessage(openId, 'hi', ...([{ start: {} }, { timeoutMs: 5 }] as never[])),
      /^Invalid arguments for sendMessage: no argument after the options/,
    ],
    [
      'submitMessage(id, text, undefined, { output })',
      () => conversations.submitMessage(openId, 'hi', ...([undefined, { output: { schema: {} } }] as never[])),
      /^Invalid arguments for submitMessage: .*submitMessage\(id, text, \{ start, output, batch, priority \}\)$/,
    ],
    [
      'streamMessage(id, text, undefined, { signal })',
      () =>
        conversations.streamMessage(
          openId,
          'hi',
          ...([undefined, { signal: new AbortController().signal }] as never[]),
        ),
      /^Invalid arguments for streamMessage: .*streamMessage\(id, text, \{ start, output, batch, priority, signal \}\)$/,
    ],
  ];
  for (const [what, call, names] of [...misplaced, ...positional]) {
    test(what, async () => {
      await refused(call, 'invalid_options', names);
    });
  }

  test('a trailing undefined is no argument: the call goes through', async () => {
    const reply = await conversations.sendMessage(openId, uniquePrompt('Hello again'), ...([{}, undefined] as never[]));
    assert.match(reply.text, /Hello again/);
  });
});

describe('an approval made from the pending approval itself', () => {
  test('{ ...pendingApprovals[0], approve } is accepted: tool, input and requestedAt are dropped', async () => {
    const prompt = uniquePrompt('Buy 2 GM');
    h.mock.script(prompt, [callsTools(['buy_stock', { symbol: 'GM', quantity: 2 }]), says('Not bought.')]);
    const id = `client-calls-approval-${Date.now()}`;
    const reply = conversations.sendMessage(id, prompt, { start: { tools: ['buy_stock'] } });
    const pending = await approvalAskedFor(conversations, id);
    assert.deepEqual(Object.keys(pending).sort(), ['argumentsDigest', 'callId', 'input', 'requestedAt', 'tool']);
    await conversations.approveToolCall(id, { ...pending, approve: false, reason: 'not today' });
    assert.equal((await reply).text, 'Not bought.');
    assert.equal(h.executions(id, 'buy_stock').length, 0);
    await conversations.end(id);
  });
});

describe('the CLI', () => {
  const run = promisify(execFile);
  async function cli(
    ...args: string[]
  ): Promise<{ code: number; json: { error?: { code: string; message: string } } }> {
    const result = await run(
      process.execPath,
      ['--import', 'tsx', join(__dirname, '..', '..', 'client', 'cli.ts'), ...args, '--json'],
      { env: { ...process.env, TEMPORAL_ADDRESS: temporalAddress, TEMPORAL_TASK_QUEUE: h.taskQueue } },
    ).then(
      (r) => ({ code: 0, stdout: r.stdout }),
      (err: { code: number; stdout: string }) => ({ code: err.code, stdout: err.stdout }),
    );
    return { code: result.code, json: JSON.parse(result.stdout) };
  }

  test('any failure, a ConversationError or not, is {error:{code,message}} with --json and one line without', async () => {
    const fails = (env: Record<string, string>, json: boolean) =>
      run(
        process.execPath,
        [
          '--import',
          'tsx',
          join(__dirname, '..', '..', 'client', 'cli.ts'),
          'state',
          'any',
          ...(json ? ['--json'] : []),
        ],
        { env: { ...process.env, TEMPORAL_TASK_QUEUE: h.taskQueue, ...env } },
      ).then(
        () => assert.fail('the CLI exited 0'),
        (err: { code: number; stdout: string; stderr: string }) => err,
      );
    for (const [env, code, message] of [
      // Nothing listens there.
      [{ TEMPORAL_ADDRESS: '127.0.0.1:1' }, 'unavailable', /^Temporal cannot be reached at 127\.0\.0\.1:1: /],
      // Not a ConversationError: thrown where the CLI reads its configuration.
      [{ TEMPORAL_ADDRESS: temporalAddress, PAYLOAD_ENCRYPTION_KEYS: 'nonsense' }, 'internal', /not id:base64key/],
    ] as const) {
      const json = await fails(env, true);
      assert.equal(json.code, 1);
      const { error } = JSON.parse(json.stdout) as { error: { code: string; message: string } };
      assert.equal(error.code, code);
      assert.match(error.message, message);
      const plain = await fails(env, false);
      assert.equal(plain.code, 1);
      assert.equal(plain.stderr, `error (${code}): ${error.message}\n`);
    }
  });

  test('an id with a control character is refused before anything is sent, with the rule it breaks', async () => {
    for (const args of [
      ['send', 'a\u0001b', 'Hello'],
      ['start', '--id', 'tab\there', 'Hello'],
      ['state', 'é'.repeat(501)],
    ]) {
      const { code, json } = await cli(...args);
      assert.equal(code, 1);
      assert.equal(json.error?.code, 'invalid_options');
      assert.match(json.error!.message, /conversation id|options\.id/);
    }
  });
});

test('after all of it nothing escaped to the process, and the conversation and the worker still serve', async () => {
  // A round trip on the same connection: whatever a refused call could have set off has happened by now.
  assert.equal((await conversations.getState(openId)).status, 'awaiting_user');
  await conversations.end(openId);
  await assertWorkerServes(h);
  assert.deepEqual(escaped, [], 'no uncaught exception, no unhandled rejection');
});
