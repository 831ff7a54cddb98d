// Typed answers end to end: a turn asks for its answer as data matching a zod schema, through the API's structured
// outputs (`native`) or an answer tool (`tool`); the worker checks it (a local activity the history records), a wrong
// one goes back once, and the turn fails with `invalid_output` when the second is wrong too. Real dev server, real
// worker, the real SDK against the local Messages API, which validates `output_config` like the real API.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Worker } from '@temporalio/worker';
import { z } from 'zod';
import { ConversationError } from '../../client/errors';
import { INVALID_OUTPUT } from '../../common/conversation-types';
import { sendMessageUpdate } from '../../common/workflow-messages';
import { STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import type { RecordedRequest } from '../../testing/messages-api/types';
import { type Harness, lastUserBlocks, startHarness, uniquePrompt } from '../support/harness';
import { TAGGED_UNION_SCHEMA, taggedItems } from '../support/tagged-union-schema';
import { answersJson, answersWithTool } from '../support/script-steps';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

const Quote = z.object({
  symbol: z.string(),
  price: z.number().positive(),
  currency: z.enum(['USD', 'EUR']),
});
const GOOD = { symbol: 'GM', price: 38.5, currency: 'USD' };
const BAD = { symbol: 'GM', price: -38.5, currency: 'USD' };
const STOCK = 'What is the current stock price of General Motors?';

/** The text of a request's last (user) message; its blocks carry a cache breakpoint. */
const lastUserText = (request: RecordedRequest): string =>
  lastUserBlocks(request)
    .map((block) => (block.type === 'text' ? (block as unknown as { text: string }).text : ''))
    .join('');

async function rejection(promise: Promise<unknown>): Promise<ConversationError> {
  const error = await promise.then(
    () => assert.fail('it was answered'),
    (err: unknown) => err,
  );
  assert.ok(error instanceof ConversationError, String(error));
  return error;
}

describe('native: the API’s structured outputs', () => {
  test('the ticker → price chain, then the answer as typed data', async () => {
    const prompt = uniquePrompt(STOCK);
    // The demo model runs the chain; the last reply, JSON text, is scripted.
    h.mock.script(prompt, [{ demo: true }, { demo: true }, answersJson(GOOD)]);
    const reply = await h.conversations.sendMessage(`typed-native-${Date.now()}`, prompt, {
      start: { tools: STOCK_TOOLS },
      output: { schema: Quote },
    });
    assert.deepEqual(reply.output, GOOD);
    const price: number = reply.output.price; // typed by the schema
    assert.equal(price, 38.5);
    assert.equal(reply.text, JSON.stringify(GOOD));
    assert.equal(reply.toolCalls, 2);
    assert.equal(reply.modelCalls, 3);
    const requests = h.mock.requestsFor(prompt);
    for (const request of requests) {
      assert.equal(request.status, 200);
      assert.equal(request.body.output_config.format.type, 'json_schema');
      assert.equal(request.body.output_config.format.schema.additionalProperties, false);
      assert.deepEqual(
        request.body.tools.map((t: { name: string }) => t.name),
        STOCK_TOOLS,
      );
    }
  });

  test('a wrong first answer goes back with what is wrong, and the corrected one is taken', async () => {
    const prompt = uniquePrompt('Quote GM as data.');
    h.mock.script(prompt, [answersJson(BAD), answersJson(GOOD)]);
    const reply = await h.conversations.sendMessage(`typed-native-fix-${Date.now()}`, prompt, {
      start: {},
      output: { schema: Quote },
    });
    assert.deepEqual(reply.output, GOOD);
    assert.equal(reply.modelCalls, 2);
    const [, second] = h.mock.requestsFor(prompt);
    assert.match(lastUserText(second!), /does not match the required schema: price: Too small/);
  });

  test('a second wrong answer fails the turn with invalid_output; the conversation goes on from before it', async () => {
    const prompt = uniquePrompt('Quote GM as data, badly.');
    const id = `typed-native-bad-${Date.now()}`;
    h.mock.script(prompt, [answersJson(BAD), answersJson({ symbol: 'GM' })]);
    const error = await rejection(
      h.conversations.sendMessage(id, prompt, {
        start: { timeouts: { idle: '10 minutes' } },
        output: { schema: Quote },
      }),
    );
    assert.equal(error.code, 'turn_failed');
    assert.equal(error.failureType, INVALID_OUTPUT);
    assert.match(error.message, /after 2 attempts: .*price/);
    assert.equal(h.mock.requestsFor(prompt).length, 2);

    const state = await h.conversations.getState(id);
    assert.equal(state.status, 'awaiting_user');
    assert.deepEqual(await h.conversations.getTranscript(id), [], "the failed turn's messages are gone");
    const next = await h.conversations.sendMessage(id, 'Just say hello.');
    assert.equal(next.output, undefined, 'a plain turn after it');
    await h.conversations.end(id);
  });
});

describe('tool: the answer tool', () => {
  test('the ticker → price chain, then final_answer; tool_choice `any` on every call', async () => {
    const prompt = uniquePrompt(STOCK);
    const id = `typed-tool-${Date.now()}`;
    h.mock.script(prompt, [{ demo: true }, { demo: true }, answersWithTool(GOOD)]);
    const reply = await h.conversations.sendMessage(id, prompt, {
      start: { tools: STOCK_TOOLS, timeouts: { idle: '10 minutes' } },
      output: { schema: Quote, mode: 'tool' },
    });
    assert.deepEqual(reply.output, GOOD);
    assert.equal(reply.toolCalls, 2, 'the answer is not a tool call');
    const requests = h.mock.requestsFor(prompt);
    assert.equal(requests.length, 3);
    for (const request of requests) {
      assert.deepEqual(request.body.tool_choice, { type: 'any' });
      assert.deepEqual(
        request.body.tools.map((t: { name: string }) => t.name),
        [...STOCK_TOOLS, 'final_answer'],
      );
      assert.equal(request.body.output_config, undefined);
    }

    // The answer's tool_use got its tool_result; the next message joins it, and the API takes the transcript.
    const transcript = await h.conversations.getTranscript(id);
    assert.deepEqual(transcript.at(-1), {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: (transcript.at(-2)!.content as { id: string }[])[0]!.id,
          content: 'Answer received.',
        },
      ],
    });
    const next = await h.conversations.sendMessage(id, 'Thanks! And in one word?');
    assert.equal(next.status, 'awaiting_user');
    const last = h.mock.requestsFor(prompt).at(-1)!;
    assert.equal(last.status, 200);
    assert.deepEqual(
      lastUserBlocks(last).map((block) => block.type),
      ['tool_result', 'text'],
    );
    assert.equal(last.body.tool_choice, undefined, 'a plain turn offers no answer tool');
    await h.conversations.end(id);
  });

  test('a wrong first answer gets an error tool_result and the answer tool forced; the fix is taken', async () => {
    const prompt = uniquePrompt('Quote GM through the tool.');
    h.mock.script(prompt, [answersWithTool(BAD), answersWithTool(GOOD)]);
    const reply = await h.conversations.sendMessage(`typed-tool-fix-${Date.now()}`, prompt, {
      start: {},
      output: { schema: Quote, mode: 'tool' },
    });
    assert.deepEqual(reply.output, GOOD);
    const [first, second] = h.mock.requestsFor(prompt);
    assert.deepEqual(first!.body.tool_choice, { type: 'any' });
    assert.deepEqual(second!.body.tool_choice, { type: 'tool', name: 'final_answer' });
    const [result] = lastUserBlocks(second!);
    assert.equal(result!.is_error, true);
    assert.match(String(result!.content), /price: Too small.*Call final_answer again/);
  });

  test('an answer given together with another tool call is sent back unchecked; that call runs', async () => {
    const prompt = uniquePrompt('Quote GM, all at once.');
    h.mock.script(prompt, [
      {
        reply: {
          content: [
            { type: 'tool_use', name: 'get_ticker_symbol', input: { company_name: 'General Motors' } },
            { type: 'tool_use', name: 'final_answer', input: GOOD },
          ],
          stop_reason: 'tool_use',
        },
      },
      answersWithTool(BAD), // had the early answer counted, this second wrong one would fail the turn
      answersWithTool(GOOD),
    ]);
    const reply = await h.conversations.sendMessage(`typed-tool-early-${Date.now()}`, prompt, {
      start: { tools: STOCK_TOOLS },
      output: { schema: Quote, mode: 'tool' },
    });
    assert.deepEqual(reply.output, GOOD);
    assert.equal(reply.toolCalls, 1);
    const [, second] = h.mock.requestsFor(prompt);
    assert.deepEqual(
      lastUserBlocks(second!).map((block) => [block.content, block.is_error ?? false]),
      [
        ['GM', false],
        ['final_answer was called together with other tools; call it on its own once you have their results.', true],
      ],
    );
  });

  test('an answer given together with more tool calls than the turn allows stops the turn; none of them runs', async () => {
    const prompt = uniquePrompt('Quote everything at once.');
    const ticker = (company_name: string) => ({
      type: 'tool_use' as const,
      name: 'get_ticker_symbol',
      input: { company_name },
    });
    h.mock.script(prompt, [
      {
        reply: {
          content: [
            ticker('General Motors'),
            ticker('Ford'),
            ticker('Tesla'),
            { type: 'tool_use', name: 'final_answer', input: GOOD },
          ],
          stop_reason: 'tool_use',
        },
      },
    ]);
    const id = `typed-tool-limit-${Date.now()}`;
    const error = await rejection(
      h.conversations.sendMessage(id, prompt, {
        start: { tools: STOCK_TOOLS, limits: { maxToolCallsPerTurn: 2 } },
        output: { schema: Quote, mode: 'tool' },
      }),
    );
    assert.equal(error.code, 'turn_failed');
    assert.equal(error.failureType, 'limit_reached', 'no answer came: the turn ended on the limit');
    assert.equal(
      error.message,
      'The turn ended limit_reached without an answer: Stopped: the model asked for more than 2 tool calls in one turn.',
    );
    assert.equal(h.executions(id).length, 0);
  });

  test('a reply without the answer tool counts as a wrong answer; a second wrong one fails the turn', async () => {
    const prompt = uniquePrompt('Quote GM, chattily.');
    const id = `typed-tool-bad-${Date.now()}`;
    h.mock.script(prompt, [
      { reply: { content: [{ type: 'text', text: 'GM is at 38.50.' }], stop_reason: 'end_turn' } },
      answersWithTool({ symbol: 'GM', price: '38.50', currency: 'USD' }),
    ]);
    const error = await rejection(
      h.conversations.sendMessage(id, prompt, {
        start: { timeouts: { idle: '10 minutes' } },
        output: { schema: Quote, mode: 'tool' },
      }),
    );
    assert.equal(error.failureType, INVALID_OUTPUT);
    assert.match(error.message, /price/);
    const [, second] = h.mock.requestsFor(prompt);
    assert.match(lastUserText(second!), /Give your final answer by calling final_answer/);
    assert.deepEqual(second!.body.tool_choice, { type: 'tool', name: 'final_answer' });
    assert.deepEqual(await h.conversations.getTranscript(id), []);
    await h.conversations.end(id);
  });
});

