// Entry point: the HTTP/SSE gateway (gateway/main.ts, as its own process, as `npm run gateway` runs it), reached by
// anyone who can open a connection to it, over a real worker and Temporal. Whatever is sent — wrong methods, bodies
// that are not JSON, huge or deeply nested ones, wrong content types, bad conversation ids (empty, 3,000 characters,
// spaces, slashes, NUL, lone surrogates), malformed percent-encoding, unknown paths, a missing or wrong token — the
// answer is a clear 4xx that quotes at most a little of what was sent, never a 500, and the gateway's log shows no
// stack trace. Event streams are capped per token and per conversation, and a reader that stops reading is cut off
// (it resumes with Last-Event-ID) instead of making the gateway hold everything for it. Principals: a malformed
// GATEWAY_TOKENS is refused at start naming the variable, never a token; a token of odd (visible ASCII) characters
// works exactly as given; a list's filter values never widen the visibility query (400, or quoted).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { loadGatewayConfig } from '../../gateway/gateway-config';
import { ConfigError } from '../../workers/config';
import { type Answer, type RawRequest, type ServerProcess, sendRaw, startServerScript } from '../support/raw-http';
import { type Harness, namespace, startHarness, temporalAddress, uniquePrompt } from '../support/harness';
import { waitUntil } from '../support/wait-until';

const ROOT = path.resolve(__dirname, '..', '..');
const TOKEN = randomBytes(24).toString('base64url');
const MARKER = 'SECRET-CALLER-TEXT-4711';
const AUTH = { Authorization: `Bearer ${TOKEN}` };
/** Principal "odd" (not an admin): every visible ASCII character a header may carry that a parser might trip on. */
const ODD_TOKEN = `q"uo\\te'%20,;=~!{}[]<>|^\`$&*()#${randomBytes(8).toString('hex')}`;
/** Principal "other": someone else's conversations for "odd" not to see. */
const OTHER_TOKEN = randomBytes(24).toString('base64url');
const GATEWAY_TOKENS = JSON.stringify({
  [ODD_TOKEN]: { principal: 'odd' },
  [OTHER_TOKEN]: { principal: 'other', admin: false },
});
const JSON_AUTH = { ...AUTH, 'Content-Type': 'application/json' };
/** Small caps, so that the tests can reach them. */
const MAX_STREAMS_PER_TOKEN = 3;
const MAX_STREAMS_PER_CONVERSATION = 2;
const MAX_STREAM_BUFFER_BYTES = 65_536;
const MAX_BODY_BYTES = 1_000_000;

let h: Harness;
let gateway: ServerProcess;
let port: number;
/** The gateway's log: checked after each test for stack traces. */
let log: string[] = [];

before(async () => {
  h = await startHarness();
  gateway = await startServerScript(
    path.join(ROOT, 'gateway', 'main.ts'),
    {
      GATEWAY_TOKEN: TOKEN,
      GATEWAY_TOKENS,
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_PORT: '0',
      GATEWAY_MAX_BODY_BYTES: String(MAX_BODY_BYTES),
      GATEWAY_MAX_STREAMS_PER_TOKEN: String(MAX_STREAMS_PER_TOKEN),
      GATEWAY_MAX_STREAMS_PER_CONVERSATION: String(MAX_STREAMS_PER_CONVERSATION),
      GATEWAY_MAX_STREAM_BUFFER_BYTES: String(MAX_STREAM_BUFFER_BYTES),
      TEMPORAL_ADDRESS: temporalAddress,
      TEMPORAL_NAMESPACE: namespace,
      TEMPORAL_TASK_QUEUE: h.taskQueue,
    },
    /^Gateway listening on http:\/\/[^ ]+:(\d+) /,
  );
  port = gateway.port;
  log = gateway.log;
});

after(async () => {
  await gateway?.stop();
  await h?.close();
});

/** One request sent as written (the path is not normalised, as fetch would). */
const send = (method: string, target: string, request: RawRequest = {}): Promise<Answer> =>
  sendRaw(port, method, target, request);

