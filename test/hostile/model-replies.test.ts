// Hostile input from the model's side: what comes back from the Messages API endpoint is input too (a proxy or a
// fallback model behind it can send anything). Replies are scripted on the local Messages API server, which sends ids,
// inputs and stop reasons as given and validates every request like the API. For each: the turn recovers or ends
// with a clear status, every request the conversation sends afterwards is one the API accepts, no workflow task
// fails, and the worker keeps serving.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { StartOptions } from '../../client/call-options';
import { GET_TICKER_SYMBOL, STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import type { RecordedRequest, ScriptBlock, ScriptStep } from '../../testing/messages-api/types';
import { activitiesOf, attemptsOf, type Harness, lastUserBlocks, startHarness, uniquePrompt } from '../support/harness';
import { MAX_TOOL_CALL_SUMMARY_CHARS } from '../../common/summaries';
import { stateAwaitingApproval } from '../support/awaiting-approval';
import { assertUnharmed } from '../support/hostile';
import { says } from '../support/script-steps';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

const TICKER = GET_TICKER_SYMBOL.name;
const API_ID = /^[a-zA-Z0-9_-]+$/;

const toolUse = (name: string, input: unknown, id?: unknown): ScriptBlock => ({
  type: 'tool_use',
  name,
  input,
  ...(id !== undefined && { id: id as string }),
});
const asks = (...content: ScriptBlock[]): ScriptStep => ({ reply: { content, stop_reason: 'tool_use' } });

/** One conversation whose first turn the model plays with `steps`. */
async function converse(
  label: string,
  steps: ScriptStep[],
  options: Omit<StartOptions, 'id'> = { tools: STOCK_TOOLS },
) {
  const prompt = uniquePrompt(label);
  h.mock.script(prompt, steps);
  const id = `hostile-reply-${label.replace(/\W+/g, '-')}-${Date.now()}`;
  const reply = await h.conversations.sendMessage(id, prompt, { start: options });
  return { id, prompt, reply, requests: () => h.mock.requestsFor(prompt) };
}

/** The local API (it validates like the real one) answered every request of the conversation. */
function assertAllAccepted(requests: RecordedRequest[]): void {
  assert.ok(requests.length > 0);
  assert.deepEqual(
    requests.map((r) => r.status),
    requests.map(() => 200),
    'every request was accepted',
  );
}

/** The tool_use blocks of the assistant message right before the request's last (user) message. */
function toolUsesSent(request: RecordedRequest): { id: string; name: string; input: unknown }[] {
  const assistant = request.body.messages.at(-2);
  assert.equal(assistant.role, 'assistant');
  return assistant.content.filter((b: { type: string }) => b.type === 'tool_use');
}

describe("tool_use ids the API would refuse become the orchestrator's", () => {
  test('two tool_use blocks with the same id both run, each with its own id and idempotency key', async () => {
    const { id, reply, requests } = await converse('same id twice', [
      asks(
        toolUse(TICKER, { company_name: 'General Motors' }, 'toolu_dup'),
        toolUse(TICKER, { company_name: 'Ford' }, 'toolu_dup'),
      ),
      says('GM and F.'),
    ]);
    assert.equal(reply.text, 'GM and F.');
    assertAllAccepted(requests());
    const second = requests()[1]!;
    const ids = toolUsesSent(second).map((block) => block.id);
    assert.equal(ids[0], 'toolu_dup', 'the first keeps the model id');
    assert.notEqual(ids[1], 'toolu_dup');
    assert.match(ids[1]!, API_ID);
    assert.deepEqual(
      lastUserBlocks(second).map((b) => [b.tool_use_id, b.content]),
      [
        [ids[0], 'GM'],
        [ids[1], 'F'],
      ],
    );
    const keys = h.executions(id, TICKER).filter((e) => e.event === 'finish');
    assert.equal(new Set(keys.map((e) => e.idempotencyKey)).size, 2, 'two calls, two idempotency keys');
    await assertUnharmed(h, id);
  });

  test('an id the model already used in an earlier reply is replaced, so the transcript keeps ids unique', async () => {
    const { id, reply, requests } = await converse('same id in two replies', [
      asks(toolUse(TICKER, { company_name: 'General Motors' }, 'toolu_same')),
      asks(toolUse(TICKER, { company_name: 'Ford' }, 'toolu_same')),
      says('Both found.'),
    ]);
    assert.equal(reply.text, 'Both found.');
    assertAllAccepted(requests());
    const third = requests()[2]!;
    const sent = third.body.messages.flatMap((m: { content: unknown }) =>
      Array.isArray(m.content) ? m.content.filter((b: { type: string }) => b.type === 'tool_use') : [],
    );
    assert.equal(new Set(sent.map((b: { id: string }) => b.id)).size, 2);
    await assertUnharmed(h, id);
  });

  test('a 1,500-character id, odd characters, a lone surrogate, an empty id and a number are all replaced', async () => {
    const ids: unknown[] = [`toolu_${'x'.repeat(1500)}`, 'toolu a.b/c', 'toolu_\ud800', '', 42, 'toolu_\u0000'];
    const { id, reply, requests } = await converse('ids the API refuses', [
      asks(...ids.map((toolId) => toolUse(TICKER, { company_name: 'General Motors' }, toolId))),
      says('Found it.'),
    ]);
    assert.equal(reply.text, 'Found it.');
    assert.equal(reply.toolCalls, ids.length);
    assertAllAccepted(requests());
    const second = requests()[1]!;
    const sent = toolUsesSent(second).map((block) => block.id);
    assert.equal(sent.length, ids.length);
    for (const sentId of sent) assert.match(sentId, API_ID);
    assert.equal(new Set(sent).size, ids.length);
    assert.deepEqual(
      lastUserBlocks(second).map((b) => [b.tool_use_id, b.content]),
      sent.map((sentId) => [sentId, 'GM']),
    );
    await assertUnharmed(h, id);
  });

  test('calls that need approval and share an id each wait for their own approval', async () => {
    const prompt = uniquePrompt('buy twice, one id');
    h.mock.script(prompt, [
      asks(
        toolUse('buy_stock', { symbol: 'GM', quantity: 1 }, 'toolu_buy'),
        toolUse('buy_stock', { symbol: 'F', quantity: 2 }, 'toolu_buy'),
      ),
      says('Both bought.'),
    ]);
    const id = `hostile-reply-approvals-${Date.now()}`;
    const reply = h.conversations.sendMessage(id, prompt, { start: { tools: ['buy_stock'] } });
    const pending = (await stateAwaitingApproval(h.conversations, id, { approvals: 2 })).pendingApprovals;
    assert.equal(new Set(pending.map((p) => p.callId)).size, 2);
    for (const { callId, argumentsDigest } of pending) {
      await h.conversations.approveToolCall(id, { callId, argumentsDigest, approve: true });
    }
    assert.equal((await reply).text, 'Both bought.');
    const orders = h.executions(id, 'buy_stock').filter((e) => e.event === 'finish');
    assert.equal(orders.length, 2);
    assert.equal(new Set(orders.map((e) => e.idempotencyKey)).size, 2, 'two orders, two idempotency keys');
    assertAllAccepted(h.mock.requestsFor(prompt));
    await assertUnharmed(h, id);
  });
});

describe('tool inputs that are not what a tool can take', () => {
  // (A bare number the SDK itself cannot read: the call fails and is retried, like any unreadable stream.)
  test('a string, null or an array is answered with an error; the transcript holds {}', async () => {
    const inputs = ['General Motors', null, ['General Motors']];
    const { id, reply, requests } = await converse('inputs that are not objects', [
      asks(...inputs.map((input, i) => toolUse(TICKER, input, `toolu_in${i}`))),
      says('Recovered.'),
    ]);
    assert.equal(reply.text, 'Recovered.');
    assertAllAccepted(requests());
    const second = requests()[1]!;
    assert.deepEqual(
      toolUsesSent(second).map((block) => block.input),
      inputs.map(() => ({})),
    );
    for (const result of lastUserBlocks(second)) {
      assert.equal(result.is_error, true);
      assert.equal(result.content, `Malformed tool call: the input of ${TICKER} must be a JSON object`);
    }
    assert.equal(h.executions(id).length, 0, 'no tool ran');
    await assertUnharmed(h, id);
  });

  test('an input nested 10,000 levels deep is answered with an error, and the reply is recorded', async () => {
    const depth = 10_000;
    const deep = `{"company_name":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`;
    const { id, reply, requests } = await converse('input 10,000 deep', [
      asks({ type: 'tool_use', name: TICKER, inputJson: deep, id: 'toolu_deep' }),
      says('Recovered.'),
    ]);
    assert.equal(reply.text, 'Recovered.');
    assertAllAccepted(requests());
    const second = requests()[1]!;
    assert.deepEqual(toolUsesSent(second), [{ type: 'tool_use', id: 'toolu_deep', name: TICKER, input: {} }]);
    const [result] = lastUserBlocks(second);
    assert.equal(result!.is_error, true);
    assert.match(result!.content!, /nests deeper than 64 levels/);
    await assertUnharmed(h, id);
  });

  test('a call of a tool nobody offered, or by a name no tool can have, is answered with an error', async () => {
    const { id, reply, requests } = await converse('unknown tools', [
      asks(
        toolUse('launch_rockets', { count: 3 }, 'toolu_u1'),
        toolUse('get ticker/symbol', { company_name: 'GM' }, 'toolu_u2'),
        toolUse('n'.repeat(5_000), {}, 'toolu_u3'),
      ),
      says('Recovered.'),
    ]);
    assert.equal(reply.text, 'Recovered.');
    assertAllAccepted(requests());
    const second = requests()[1]!;
    const results = lastUserBlocks(second);
    assert.match(results[0]!.content!, /^Unknown tool "launch_rockets"\. Available tools: get_ticker_symbol/);
    for (const result of results.slice(1)) {
      assert.equal(result.is_error, true);
      assert.match(result.content!, /the tool name is not one a tool can have/);
      assert.ok(result.content!.length < 300, 'the name is not repeated back');
    }
    await assertUnharmed(h, id);
  });

  test("a call with 500 arguments runs, its activity's summary one short line", async () => {
    const input = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`argument_${i}`, 'é'.repeat(80)]));
    const { id, reply } = await converse('500 arguments', [
      asks(toolUse(TICKER, { company_name: 'General Motors', ...input }, 'toolu_many')),
      says('Recovered.'),
    ]);
    assert.equal(reply.text, 'Recovered.');
    const ticker = (await activitiesOf(h.client, id)).find((activity) => activity.type === TICKER);
    assert.ok(ticker!.summary!.length <= MAX_TOOL_CALL_SUMMARY_CHARS, `${ticker!.summary!.length} characters`);
    await assertUnharmed(h, id);
  });
});

