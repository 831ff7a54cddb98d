// The HTTP/SSE gateway as callers without a Temporal client use it: bearer-token auth, JSON bodies checked with clear
// 4xx answers, and an event stream that resumes from Last-Event-ID.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client, Connection, WorkflowUpdateStage } from '@temporalio/client';
import { ConversationClient } from '../../client/conversation-client';
import { StreamView } from '../../streaming/client/stream-view';
import { CONVERSATION_WORKFLOW } from '../../common/conversation-types';
import { approveToolCallUpdate } from '../../common/workflow-messages';
import type { StreamItem } from '../../streaming/stream-events';
import { type Gateway, startGateway } from '../../gateway/gateway-server';
import { STOCK_QUESTION, STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import { type Harness, namespace, startHarness, temporalAddress, uniquePrompt } from '../support/harness';

const TOKEN = 'gateway-test-token-0123456789';
let h: Harness;
let gateway: Gateway;
before(async () => {
  h = await startHarness();
  gateway = await startGateway({ conversations: h.conversations, token: TOKEN, namespace, maxBodyBytes: 4_096 });
});
after(async () => {
  await gateway?.close();
  await h?.close();
});

const auth = { authorization: `Bearer ${TOKEN}` };
const json = { ...auth, 'content-type': 'application/json' };
const call = (path: string, init: RequestInit = {}) => fetch(`${gateway.url}${path}`, init);
async function errorOf(response: Response): Promise<{ status: number; code: string; message: string }> {
  const body = (await response.json()) as { error: { code: string; message: string } };
  return { status: response.status, ...body.error };
}

interface Sse {
  id: string;
  event: string;
  data: StreamItem;
}

/** Server-sent events of a response until `stop` says so. */
async function readSse(response: Response, stop: (event: Sse) => boolean) {
  const events: Sse[] = [];
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return events;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const field = (name: string) => block.match(new RegExp(`^${name}: ?(.*)$`, 'm'))?.[1];
      const id = field('id');
      if (id === undefined) continue;
      const event = { id, event: field('event')!, data: JSON.parse(field('data')!) as StreamItem };
      events.push(event);
      if (stop(event)) {
        await reader.cancel();
        return events;
      }
    }
  }
}

describe('auth', () => {
  test('the API needs the bearer token; a missing or wrong one is 401 with a challenge; the page and /healthz are open', async () => {
    const missing = await call('/api/conversations/x');
    assert.equal(missing.status, 401);
    assert.match(missing.headers.get('www-authenticate') ?? '', /^Bearer/);
    assert.deepEqual(await errorOf(missing), {
      status: 401,
      code: 'unauthenticated',
      message: 'Send Authorization: Bearer <token>.',
    });
    const wrong = await call('/api/conversations/x', { headers: { authorization: 'Bearer not-the-token' } });
    assert.equal((await errorOf(wrong)).message, 'The bearer token is not valid.');
    const basic = await call('/api/config', { headers: { authorization: `Basic ${TOKEN}` } });
    assert.equal(basic.status, 401);
    assert.equal((await call('/healthz')).status, 200);
    const page = await call('/');
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<title>Claude conversations<\/title>/);
  });
});

describe('tools', () => {
  test("GET /api/tools answers what the task queue's workers offer: the chat page's default for a new conversation", async () => {
    const answer = await call('/api/tools', { headers: auth });
    assert.equal(answer.status, 200);
    assert.deepEqual(await answer.json(), {
      tools: [...(await h.conversations.tools())],
      mcpServers: [...(await h.conversations.mcpServers())],
    });
  });
});

describe('security headers', () => {
  const common = {
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
  };
  const headersOf = (response: Response, names: string[]) =>
    Object.fromEntries(names.map((name) => [name, response.headers.get(name)]));

  test('the chat page and its files: a Content-Security-Policy that allows only their own script, style and API, no framing', async () => {
    for (const file of ['/', '/chat.js', '/chat.css']) {
      const response = await call(file);
      assert.equal(response.status, 200);
      assert.deepEqual(headersOf(response, Object.keys(common)), common, file);
      const csp = response.headers.get('content-security-policy') ?? '';
      for (const directive of [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "connect-src 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
      ]) {
        assert.ok(csp.split(/;\s*/).includes(directive), `${file}: ${directive} in ${csp}`);
      }
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/, file);
    }
    // The page has nothing inline for the policy to block: its script and style are files.
    const html = await (await call('/')).text();
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=|\son[a-z]+=/i);
  });

  test('JSON answers, errors and event streams: nothing may load or frame them', async () => {
    const answers = [
      await call('/healthz'),
      await call('/api/config', { headers: auth }),
      await call('/api/config'),
      await call('/nowhere'),
      await call('/api/conversations/x/events', { headers: { ...auth, 'last-event-id': 'yesterday' } }),
    ];
    for (const response of answers) {
      assert.deepEqual(headersOf(response, Object.keys(common)), common, response.url);
      assert.equal(
        response.headers.get('content-security-policy'),
        "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
      );
      await response.body?.cancel();
    }
    const started = await call('/api/conversations', { method: 'POST', headers: json, body: '{}' });
    const { id } = (await started.json()) as { id: string };
    const stream = await call(`/api/conversations/${id}/events`, { headers: auth });
    assert.equal(stream.status, 200);
    assert.deepEqual(headersOf(stream, Object.keys(common)), common);
    await stream.body!.cancel();
    await h.conversations.end(id);
  });
});