/** A clear refusal: this 4xx status, a JSON error with a code and a short message that does not quote MARKER. */
function assertRefused(answer: Answer, status: number, what: string): { code: string; message: string } {
  assert.equal(answer.status, status, `${what}: ${answer.status} ${answer.text.slice(0, 300)}`);
  assert.ok(answer.text.length < 1_000, `${what}: an answer of ${answer.text.length} characters`);
  assert.ok(!answer.text.includes(MARKER), `${what}: the answer quotes the request: ${answer.text}`);
  assert.match(answer.headers['content-type'] ?? '', /^application\/json/, what);
  const { error } = JSON.parse(answer.text) as { error: { code: string; message: string } };
  assert.match(error.code, /^[a-z_]+$/, what);
  assert.ok(error.message.length > 0, what);
  return error;
}

const post = (target: string, body: string | Buffer, headers: Record<string, string> = JSON_AUTH) =>
  send('POST', target, { headers, body });

/** The gateway still answers, logged no stack trace and no internal error, and is running. */
async function assertServing(): Promise<void> {
  assert.equal(gateway.child.exitCode, null, `the gateway exited:\n${log.slice(-20).join('\n')}`);
  assert.equal((await send('GET', '/healthz')).status, 200);
  assert.equal((await send('GET', '/api/config', { headers: AUTH })).status, 200);
  const failures = log.filter((line) => /^\s+at /.test(line) || /internal error|Error:/.test(line));
  assert.deepEqual(failures, [], 'the gateway logged a failure');
}

afterEach(assertServing);

async function notStarted(id: string): Promise<void> {
  await assert.rejects(h.client.workflow.getHandle(id).describe(), /not found/i, `${id} was started`);
}

describe('paths', () => {
  test('malformed percent-encoding in a path is 400, not a 500 with a stack trace in the log', async () => {
    for (const target of [
      '/api/conversations/%E0%A4%A',
      '/api/conversations/%',
      '/api/conversations/%zz/transcript',
      '/api/%E0%A4%A',
      '/api/conversations/fine-id/%E0%A4%A',
      '/api/conversations/%C0%AF', // an overlong "/"
    ]) {
      const error = assertRefused(await send('GET', target, { headers: AUTH }), 400, target);
      assert.equal(error.code, 'invalid_request', target);
    }
  });

  test('an unknown path is 404 that does not quote the path', async () => {
    for (const target of [
      '/nope',
      `/${MARKER}`,
      '/api',
      '/api/',
      '/api/nope',
      `/api/${MARKER}`,
      `/api/${'a'.repeat(10_000)}`,
      '/api/conversations/x/y/z',
      `/api/conversations/x/${MARKER}`,
      '/public/chat.js',
      '/gateway-server.ts',
      '/%2e%2e/package.json',
      '/chat.js/',
    ]) {
      const error = assertRefused(await send('GET', target, { headers: AUTH }), 404, target.slice(0, 60));
      assert.equal(error.code, 'not_found', target.slice(0, 60));
    }
  });
});

