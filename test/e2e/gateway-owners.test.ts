// Owners in the HTTP gateway (issue 22, item 3): tokens map to principals; a conversation records the principal that
// started it (the ConversationOwner search attribute); another principal gets exactly the 404 a conversation that does
// not exist gets, on every route; each principal's list holds its own; an admin reads and lists every one. A real
// gateway over a real worker and Temporal dev server.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { ConversationOwner } from '../../common/search-attributes';
import type { GatewayToken } from '../../gateway/gateway-config';
import { type Gateway, startGateway } from '../../gateway/gateway-server';
import { STOCK_QUESTION, STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import { type Harness, namespace, startHarness, uniquePrompt } from '../support/harness';
import { waitUntil } from '../support/wait-until';

const ALICE = `alice-token-${randomUUID()}`;
const BOB = `bob-token-${randomUUID()}`;
const OPS = `ops-token-${randomUUID()}`;
const LEGACY = `legacy-token-${randomUUID()}`;
const TOKENS: GatewayToken[] = [
  { token: ALICE, principal: 'alice', admin: false },
  { token: BOB, principal: 'bob', admin: false },
  { token: OPS, principal: 'ops', admin: true },
];
/** Visibility (lists) is eventually consistent: how long a list may take to show a new conversation. */
const LIST_WAIT = { timeoutMs: 30_000, everyMs: 250 };
/** How long a turn may take to get where a test waits for it. */
const TURN_WAIT = { timeoutMs: 60_000, everyMs: 250 };

let h: Harness;
let gateway: Gateway;
/** GATEWAY_TOKEN alone, as before principals: principal "default", an admin. */
let legacy: Gateway;
before(async () => {
  h = await startHarness();
  gateway = await startGateway({ conversations: h.conversations, tokens: TOKENS, namespace });
  legacy = await startGateway({ conversations: h.conversations, token: LEGACY, namespace });
});
after(async () => {
  await gateway?.close();
  await legacy?.close();
  await h?.close();
});

interface Answer {
  status: number;
  body: unknown;
}

/** One call as `token`; a JSON body when given. The answer's body parsed (an event stream: its head only). */
async function as(
  token: string,
  method: string,
  path: string,
  body?: unknown,
  on: Gateway = gateway,
): Promise<Answer & { response: Response }> {
  const response = await fetch(`${on.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
    await response.body?.cancel();
    return { status: response.status, body: undefined, response };
  }
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : (JSON.parse(text) as unknown), response };
}

/** The answer for a conversation that does not exist: what another principal must get, byte for byte but the id. */
function missing(id: string) {
  return { error: { code: 'not_found', message: `No open conversation "${id}".` } };
}

async function startAs(token: string, body: unknown = {}): Promise<string> {
  const started = await as(token, 'POST', '/api/conversations', body);
  assert.equal(started.status, 201, JSON.stringify(started.body));
  return (started.body as { id: string }).id;
}

async function stateAs(token: string, id: string) {
  const answer = await as(token, 'GET', `/api/conversations/${id}`);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body as {
    status: string;
    runs: number;
    turns: number;
    pendingApprovals: { callId: string; argumentsDigest: string }[];
  };
}

interface Listed {
  id: string;
  /** Absent for a conversation without an owner. */
  owner?: string;
}
async function listAs(token: string, query = '', on: Gateway = gateway): Promise<Listed[]> {
  const answer = await as(token, 'GET', `/api/conversations${query}`, undefined, on);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return (answer.body as { conversations: Listed[] }).conversations;
}
/** Polls a list until `ids` all show in it; returns the last list. */
async function listShowing(token: string, ids: string[], query = '', on: Gateway = gateway): Promise<Listed[]> {
  return waitUntil(
    `${ids.join(', ')} in the list${query}`,
    async () => {
      const listed = await listAs(token, query, on);
      return ids.every((id) => listed.some((c) => c.id === id)) ? listed : undefined;
    },
    LIST_WAIT,
  );
}

async function ownerAttribute(id: string): Promise<string | undefined> {
  return (await h.client.workflow.getHandle(id).describe()).typedSearchAttributes.get(ConversationOwner);
}

describe('two principals', () => {
  let aliceId: string;
  let bobId: string;
  let pending: { callId: string; argumentsDigest: string };

  before(async () => {
    // Alice's conversation waits for her approval of a purchase; Bob has one of his own.
    aliceId = await startAs(ALICE, {
      options: { tools: ['buy_stock'] },
      message: uniquePrompt('Buy 3 shares of General Motors'),
    });
    const asked = await waitUntil(
      'the approval Alice is asked for',
      async () => (await stateAs(ALICE, aliceId)).pendingApprovals[0],
      TURN_WAIT,
    );
    pending = { callId: asked.callId, argumentsDigest: asked.argumentsDigest };
    bobId = await startAs(BOB);
  });

  test('each conversation records the principal that started it (ConversationOwner)', async () => {
    assert.equal(await ownerAttribute(aliceId), 'alice');
    assert.equal(await ownerAttribute(bobId), 'bob');
  });

  test("neither can read, stream, message, approve or end the other's conversation: 404, as for one that does not exist", async () => {
    const nowhere = `never-started-${randomUUID()}`;
    const routes = (id: string): [string, string, unknown?][] => [
      ['GET', `/api/conversations/${id}`],
      ['GET', `/api/conversations/${id}/transcript`],
      ['GET', `/api/conversations/${id}/events`],
      ['GET', `/api/conversations/${id}/events?from=0`],
      ['POST', `/api/conversations/${id}/messages`, { text: 'BOB-WAS-HERE' }],
      ['POST', `/api/conversations/${id}/messages`, { text: 'BOB-WAS-HERE', start: {} }],
      ['POST', `/api/conversations/${id}/approvals`, { ...pending, approve: true }],
      ['POST', `/api/conversations/${id}/end`],
    ];
    for (const [token, theirs] of [
      [BOB, aliceId],
      [ALICE, bobId],
    ] as const) {
      for (const [method, path, body] of routes(theirs)) {
        const answer = await as(token, method, path, body);
        assert.equal(answer.status, 404, `${method} ${path}: ${JSON.stringify(answer.body)}`);
        assert.deepEqual(answer.body, missing(theirs), `${method} ${path}`);
      }
    }
    // The same routes for an id nobody has: the same answers (only the id differs).
    for (const [method, path, body] of routes(nowhere)) {
      if (path.endsWith('/messages') && (body as { start?: unknown }).start) continue; // that one starts it
      const answer = await as(BOB, method, path, body);
      assert.deepEqual([answer.status, answer.body], [404, missing(nowhere)], `${method} ${path}`);
    }
    // Nothing happened to Alice's conversation: still waiting for her approval, no message of Bob's in it.
    const state = await stateAs(ALICE, aliceId);
    assert.equal(state.status, 'awaiting_approval');
    assert.deepEqual(state.pendingApprovals[0]?.callId, pending.callId);
    const transcript = await as(ALICE, 'GET', `/api/conversations/${aliceId}/transcript`);
    assert.equal(transcript.status, 200);
    assert.doesNotMatch(JSON.stringify(transcript.body), /BOB-WAS-HERE/);
    assert.equal((await stateAs(BOB, bobId)).status, 'awaiting_user');
  });

  test("each lists only its own; asking for all or for another's is 403; an admin lists both", async () => {
    const alices = await listShowing(ALICE, [aliceId]);
    assert.ok(!alices.some((c) => c.id === bobId), "Bob's conversation is not in Alice's list");
    assert.ok(
      alices.every((c) => c.owner === 'alice'),
      'only Alice-owned',
    );
    const bobs = await listShowing(BOB, [bobId]);
    assert.ok(!bobs.some((c) => c.id === aliceId), "Alice's conversation is not in Bob's list");
    assert.ok(bobs.every((c) => c.owner === 'bob'));
    for (const query of ['?all=1', '?owner=alice', '?all=true&owner=alice']) {
      const refused = await as(BOB, 'GET', `/api/conversations${query}`);
      assert.equal(refused.status, 403, query);
      assert.equal((refused.body as { error: { code: string } }).error.code, 'forbidden');
    }
    // The admin: both with all=1 (with their owners), one principal's with owner=.
    const all = await listShowing(OPS, [aliceId, bobId], '?all=1');
    assert.equal(all.find((c) => c.id === aliceId)?.owner, 'alice');
    assert.equal(all.find((c) => c.id === bobId)?.owner, 'bob');
    const onlyBob = await listShowing(OPS, [bobId], '?owner=bob');
    assert.ok(onlyBob.every((c) => c.owner === 'bob'));
    // limit bounds the page; the admin's own list (no all=) holds only what it started.
    assert.equal((await listAs(OPS, '?all=1&limit=1')).length, 1);
    assert.ok((await listAs(OPS)).every((c) => c.owner === 'ops'));
    assert.equal((await as(OPS, 'GET', '/api/conversations?limit=101')).status, 400);
  });

  test("an admin reads and acts on another principal's conversation; the owner approves its own", async () => {
    assert.equal((await stateAs(OPS, aliceId)).status, 'awaiting_approval');
    const approved = await as(ALICE, 'POST', `/api/conversations/${aliceId}/approvals`, { ...pending, approve: true });
    assert.equal(approved.status, 204, JSON.stringify(approved.body));
    await waitUntil(
      'the approved turn to finish',
      async () => ((await stateAs(ALICE, aliceId)).status === 'awaiting_user' ? true : undefined),
      TURN_WAIT,
    );
    const ended = await as(OPS, 'POST', `/api/conversations/${bobId}/end`);
    assert.equal(ended.status, 202);
  });

  test('/api/config says who the caller is', async () => {
    const config = await as(BOB, 'GET', '/api/config');
    assert.deepEqual(config.body, { namespace, temporalUiUrl: null, principal: 'bob', admin: false });
    assert.equal(((await as(OPS, 'GET', '/api/config')).body as { admin: boolean }).admin, true);
  });
});

describe('starting', () => {
  test('a start with an id someone has is 409 already_started, the same answer whoever holds it, and changes nothing', async () => {
    const id = `owned-by-alice-${randomUUID()}`;
    await startAs(ALICE, { id });
    const byBob = await as(BOB, 'POST', '/api/conversations', { id, message: 'BOB-WAS-HERE' });
    const byAlice = await as(ALICE, 'POST', '/api/conversations', { id });
    assert.equal(byBob.status, 409);
    assert.deepEqual(byBob.body, byAlice.body, 'the answer does not say whose the id is');
    assert.equal(await ownerAttribute(id), 'alice');
    assert.equal((await stateAs(ALICE, id)).turns, 0, "Bob's first message did not land");
  });

  test('the owner is the caller: options.owner or start.owner naming another principal is overridden', async () => {
    const id = await startAs(BOB, { options: { owner: 'alice' } });
    assert.equal(await ownerAttribute(id), 'bob');
    assert.equal((await as(ALICE, 'GET', `/api/conversations/${id}`)).status, 404);
    const viaMessage = `bob-by-message-${randomUUID()}`;
    const submitted = await as(BOB, 'POST', `/api/conversations/${viaMessage}/messages`, {
      text: uniquePrompt('Hello'),
      start: { owner: 'alice' },
    });
    assert.equal(submitted.status, 202, JSON.stringify(submitted.body));
    assert.deepEqual(submitted.body, { turn: 1, offset: 0 });
    assert.equal(await ownerAttribute(viaMessage), 'bob');
    assert.equal((await as(ALICE, 'GET', `/api/conversations/${viaMessage}`)).status, 404);
    // Bob's next message with start goes to his conversation as a second turn.
    const again = await as(BOB, 'POST', `/api/conversations/${viaMessage}/messages`, {
      text: uniquePrompt('Hello again'),
      start: {},
    });
    assert.equal(again.status, 202, JSON.stringify(again.body));
    assert.equal((again.body as { turn: number }).turn, 2);
  });

  test('the owner stays across continue-as-new: the new run is still only its owner’s', async () => {
    const prompt = uniquePrompt(STOCK_QUESTION);
    const id = await startAs(ALICE, {
      options: { tools: STOCK_TOOLS, continueAsNewAfterModelCalls: 1 },
      message: prompt,
    });
    const state = await waitUntil(
      'the turn to finish over several runs',
      async () => {
        const now = await stateAs(ALICE, id);
        return now.status === 'awaiting_user' && now.turns === 1 ? now : undefined;
      },
      TURN_WAIT,
    );
    assert.ok(state.runs >= 2, `continued as new (${state.runs} runs)`);
    assert.equal(await ownerAttribute(id), 'alice');
    assert.deepEqual((await as(BOB, 'GET', `/api/conversations/${id}`)).body, missing(id));
    await listShowing(ALICE, [id]);
  });
});

describe('GATEWAY_TOKEN alone (as before principals)', () => {
  test('its principal is "default", an admin: it reads any conversation (one without an owner too) and lists all with all=1', async () => {
    const config = await as(LEGACY, 'GET', '/api/config', undefined, legacy);
    assert.deepEqual(config.body, { namespace, temporalUiUrl: null, principal: 'default', admin: true });
    // Started by the client directly (the CLI's way): no owner; only an admin sees it.
    const ownerless = await h.conversations.startConversation({ id: `no-owner-${randomUUID()}` });
    assert.equal(await ownerAttribute(ownerless), undefined);
    assert.equal((await as(LEGACY, 'GET', `/api/conversations/${ownerless}`, undefined, legacy)).status, 200);
    assert.deepEqual((await as(ALICE, 'GET', `/api/conversations/${ownerless}`)).body, missing(ownerless));
    const alices = await startAs(ALICE);
    assert.equal((await as(LEGACY, 'GET', `/api/conversations/${alices}`, undefined, legacy)).status, 200);
    // What it starts is its own ("default"); its list without all= holds those.
    const own = (await as(LEGACY, 'POST', '/api/conversations', {}, legacy)).body as { id: string };
    assert.equal(await ownerAttribute(own.id), 'default');
    await listShowing(LEGACY, [own.id], '', legacy);
    const all = await listShowing(LEGACY, [own.id, alices, ownerless], '?all=1', legacy);
    assert.equal(all.find((c) => c.id === ownerless)?.owner ?? null, null);
    // The old flow end to end: message, then end.
    const sent = await as(
      LEGACY,
      'POST',
      `/api/conversations/${own.id}/messages`,
      { text: uniquePrompt('Hi') },
      legacy,
    );
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    assert.equal((await as(LEGACY, 'POST', `/api/conversations/${own.id}/end`, undefined, legacy)).status, 202);
  });
});