describe('bad input gets a clear 4xx and changes nothing', () => {
  test('bodies: not JSON, not declared as JSON, unknown fields, an empty message, too large', async () => {
    const post = (body: string, headers: Record<string, string> = json) =>
      call('/api/conversations', { method: 'POST', headers, body });
    assert.deepEqual(await errorOf(await post('{"id": ')), {
      status: 400,
      code: 'invalid_json',
      message: 'The body is not valid JSON.',
    });
    const plain = await errorOf(await post('{}', { ...auth, 'content-type': 'text/plain' }));
    assert.equal(plain.status, 415);
    const unknown = await errorOf(await post(JSON.stringify({ mesage: 'typo' })));
    assert.equal(unknown.status, 400);
    assert.match(unknown.message, /Unrecognized key: "mesage"/);
    const empty = await errorOf(
      await call('/api/conversations/some-id/messages', { method: 'POST', headers: json, body: '{"text":"  "}' }),
    );
    assert.deepEqual(empty, {
      status: 400,
      code: 'invalid_request',
      message: 'Invalid body: text: The message is empty.',
    });
    const large = await errorOf(await post(JSON.stringify({ message: 'x'.repeat(5_000) })));
    assert.deepEqual(large, { status: 413, code: 'body_too_large', message: 'The body is larger than 4096 bytes.' });
  });

  test('options the conversation would refuse, an unknown conversation, a bad id, a wrong method, a bad Last-Event-ID', async () => {
    const options = await errorOf(
      await call('/api/conversations', {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ options: { tools: ['no_such_tool'] } }),
      }),
    );
    assert.equal(options.status, 400);
    assert.equal(options.code, 'invalid_options');
    assert.match(options.message, /unknown tool "no_such_tool"/);
    const missing = await errorOf(await call('/api/conversations/never-started-here', { headers: auth }));
    assert.deepEqual(missing, {
      status: 404,
      code: 'not_found',
      message: 'No open conversation "never-started-here".',
    });
    const badId = await errorOf(await call('/api/conversations/%20spaces%20', { headers: auth }));
    assert.equal(badId.status, 400);
    assert.match(badId.message, /^Invalid conversation id/);
    const method = await call('/api/conversations', { method: 'DELETE', headers: auth });
    assert.equal(method.status, 405);
    assert.equal(method.headers.get('allow'), 'GET, POST');
    const offset = await errorOf(
      await call('/api/conversations/any/events', { headers: { ...auth, 'last-event-id': 'yesterday' } }),
    );
    assert.equal(offset.status, 400);
    assert.equal(offset.message, 'Invalid Last-Event-ID: not an event id of this stream.');
  });

  test('an approval for a call that is not waiting is refused with 409', async () => {
    const prompt = uniquePrompt('Hello');
    const started = await call('/api/conversations', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ message: prompt }),
    });
    assert.equal(started.status, 201);
    const { id } = (await started.json()) as { id: string };
    const refused = await errorOf(
      await call(`/api/conversations/${id}/approvals`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ callId: 'toolu_x', argumentsDigest: 'd', approve: true }),
      }),
    );
    assert.deepEqual(refused, {
      status: 409,
      code: 'rejected',
      message: 'No tool call toolu_x is waiting for approval.',
    });
  });
});