describe('conversation ids', () => {
  const badIds = {
    empty: '',
    '3,000 characters': 'a'.repeat(3_000),
    spaces: `${MARKER}%20has%20spaces`,
    'a slash': `${MARKER}%2Fslash`,
    NUL: `${MARKER}%00`,
    'a lone high surrogate': `${MARKER}%ED%A0%80`,
    'a lone low surrogate': '%ED%B0%80',
    'a leading dot': '.hidden',
  };

  test('a bad id in the path — empty, 3,000 characters, spaces, a slash, NUL, lone surrogates — is 400', async () => {
    for (const [what, id] of Object.entries(badIds)) {
      for (const [method, suffix] of [
        ['GET', ''],
        ['GET', '/transcript'],
        ['GET', '/events'],
        ['POST', '/messages'],
        ['POST', '/approvals'],
        ['POST', '/end'],
      ] as const) {
        const target = `/api/conversations/${id}${suffix}`;
        const answer =
          method === 'GET' ? await send('GET', target, { headers: AUTH }) : await post(target, '{"text": "hi"}');
        const error = assertRefused(answer, 400, `${method} ${what}${suffix}`);
        assert.equal(error.code, 'invalid_request');
      }
    }
  });

  test('a bad id in a start body — as `id` or as `options.id` — is 400 and starts nothing', async () => {
    const bodies: [string, string, string?][] = [
      ['empty id', '{"id": ""}'],
      ['3,000-character id', JSON.stringify({ id: 'a'.repeat(3_000) })],
      ['id with a space and a slash', JSON.stringify({ id: `${MARKER} has space/and slash` })],
      ['empty options.id', '{"options": {"id": ""}}'],
      ['3,000-character options.id', JSON.stringify({ options: { id: 'a'.repeat(3_000) } })],
      ['options.id with a space and a slash', '{"options": {"id": "has space/and slash"}}', 'has space/and slash'],
      ['options.id with NUL', JSON.stringify({ options: { id: `nul\u0000${MARKER}` } })],
      ['options.id a lone surrogate', `{"options": {"id": "\\ud800${MARKER}"}}`],
      ['id a lone surrogate', `{"id": "${MARKER}\\udc00"}`],
      ['options.id a number', '{"options": {"id": 42}}'],
    ];
    for (const [what, body, id] of bodies) {
      const error = assertRefused(await post('/api/conversations', body), 400, what);
      assert.match(error.message, /\bid\b/, what);
      if (id) await notStarted(id);
    }
  });
});

describe('methods', () => {
  test('a wrong method is 405 with Allow (on /api after the token is checked)', async () => {
    const routes: [string, string][] = [
      ['/', 'GET'],
      ['/chat.js', 'GET'],
      ['/chat.css', 'GET'],
      ['/healthz', 'GET'],
      ['/api/config', 'GET'],
      ['/api/tools', 'GET'],
      ['/api/conversations', 'GET, POST'],
      ['/api/conversations/some-id', 'GET'],
      ['/api/conversations/some-id/transcript', 'GET'],
      ['/api/conversations/some-id/messages', 'POST'],
      ['/api/conversations/some-id/approvals', 'POST'],
      ['/api/conversations/some-id/end', 'POST'],
      ['/api/conversations/some-id/events', 'GET'],
    ];
    for (const [target, allowed] of routes) {
      for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
        if (allowed.split(', ').includes(method)) continue;
        const answer = await send(method, target, { headers: JSON_AUTH, body: '{}' });
        assertRefused(answer, 405, `${method} ${target}`);
        assert.equal(answer.headers.allow, allowed, `${method} ${target}`);
      }
    }
    assertRefused(await send('DELETE', '/api/conversations/some-id'), 401, 'DELETE without a token');
  });
});