describe('replies with nothing usable, or an unknown stop reason', () => {
  test('no content at all with stop_reason tool_use ends the turn; the next message goes through', async () => {
    const { id, reply, requests } = await converse('empty reply', [
      { reply: { content: [], stop_reason: 'tool_use' } },
      says('Here now.'),
    ]);
    assert.equal(reply.status, 'awaiting_user');
    assert.equal(reply.text, '');
    const next = await h.conversations.sendMessage(id, 'Still there?');
    assert.equal(next.text, 'Here now.');
    assertAllAccepted(requests());
    const assistant = requests()[1]!.body.messages.at(-2);
    assert.equal(assistant.role, 'assistant');
    assert.ok(assistant.content.length > 0, 'the empty reply takes its place with content the API accepts');
    await assertUnharmed(h, id);
  });

  test('empty and blank text blocks and blocks of unknown types are left out of the transcript', async () => {
    const { id, reply, requests } = await converse('blank blocks', [
      {
        reply: {
          content: [
            { type: 'text', text: '' },
            { type: 'text', text: ' \n ' },
            toolUse(TICKER, { company_name: 'General Motors' }, 'toolu_blank'),
          ],
          stop_reason: 'tool_use',
        },
      },
      says('GM.'),
    ]);
    assert.equal(reply.text, 'GM.');
    assertAllAccepted(requests());
    assert.deepEqual(
      requests()[1]!
        .body.messages.at(-2)
        .content.map((b: { type: string }) => b.type),
      ['tool_use'],
    );
    await assertUnharmed(h, id);
  });

  for (const stopReason of ['banana', null, 'x'.repeat(10_000)]) {
    test(`stop_reason ${JSON.stringify(stopReason).slice(0, 20)} ends the turn with no stop reason`, async () => {
      const { id, reply, requests } = await converse(`stop reason ${String(stopReason).slice(0, 10)}`, [
        { reply: { content: [{ type: 'text', text: 'An answer.' }], stop_reason: stopReason } },
        says('Next answer.'),
      ]);
      assert.equal(reply.status, 'awaiting_user');
      assert.equal(reply.text, 'An answer.');
      assert.equal(reply.stopReason, null);
      assert.equal((await h.conversations.sendMessage(id, 'And then?')).text, 'Next answer.');
      assertAllAccepted(requests());
      await assertUnharmed(h, id);
    });
  }

  test('legacy XML: a reply with no text ends the turn; the next message goes through', async () => {
    const { id, reply, requests } = await converse(
      'legacy empty reply',
      [{ reply: { content: [{ type: 'text', text: ' ' }], stop_reason: 'end_turn' } }, says('Here now.')],
      { tools: STOCK_TOOLS, protocol: 'legacy-xml' },
    );
    assert.equal(reply.status, 'awaiting_user');
    assert.equal((await h.conversations.sendMessage(id, 'Still there?')).text, 'Here now.');
    assertAllAccepted(requests());
    await assertUnharmed(h, id);
  });
});