describe('the demo model, unscripted', () => {
  for (const mode of ['native', 'tool'] as const) {
    test(`${mode}: runs the chain and answers with the data the tools returned`, async () => {
      const prompt = uniquePrompt(STOCK);
      const reply = await h.conversations.sendMessage(`typed-demo-${mode}-${Date.now()}`, prompt, {
        start: { tools: STOCK_TOOLS, closeAfterFirstReply: true },
        output: { schema: Quote, mode },
      });
      assert.deepEqual(reply.output, GOOD);
      assert.equal(reply.toolCalls, 2);
      assert.equal(reply.modelCalls, 3);
    });
  }
});

describe('streamed', () => {
  test('streamMessage with a schema: the turn_finished event carries the checked answer', async () => {
    const prompt = uniquePrompt(STOCK);
    h.mock.script(prompt, [{ demo: true }, { demo: true }, answersJson(GOOD)]);
    const types: string[] = [];
    let finished: unknown;
    for await (const { event } of h.conversations.streamMessage(`typed-stream-${Date.now()}`, prompt, {
      start: { tools: STOCK_TOOLS, closeAfterFirstReply: true },
      output: { schema: Quote },
    })) {
      types.push(event.type);
      if (event.type === 'turn_finished') finished = event.output;
    }
    assert.deepEqual(Quote.parse(finished), GOOD);
    assert.equal(types.filter((type) => type === 'tool_result').length, 2, types.join(', '));
    const [first] = h.mock.requestsFor(prompt);
    assert.equal(first!.body.output_config.format.type, 'json_schema', 'the message asked for structured output');
  });
});