describe('bodies', () => {
  test('a body that is not JSON is 400 invalid_json that does not quote it', async () => {
    const bodies: (string | Buffer)[] = [
      `{"message": "${MARKER}`,
      '',
      MARKER,
      `{"message": "hello"} ${MARKER}`,
      `\ufeff{"message": "${MARKER}"}`,
      Buffer.from([0xff, 0xfe, 0x7b, 0x7d]),
      `{'message': '${MARKER}'}`,
    ];
    for (const body of bodies) {
      for (const target of [
        '/api/conversations',
        '/api/conversations/some-id/messages',
        '/api/conversations/some-id/approvals',
      ]) {
        const what = `${target} ${JSON.stringify(String(body)).slice(0, 40)}`;
        assert.equal(assertRefused(await post(target, body), 400, what).code, 'invalid_json', what);
      }
    }
  });

  test('JSON of the wrong shape — null, an array, a string, unknown fields, a 10,000-character key — is 400', async () => {
    for (const body of [
      'null',
      '[]',
      `"${MARKER}"`,
      '42',
      '{"mesage": "typo"}',
      JSON.stringify({ [`${'k'.repeat(10_000)}${MARKER}`]: 1 }),
      JSON.stringify({ message: 42 }),
      JSON.stringify({ options: MARKER }),
      JSON.stringify({ options: { [`${'k'.repeat(10_000)}${MARKER}`]: 1 } }),
    ]) {
      const error = assertRefused(await post('/api/conversations', body), 400, body.slice(0, 60));
      assert.match(error.code, /^invalid_(request|options)$/, body.slice(0, 60));
    }
  });

  test('deep JSON: 100,000 nested arrays or objects, as the body or inside options, a message or an approval, is 400', async () => {
    const arrays = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const objects = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;
    for (const deep of [arrays, objects]) {
      for (const [target, body] of [
        ['/api/conversations', deep],
        ['/api/conversations', `{"options": ${deep}}`],
        ['/api/conversations', `{"options": {"tools": ${deep}}}`],
        ['/api/conversations', `{"options": {"system": ${deep}}}`],
        ['/api/conversations', `{"options": {"model": "m", "unknown": ${deep}}}`],
        ['/api/conversations', `{"message": ${deep}}`],
        ['/api/conversations/some-id/messages', `{"text": ${deep}}`],
        ['/api/conversations/some-id/messages', `{"text": "hi", "start": {"tools": ${deep}}}`],
        [
          '/api/conversations/some-id/approvals',
          `{"callId": "c", "argumentsDigest": "d", "approve": true, "reason": ${deep}}`,
        ],
      ] as const) {
        assertRefused(await post(target, body), 400, `${target} ${body.slice(0, 40)}`);
      }
    }
  });

  test('a body over the limit — declared, or streamed without a length — is 413', async () => {
    const huge = Buffer.alloc(MAX_BODY_BYTES + 1, 'a');
    assert.equal(assertRefused(await post('/api/conversations', huge), 413, 'declared').code, 'body_too_large');
    const streamed = await send('POST', '/api/conversations/some-id/messages', {
      headers: JSON_AUTH,
      chunks: Array.from({ length: 3 }, () => Buffer.alloc(500_000, 'b')),
    });
    assertRefused(streamed, 413, 'streamed');
  });

  test('a body not declared as JSON is 415', async () => {
    for (const type of [
      undefined,
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonx',
      'application/json-seq',
      'text/json',
    ]) {
      for (const target of ['/api/conversations', '/api/conversations/some-id/messages']) {
        const headers = { ...AUTH, ...(type && { 'Content-Type': type }) };
        const answer = await post(target, '{"text": "hi"}', headers);
        assert.equal(assertRefused(answer, 415, `${target} as ${type}`).code, 'unsupported_media_type');
      }
    }
  });
});

describe('credentials', () => {
  test('a missing or wrong token is 401 with a Bearer challenge, and does not quote the token sent', async () => {
    for (const authorization of [
      undefined,
      '',
      'Bearer',
      'Bearer ',
      `Bearer ${MARKER}`,
      `Basic ${TOKEN}`,
      `Bearer ${TOKEN}x`,
      `Bearer ${TOKEN} ${TOKEN}`,
      `Bearer ${'x'.repeat(8_000)}`,
      `bearer${TOKEN}`,
    ]) {
      for (const [method, target] of [
        ['GET', '/api/config'],
        ['GET', '/api/tools'],
        ['GET', '/api/conversations/some-id/events'],
        ['POST', '/api/conversations'],
      ]) {
        const headers = { 'Content-Type': 'application/json', ...(authorization !== undefined && { authorization }) };
        const answer = await send(method!, target!, { headers, body: '{}' });
        const what = `${method} ${target} with ${String(authorization).slice(0, 30)}`;
        assert.equal(assertRefused(answer, 401, what).code, 'unauthenticated');
        assert.match(answer.headers['www-authenticate'] ?? '', /^Bearer /, what);
      }
    }
  });
});