describe('the event stream', () => {
  test('a conversation started over HTTP streams its turn; a reader that reconnects with Last-Event-ID gets exactly what follows', async () => {
    const prompt = uniquePrompt(STOCK_QUESTION);
    h.mock.script(prompt, [
      { demo: true, tokenDelayMs: 50 },
      { demo: true, tokenDelayMs: 50 },
      { demo: true, tokenDelayMs: 50 },
    ]);
    const started = await call('/api/conversations', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ options: { tools: STOCK_TOOLS }, message: prompt }),
    });
    assert.equal(started.status, 201);
    const { id, turn, offset } = (await started.json()) as { id: string; turn: number; offset: number };
    assert.deepEqual({ turn, offset }, { turn: 1, offset: 0 });

    const events = `/api/conversations/${id}/events`;
    const first = await call(events, { headers: auth });
    assert.equal(first.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    // Dropped in the middle of the first reply's live text; resumed with the id of the last event received.
    const head = await readSse(first, (e) => e.data.live === true && e.event === 'text');
    assert.match(head.at(-1)!.id, /^\d+~1\.1\.0\.\d+$/, 'a live event id: offset~call.attempt.block.end');
    const resumed = await call(events, { headers: { ...auth, 'last-event-id': head.at(-1)!.id } });
    const tail = await readSse(resumed, (e) => e.event === 'turn_finished');
    const all = [...head, ...tail];
    const durable = all.filter((e) => !e.data.live).map((e) => e.data.offset);
    assert.deepEqual(
      durable,
      durable.map((_, i) => i),
      'the log: every offset once, in order',
    );
    const view = new StreamView();
    for (const e of all) view.apply(e.data.event);
    const transcript = await h.conversations.getTranscript(id);
    const text = transcript
      .filter((m) => m.role === 'assistant')
      .map((m) =>
        typeof m.content === 'string' ? m.content : m.content.map((b) => (b.type === 'text' ? b.text : '')).join(''),
      )
      .join('');
    assert.equal(view.text(), text, 'no text lost or repeated across the reconnect');
    assert.match((tail.at(-1)!.data.event as { text: string }).text, /38\.50/);
    // The state and transcript endpoints agree.
    const state = (await (await call(`/api/conversations/${id}`, { headers: auth })).json()) as { turns: number };
    assert.equal(state.turns, 1);
    const served = (await (await call(`/api/conversations/${id}/transcript`, { headers: auth })).json()) as unknown[];
    assert.deepEqual(served, transcript);
  });
});

describe('when Temporal refuses for now', () => {
  // Temporal's client retries these for up to about 40 s before it gives up; without retries the gateway answers at once.
  const gatewayOn = async (connection: Connection) =>
    startGateway({
      conversations: new ConversationClient({
        client: new Client({ connection, namespace }),
        taskQueue: h.taskQueue,
        tools: ['buy_stock'],
      }),
      token: TOKEN,
      namespace,
    });

  test('a conversation out of update slots (RESOURCE_EXHAUSTED) is 503 busy with Retry-After, not 500', async () => {
    // A conversation refuses long-held updates before they take Temporal's 10 slots (workflows/turn-waiters.ts), so
    // the slots are taken here where nothing refuses: a workflow no worker runs keeps every update sent to it admitted,
    // after its caller stopped waiting.
    const id = `gateway-busy-${Date.now()}`;
    const handle = await h.client.workflow.start(CONVERSATION_WORKFLOW, {
      taskQueue: `no-worker-${id}`,
      workflowId: id,
      args: [{}],
    });
    for (let i = 0; i < 10; i++) {
      const waited = h.client.withDeadline(Date.now() + 1_000, () =>
        handle.startUpdate(approveToolCallUpdate, {
          args: [{ callId: 'toolu_1', argumentsDigest: 'digest', approve: true }],
          waitForStage: WorkflowUpdateStage.ACCEPTED,
        }),
      );
      await assert.rejects(waited, 'no worker accepts it');
    }
    const connection = await Connection.connect({ address: temporalAddress, interceptors: [] });
    const busy = await gatewayOn(connection);
    try {
      const response = await fetch(`${busy.url}/api/conversations/${id}/approvals`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ callId: 'toolu_1', argumentsDigest: 'digest', approve: true }),
      });
      assert.deepEqual({ ...(await errorOf(response)), message: '' }, { status: 503, code: 'busy', message: '' });
      assert.equal(response.headers.get('retry-after'), '5');
    } finally {
      await busy.close();
      await connection.close();
      await handle.terminate('test over');
    }
  });

  test('Temporal out of reach (UNAVAILABLE) is 503 unavailable with Retry-After, not 500', async () => {
    const connection = Connection.lazy({ address: '127.0.0.1:1', interceptors: [] });
    const away = await gatewayOn(connection);
    try {
      const response = await fetch(`${away.url}/api/conversations/anyone`, { headers: auth });
      const error = await errorOf(response);
      assert.deepEqual([error.status, error.code], [503, 'unavailable']);
      assert.match(error.message, /try again/);
      assert.equal(response.headers.get('retry-after'), '5');
    } finally {
      await away.close();
      await connection.close();
    }
  });
});