describe('server tool blocks out of place (a proxy or a fallback model can send any)', () => {
  const search = (id: string): ScriptBlock => ({
    type: 'server_tool_use',
    id,
    name: 'web_search',
    input: { query: 'GM' },
  });
  const searched = (id: string): ScriptBlock => ({ type: 'web_search_tool_result', tool_use_id: id, content: [] });
  const typesSent = (request: RecordedRequest | undefined) =>
    (request?.body.messages.at(-2)?.content ?? []).map((b: { type: string }) => b.type);

  test('results that answer no call, a result before its call, calls never answered: none reach the API again', async () => {
    const { id, reply, requests } = await converse(
      'stray server blocks',
      [
        {
          reply: {
            content: [
              searched('srvtoolu_01nobody'),
              searched('srvtoolu_01early'),
              search('srvtoolu_01early'),
              search('srvtoolu_01ok'),
              searched('srvtoolu_01ok'),
              search('srvtoolu_01never'),
              search('srvtoolu_01never'),
              { type: 'text', text: 'GM.' },
            ],
            stop_reason: 'end_turn',
          },
        },
        says('Ford.'),
      ],
      { tools: [], serverTools: { webSearch: {} } },
    );
    assert.equal(reply.text, 'GM.');
    assert.equal((await h.conversations.sendMessage(id, 'And Ford?')).text, 'Ford.');
    assertAllAccepted(requests());
    assert.deepEqual(typesSent(requests()[1]), ['server_tool_use', 'web_search_tool_result', 'text']);
    await assertUnharmed(h, id);
  });

  test('a paused reply of stray results and open calls, then a stop reason nobody defined: the next message goes through', async () => {
    const { id, reply, requests } = await converse(
      'stray paused',
      [
        { reply: { content: [searched('srvtoolu_01stray'), search('srvtoolu_01open')], stop_reason: 'pause_turn' } },
        { reply: { content: [{ type: 'text', text: 'Hm.' }], stop_reason: 'banana' } },
        says('Ford.'),
      ],
      { tools: [], serverTools: { webSearch: {} } },
    );
    assert.equal(reply.text, 'Hm.');
    assert.equal((await h.conversations.sendMessage(id, 'And Ford?')).text, 'Ford.');
    assertAllAccepted(requests());
    assert.deepEqual(typesSent(requests()[2]), ['text'], 'the paused turn and its continuation, closed');
    await assertUnharmed(h, id);
  });
});

describe('error replies', () => {
  test('an error whose message is 3 MiB with a lone surrogate fails the turn with a short, well-formed message', async () => {
    const prompt = uniquePrompt('huge error');
    h.mock.script(prompt, [{ fault: 'status', status: 400, message: `bad \ud800 ${'x'.repeat(3 * 2 ** 20)}` }]);
    const id = `hostile-reply-huge-error-${Date.now()}`;
    const error = await h.conversations.sendMessage(id, prompt, { start: { tools: STOCK_TOOLS } }).then(
      () => assert.fail('expected the turn to fail'),
      (err: Error & { code?: string }) => err,
    );
    assert.equal(error.code, 'turn_failed');
    assert.ok(error.message.length < 5_000, `a short message (${error.message.length} characters)`);
    assert.doesNotMatch(error.message, /[\ud800-\udbff](?![\udc00-\udfff])/);
    // Refused at once: the failure was reported, not lost to a heartbeat timeout and retried.
    assert.deepEqual(
      (await attemptsOf(h.client, id)).map((a) => [a.type, a.attempt]),
      [['callModel', 1]],
    );
    await assertUnharmed(h, id);
  });
});