describe('event streams', () => {
  /** An event stream held open; `status` once the head arrived. */
  async function openStream(id: string): Promise<{ status: number; retryAfter?: string; close(): void }> {
    return new Promise((resolve, reject) => {
      const req = http.get(
        { host: '127.0.0.1', port, path: `/api/conversations/${id}/events`, headers: AUTH },
        (res) => {
          res.resume();
          resolve({
            status: res.statusCode!,
            ...(res.headers['retry-after'] && { retryAfter: res.headers['retry-after'] }),
            close: () => req.destroy(),
          });
        },
      );
      req.on('error', (error) => {
        if (!req.destroyed) reject(error);
      });
    });
  }

  async function startConversation(): Promise<string> {
    const answer = await post('/api/conversations', '{}');
    assert.equal(answer.status, 201, answer.text);
    return (JSON.parse(answer.text) as { id: string }).id;
  }

  /** Opens a stream, retrying for a while when refused (a closed stream's slot is freed when the gateway sees it). */
  async function openOnceFreed(id: string) {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const stream = await openStream(id);
      if (stream.status === 200 || Date.now() > deadline) return stream;
      stream.close();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  test('open streams are capped per conversation and per token: 429 with Retry-After; a closed stream frees its slot', async () => {
    const [a, b, c] = [await startConversation(), await startConversation(), await startConversation()];
    const open = [await openStream(a), await openStream(a)];
    assert.deepEqual(
      open.map((s) => s.status),
      [200, 200],
    );
    const thirdOnA = await openStream(a);
    assert.equal(thirdOnA.status, 429, 'over the per-conversation cap');
    assert.match(thirdOnA.retryAfter ?? '', /^\d+$/);
    thirdOnA.close();

    const onB = await openStream(b);
    assert.equal(onB.status, 200, 'another conversation, within the per-token cap');
    const onC = await openStream(c);
    assert.equal(onC.status, 429, 'over the per-token cap');
    assert.match(onC.retryAfter ?? '', /^\d+$/);
    onC.close();

    open.pop()!.close();
    const freed = await openOnceFreed(c);
    assert.equal(freed.status, 200, 'the closed stream freed its slot');
    const overAgain = await openStream(c);
    assert.equal(overAgain.status, 429, 'and only its slot');
    overAgain.close();

    for (const stream of [...open, onB, freed]) stream.close();
    const again = await openOnceFreed(a);
    assert.equal(again.status, 200);
    const second = await openStream(a);
    assert.equal(second.status, 200, 'every slot freed');
    again.close();
    second.close();
  });

  test('a reader that stops reading is cut off once the gateway holds too much for it, and resumes with Last-Event-ID', async () => {
    // Two turns of large messages and replies (as large as a conversation may grow): about 1.5 MB of events, far more
    // than the gateway may hold for one reader.
    const prompt = uniquePrompt(`${'m'.repeat(50_000)} Tell me a long story.`);
    const reply = (n: number) => ({
      reply: {
        content: [{ type: 'text' as const, text: `Part ${n}: ${'r'.repeat(350_000)}` }],
        stop_reason: 'end_turn',
      },
    });
    h.mock.script(prompt, [reply(1), reply(2)]);
    const id = `gateway-slow-reader-${Date.now()}`;
    await h.conversations.sendMessage(id, prompt, { start: {} });
    await h.conversations.sendMessage(id, `${'n'.repeat(50_000)} Go on.`);

    // A raw connection that asks for every event and then reads nothing.
    const socket = net.connect({ host: '127.0.0.1', port });
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.pause();
    socket.write(
      `GET /api/conversations/${id}/events?from=0 HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`,
    );
    const cutOff = () => log.some((line) => /event stream .*fell behind/.test(line));
    const deadline = Date.now() + 60_000;
    while (!cutOff()) {
      assert.ok(Date.now() < deadline, `the gateway kept the stream open:\n${log.slice(-10).join('\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // What reached the socket before the gateway let go of it, then the end of the connection.
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.resume();
    await Promise.race([
      new Promise((resolve) => socket.once('close', resolve)),
      new Promise((_, reject) => setTimeout(() => reject(new Error('the connection stayed open')), 30_000)),
    ]);
    const text = Buffer.concat(received).toString('utf8');
    assert.match(text, /^HTTP\/1\.1 200 /);
    const head = [...text.matchAll(/^id: (\S+)\nevent: \S+\ndata: (.*)\n\n/gm)].map((m) => ({
      id: m[1]!,
      offset: (JSON.parse(m[2]!) as { offset: number }).offset,
    }));
    assert.ok(head.length > 0, 'some events arrived');
    assert.ok(!text.includes('turn_finished","turn":2'), 'the reader was cut off before the end');

    // The reader resumes after the last event it has: it gets every later event, once, in order.
    const resumed = await fetch(`http://127.0.0.1:${port}/api/conversations/${id}/events`, {
      headers: { ...AUTH, 'last-event-id': head.at(-1)!.id },
    });
    assert.equal(resumed.status, 200);
    const tail: number[] = [];
    const reader = resumed.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (let done = false; !done;) {
      const chunk = await reader.read();
      if (chunk.done) break;
      buffer += chunk.value;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (!data) continue;
        const item = JSON.parse(data) as { offset: number; event: { type: string; turn?: number } };
        tail.push(item.offset);
        if (item.event.type === 'turn_finished' && item.event.turn === 2) done = true;
      }
    }
    await reader.cancel();
    const offsets = [...head.map((e) => e.offset), ...tail];
    assert.deepEqual(
      offsets,
      offsets.map((_, i) => i),
      'every offset once, in order',
    );
  });
});