describe('a typed answer for the whole conversation', () => {
  test('every turn answers with data; the value is checked JSON the caller can parse with its schema', async () => {
    const prompt = uniquePrompt('Quote GM for the whole conversation.');
    h.mock.script(prompt, [answersJson(GOOD), answersJson({ ...GOOD, price: 39 })]);
    const id = await h.conversations.startConversation({
      output: { schema: Quote },
      timeouts: { idle: '10 minutes' },
    });
    const first = await h.conversations.sendMessage(id, prompt);
    assert.deepEqual(Quote.parse(first.output), GOOD);
    const second = await h.conversations.sendMessage(id, 'And now?');
    assert.equal(Quote.parse(second.output).price, 39);
    await h.conversations.end(id);
  });
});

describe('patterns', () => {
  // Patterns run on RE2 (linear time): they still accept what matches and refuse what does not.
  const Ticker = z.object({ symbol: z.string().regex(/^[A-Z]{1,5}$/), price: z.number() });

  test('native: a symbol that does not match goes back with the pattern; the matching one is taken', async () => {
    const prompt = uniquePrompt('Quote GM with its ticker.');
    h.mock.script(prompt, [
      answersJson({ symbol: 'general motors', price: 38.5 }),
      answersJson({ symbol: 'GM', price: 38.5 }),
    ]);
    const reply = await h.conversations.sendMessage(`typed-pattern-${Date.now()}`, prompt, {
      start: {},
      output: { schema: Ticker },
    });
    assert.deepEqual(reply.output, { symbol: 'GM', price: 38.5 });
    const [, second] = h.mock.requestsFor(prompt);
    assert.match(lastUserText(second!), /symbol: Invalid string: must match pattern \/\^\[A-Z\]\{1,5\}\$\//);
  });

  test('tool: a second answer that does not match fails the turn with invalid_output', async () => {
    const prompt = uniquePrompt('Quote GM with its ticker, badly.');
    h.mock.script(prompt, [
      answersWithTool({ symbol: 'gm', price: 1 }),
      answersWithTool({ symbol: 'TOOLONG', price: 1 }),
    ]);
    const error = await rejection(
      h.conversations.sendMessage(`typed-pattern-bad-${Date.now()}`, prompt, {
        start: {},
        output: { schema: Ticker, mode: 'tool' },
      }),
    );
    assert.equal(error.failureType, INVALID_OUTPUT);
    assert.match(error.message, /after 2 attempts: symbol: Invalid string: must match pattern/);
  });
});

describe('bad input', () => {
  test('a schema without a JSON Schema form, or not an object, is invalid_options before anything starts', async () => {
    const id = `typed-bad-schema-${Date.now()}`;
    const noForm = await rejection(
      h.conversations.sendMessage(id, 'Hi', { start: {}, output: { schema: z.object({ at: z.date() }) } }),
    );
    assert.equal(noForm.code, 'invalid_options');
    assert.match(noForm.message, /Invalid answer schema: it has no JSON Schema form/);
    const notObject = await rejection(
      h.conversations.startConversation({ id, output: { schema: z.array(z.string()) } }),
    );
    assert.match(notObject.message, /must describe an object/);
    const legacy = await rejection(
      h.conversations.startConversation({ id, protocol: 'legacy-xml', output: { schema: Quote } }),
    );
    assert.equal(legacy.code, 'invalid_options');
    assert.match(legacy.message, /output: typed answers need protocol "native"/);
    await assert.rejects(h.client.workflow.getHandle(id).describe(), /not found/i, 'nothing was started');
  });

  test('a bad output sent past the client (a raw update) is rejected by the workflow; the conversation goes on', async () => {
    const id = await h.conversations.startConversation({ protocol: 'legacy-xml', timeouts: { idle: '10 minutes' } });
    const handle = h.client.workflow.getHandle(id);
    await assert.rejects(
      handle.executeUpdate(sendMessageUpdate, { args: ['Hi', { output: { schema: 'not a schema' } as never }] }),
      (err: Error) => /Invalid message options: output.schema/.test(String((err as { cause?: Error }).cause?.message)),
    );
    await assert.rejects(
      handle.executeUpdate(sendMessageUpdate, { args: ['Hi', { output: { schema: z.toJSONSchema(Quote) } as never }] }),
      (err: Error) => /protocol "native"/.test(String((err as { cause?: Error }).cause?.message)),
    );
    assert.equal((await h.conversations.getState(id)).status, 'awaiting_user');
    await h.conversations.end(id);
  });
});

describe('where an answer is checked: a local activity, its verdict recorded in the history', () => {
  /** The local activities the history recorded, by type, in order (the verdicts replay reads). */
  async function localActivities(id: string): Promise<string[]> {
    const history = await h.client.workflow.getHandle(id).fetchHistory();
    const converter = h.client.options.loadedDataConverter.payloadConverter;
    return (history.events ?? []).flatMap((event) => {
      const marker = event.markerRecordedEventAttributes;
      const data = marker?.details?.['data']?.payloads?.[0];
      if (marker?.markerName !== 'core_local_activity' || !data) return [];
      return [(converter.fromPayload(data) as { activity_type: string }).activity_type];
    });
  }
  test('a right answer that costs more to check than workflow code may spend (400,000 units) is taken', async () => {
    const prompt = uniquePrompt('List the items, tagged.');
    const answer = taggedItems(16_000, 11);
    h.mock.script(prompt, [answersJson(answer)]);
    const id = `typed-costly-${Date.now()}`;
    const reply = await h.conversations.sendMessage(id, prompt, {
      start: { timeouts: { idle: '10 minutes' } },
      output: { schema: TAGGED_UNION_SCHEMA },
    });
    assert.deepEqual(reply.output, answer);
    assert.equal(reply.modelCalls, 1, 'taken at once, not sent back');
    assert.deepEqual(
      (await localActivities(id)).filter((type) => type === 'checkTypedAnswer'),
      ['checkTypedAnswer'],
      'one check, recorded',
    );
    await h.conversations.end(id);
  });

  test('each answer is one recorded check; a value the check completes (a default) is the one taken', async () => {
    const prompt = uniquePrompt('Quote GM, currency optional.');
    const schema = {
      type: 'object',
      properties: { symbol: { type: 'string' }, price: { type: 'number', minimum: 0 }, currency: { default: 'USD' } },
      required: ['symbol', 'price'],
    };
    h.mock.script(prompt, [
      answersWithTool({ symbol: 'GM', price: -1 }),
      answersWithTool({ symbol: 'GM', price: 38.5 }),
    ]);
    const id = `typed-recorded-${Date.now()}`;
    const reply = await h.conversations.sendMessage(id, prompt, {
      start: { timeouts: { idle: '10 minutes' } },
      output: { schema, mode: 'tool' },
    });
    assert.deepEqual(reply.output, { symbol: 'GM', price: 38.5, currency: 'USD' });
    assert.deepEqual(
      (await localActivities(id)).filter((type) => type === 'checkTypedAnswer'),
      ['checkTypedAnswer', 'checkTypedAnswer'],
      'the wrong answer and the right one',
    );
    await h.conversations.end(id);
  });
});

describe('durability', () => {
  test('a typed turn carries its schema and its correction across continue-as-new, and its history replays', async () => {
    const prompt = uniquePrompt('Quote GM across runs.');
    const id = `typed-can-${Date.now()}`;
    h.mock.script(prompt, [answersWithTool(BAD), answersWithTool(GOOD)]);
    const submitted = await h.conversations.submitMessage(id, prompt, {
      start: {
        continueAsNewAfterModelCalls: 1,
        timeouts: { idle: '10 minutes' },
        output: { schema: Quote, mode: 'tool' },
      },
    });
    const reply = await h.conversations.awaitTurn(id, submitted.turn);
    assert.deepEqual(Quote.parse(reply.output), GOOD);
    const [, second] = h.mock.requestsFor(prompt);
    assert.deepEqual(second!.body.tool_choice, { type: 'tool', name: 'final_answer' }, 'the next run still forces it');
    const runs = (await h.conversations.getState(id)).runs;
    assert.ok(runs > 1, 'it did continue as new');

    // The typed answer reaches readers of the event stream too.
    const finished = [];
    for await (const { event } of h.conversations.events(id, { fromOffset: 0 })) {
      if (event.type === 'turn_finished') finished.push(event);
      if (event.type === 'turn_finished' || event.type === 'turn_failed') break;
    }
    assert.deepEqual(finished.at(-1)?.output, GOOD);
    await h.conversations.end(id);
    await h.conversations.waitForResult(id);
    const replayOptions = process.env.WORKFLOW_BUNDLE_PATH
      ? { workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH } }
      : { workflowsPath: require.resolve('../../workflows') };
    // Every run: the one that began the turn, the one that corrected it, and the rest.
    let histories: { workflowId: string; history: unknown }[] = [];
    for (let tries = 0; tries < 50 && histories.length < runs; tries++) {
      histories = [];
      for await (const history of h.client.workflow.list({ query: `WorkflowId = "${id}"` }).intoHistories()) {
        histories.push(history);
      }
      if (histories.length < runs) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.ok(histories.length >= runs, `${histories.length} runs listed, ${runs} before the end`);
    for (const { history } of histories) {
      await Worker.runReplayHistory(replayOptions, history as Parameters<typeof Worker.runReplayHistory>[1]);
    }
  });
});