describe('principals', () => {
  /** `npm run gateway` with this environment: it must exit at once with a clear error. */
  async function refusedAtStart(env: Record<string, string>): Promise<string> {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'gateway', 'main.ts')], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        GATEWAY_PORT: '0',
        TEMPORAL_ADDRESS: temporalAddress,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    assert.equal(code, 1, output);
    assert.doesNotMatch(output, /Gateway listening/);
    assert.doesNotMatch(output, /^\s+at /m, 'no stack trace');
    return output;
  }

  /** loadGatewayConfig's refusal of `env`: a ConfigError naming `variable`, quoting no token. */
  function refusal(env: Record<string, string>): string {
    let message = '';
    assert.throws(
      () => loadGatewayConfig(env),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError, String(err));
        message = err.message;
        return true;
      },
    );
    assert.match(message, /^Invalid gateway configuration:/);
    assert.ok(!message.includes(MARKER), `the error quotes a token: ${message}`);
    return message;
  }

  test('a malformed GATEWAY_TOKENS (or _FILE, or none at all) is refused at start with a clear error that names the variable, never a token', async () => {
    const token = `${MARKER}-0123456789`;
    const cases: [Record<string, string>, RegExp][] = [
      [{}, /set GATEWAY_TOKEN, GATEWAY_TOKENS or GATEWAY_TOKENS_FILE/],
      [{ GATEWAY_TOKENS: `{"${token}": {"principal": "a"}` }, /GATEWAY_TOKENS: not valid JSON/],
      [{ GATEWAY_TOKENS: `["${token}"]` }, /GATEWAY_TOKENS: must be a JSON object/],
      [{ GATEWAY_TOKENS: 'null' }, /GATEWAY_TOKENS: must be a JSON object/],
      [{ GATEWAY_TOKENS: '{}' }, /GATEWAY_TOKENS: has no tokens/],
      [{ GATEWAY_TOKENS: JSON.stringify({ [token]: 'alice' }) }, /entry 1: each entry is an object/],
      [{ GATEWAY_TOKENS: JSON.stringify({ [token]: {} }) }, /entry 1: principal: /],
      [{ GATEWAY_TOKENS: JSON.stringify({ [token]: { principal: 'a"b' } }) }, /entry 1: principal: a principal is/],
      [{ GATEWAY_TOKENS: JSON.stringify({ [token]: { principal: 'x'.repeat(10_000) } }) }, /at most 128/],
      [{ GATEWAY_TOKENS: JSON.stringify({ [token]: { principal: 'a', admin: 'yes' } }) }, /admin is true or false/],
      [{ GATEWAY_TOKENS: JSON.stringify({ [token]: { principal: 'a', role: 'x' } }) }, /Unrecognized key/],
      [
        { GATEWAY_TOKENS: JSON.stringify({ 'SECRET-4711': { principal: 'a' } }) },
        /entry 1: the token must be at least 16/,
      ],
      [{ GATEWAY_TOKENS: JSON.stringify({ [`${token} x`]: { principal: 'a' } }) }, /visible ASCII/],
      [{ GATEWAY_TOKENS: JSON.stringify({ [`${token}\u00e9`]: { principal: 'a' } }) }, /visible ASCII/],
      [{ GATEWAY_TOKENS: JSON.stringify({ [`${token}\u0000`]: { principal: 'a' } }) }, /visible ASCII/],
      [{ GATEWAY_TOKENS: JSON.stringify({ [`${token}${'x'.repeat(5_000)}`]: { principal: 'a' } }) }, /at most 4,096/],
      [{ GATEWAY_TOKEN: token, GATEWAY_TOKENS: JSON.stringify({ [token]: { principal: 'a' } }) }, /repeats a token/],
      [{ GATEWAY_TOKEN: `${MARKER} 0123` }, /GATEWAY_TOKEN: must be visible ASCII/],
      [{ GATEWAY_TOKENS: '{}', GATEWAY_TOKENS_FILE: '/nowhere' }, /set one of them, not both/],
      [{ GATEWAY_TOKENS_FILE: `/nowhere/${randomUUID()}.json` }, /GATEWAY_TOKENS_FILE: cannot read .* \(ENOENT\)/],
    ];
    for (const [env, expected] of cases) {
      assert.match(refusal(env), expected, JSON.stringify(env).slice(0, 200));
    }
    // A file like GATEWAY_TOKENS is read the same way.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-tokens-'));
    try {
      const file = path.join(dir, 'tokens.json');
      fs.writeFileSync(file, JSON.stringify({ [token]: { principal: 'bad principal' } }));
      assert.match(refusal({ GATEWAY_TOKENS_FILE: file }), /GATEWAY_TOKENS_FILE: entry 1: principal: a principal is/);
      fs.writeFileSync(file, JSON.stringify({ [token]: { principal: 'alice', admin: true } }));
      assert.deepEqual(loadGatewayConfig({ GATEWAY_TOKENS_FILE: file }).tokens, [
        { token, principal: 'alice', admin: true },
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    // And at start, as its own process: exit 1 with the message, before it listens.
    const output = await refusedAtStart({ GATEWAY_TOKENS: `{"${token}": {"principal": "a b"}}` });
    assert.match(output, /Invalid gateway configuration:\n {2}GATEWAY_TOKENS: entry 1: principal: a principal is/);
    assert.ok(!output.includes(MARKER), output);
    assert.match(await refusedAtStart({}), /set GATEWAY_TOKEN, GATEWAY_TOKENS or GATEWAY_TOKENS_FILE/);
  });

  test('a token of odd characters (quotes, backslash, percent, brackets) works exactly as given, and only so', async () => {
    const config = await send('GET', '/api/config', { headers: { Authorization: `Bearer ${ODD_TOKEN}` } });
    assert.equal(config.status, 200, config.text);
    assert.deepEqual(
      { ...(JSON.parse(config.text) as object), temporalUiUrl: null },
      { namespace, temporalUiUrl: null, principal: 'odd', admin: false },
    );
    for (const near of [
      ODD_TOKEN.replace('%20', ' '),
      ODD_TOKEN.replace('\\', ''),
      ODD_TOKEN.replace('"', '\\"'),
      encodeURIComponent(ODD_TOKEN),
      ODD_TOKEN.slice(0, -1),
      `${ODD_TOKEN}x`,
    ]) {
      const answer = await send('GET', '/api/config', { headers: { Authorization: `Bearer ${near}` } });
      assert.equal(assertRefused(answer, 401, near).code, 'unauthenticated');
    }
  });

  test("list filters with hostile values are 400 or quoted: never a widened visibility query, never another's conversation", async () => {
    const ODD = { Authorization: `Bearer ${ODD_TOKEN}` };
    const list = (query: string, headers: Record<string, string> = ODD) =>
      send('GET', `/api/conversations?${query}`, { headers });
    // Conversations "odd" must not see: the admin's and another principal's; and one of its own.
    const theirs = [
      JSON.parse((await post('/api/conversations', '{}')).text) as { id: string },
      JSON.parse(
        (
          await post('/api/conversations', '{}', {
            Authorization: `Bearer ${OTHER_TOKEN}`,
            'Content-Type': 'application/json',
          })
        ).text,
      ) as { id: string },
    ].map(({ id }) => id);
    const own = (
      JSON.parse((await post('/api/conversations', '{}', { ...ODD, 'Content-Type': 'application/json' })).text) as {
        id: string;
      }
    ).id;
    // Visibility is eventually consistent: wait until the admin's list shows all three, and odd's its own.
    await waitUntil(
      'the conversations to show in a list',
      async () => {
        const all = JSON.parse((await list('all=1&limit=100', AUTH)).text) as { conversations: { id: string }[] };
        const mine = JSON.parse((await list('')).text) as { conversations: { id: string }[] };
        const ids = all.conversations.map((c) => c.id);
        return [...theirs, own].every((id) => ids.includes(id)) && mine.conversations.some((c) => c.id === own);
      },
      { timeoutMs: 30_000, everyMs: 250 },
    );
    const injections = [
      "'",
      '\\',
      "\\'",
      '"',
      "x' OR ConversationOwner != 'odd",
      "x\\' OR ConversationOwner != \\'odd",
      'x" OR ConversationOwner != "odd',
      "') OR ('a' = 'a",
      "x' OR 1=1 --",
      "x'; DROP TABLE executions_visibility; --",
      '%27%20OR%20%271%27=%271',
    ];
    for (const model of injections) {
      const answer = await list(`model=${encodeURIComponent(model)}`);
      assert.equal(answer.status, 200, `model ${model}: ${answer.text.slice(0, 300)}`);
      assert.deepEqual(JSON.parse(answer.text), { conversations: [] }, `model ${model}`);
    }
    // An owner= is a principal's name, or 400 (for the admin too); a name that is one, from "odd", is 403.
    for (const owner of [...injections, 'x'.repeat(10_000), `odd${'\u0000'}`, 'odd\n', '']) {
      const what = `owner ${owner.slice(0, 30)}`;
      assert.equal(
        assertRefused(await list(`all=1&owner=${encodeURIComponent(owner)}`, AUTH), 400, what).code,
        'invalid_request',
      );
      assert.equal(assertRefused(await list(`owner=${encodeURIComponent(owner)}`), 400, what).code, 'invalid_request');
    }
    assert.equal(assertRefused(await list('owner=other'), 403, 'owner=other').code, 'forbidden');
    assert.equal(assertRefused(await list('all=1'), 403, 'all=1').code, 'forbidden');
    for (const query of [
      `model=${'x'.repeat(10_000)}`,
      `model=${encodeURIComponent('x\u0000')}`,
      `model=${encodeURIComponent('x\ny')}`,
      `model=${encodeURIComponent('caf\u00e9')}`,
      'model=',
      `status=${encodeURIComponent("running' OR '1'='1")}`,
      'status=RUNNING',
      'limit=1000000000',
      'limit=0',
      'limit=-1',
      'limit=1.5',
      'limit=abc',
      'all=yes',
      'limit=1&limit=2',
      `${'k'.repeat(10_000)}${MARKER}=1`,
      `query=${encodeURIComponent('ConversationOwner != "odd"')}`,
    ]) {
      const refused = assertRefused(await list(query), 400, query.slice(0, 60));
      assert.equal(refused.code, 'invalid_request', query.slice(0, 60));
    }
    // What "odd" lists, whatever it asks, is only its own.
    for (const query of ['', 'limit=100', 'status=awaiting_user', `model=${encodeURIComponent(injections[4]!)}`]) {
      const listed = JSON.parse((await list(query)).text) as { conversations: { id: string; owner?: string }[] };
      assert.ok(
        listed.conversations.every((c) => c.owner === 'odd'),
        `${query}: ${listed.conversations.map((c) => c.owner).join(', ')}`,
      );
      assert.ok(!listed.conversations.some((c) => theirs.includes(c.id)), query);
    }
    for (const id of [...theirs, own]) await h.conversations.end(id);
  });
});
