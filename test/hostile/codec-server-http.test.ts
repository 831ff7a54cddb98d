// Entry point: the codec server's HTTP interface (codec/server-main.ts, as its own process, as a deployment runs it),
// reached by anyone who can open a connection to it. Whatever is sent — bodies that are not the protocol, huge or
// deeply nested ones, wrong content types, malformed payloads, lone surrogates, bad cookies, odd paths, wrong methods,
// a burst of logins — the answer is a clear 4xx that does not quote what was sent, never a 500 or a crash, and the
// server goes on serving.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { AesGcmCodec } from '../../codec/aes-gcm-codec';
import { SESSION_COOKIE } from '../../codec/codec-server';
import { parseKeyRing } from '../../codec/keys';
import { type Answer, type RawRequest, type ServerProcess, sendRaw, startServerScript } from '../support/raw-http';

const ROOT = path.resolve(__dirname, '..', '..');
const KEYS = `k1:${randomBytes(32).toString('base64')}`;
const TOKEN = randomBytes(24).toString('base64url');
const LONE_SURROGATE = '\ud800';
const MARKER = 'SECRET-CALLER-TEXT-0815';
const JSON_TYPE = { 'Content-Type': 'application/json' };
const AUTH = { Authorization: `Bearer ${TOKEN}`, ...JSON_TYPE };
/** Each test that logs in comes from an address of its own (any 127.x.y.z reaches the server): its own count. */
let nextAddress = 10;
const ownAddress = () => `127.0.0.${nextAddress++}`;

let server: ServerProcess;
let port: number;
/** The codec server's log: checked after each test for stack traces. */
let log: string[] = [];

before(async () => {
  server = await startServerScript(
    path.join(ROOT, 'codec', 'server-main.ts'),
    {
      PAYLOAD_ENCRYPTION_KEYS: KEYS,
      CODEC_SERVER_TOKEN: TOKEN,
      CODEC_SERVER_HOST: '127.0.0.1',
      CODEC_SERVER_PORT: '0',
    },
    /^Codec server listening on [^:]+:(\d+);/,
  );
  port = server.port;
  log = server.log;
});

after(async () => {
  await server?.stop();
});

/** One request sent as written (the path is not normalised, as fetch would), from `localAddress` if given. */
const send = (method: string, target: string, request: RawRequest = {}): Promise<Answer> =>
  sendRaw(port, method, target, request);

/** A clear refusal: this 4xx status, a short plain answer that quotes nothing of what was sent. */
function assertRefused(answer: Answer, status: number, what: string): void {
  assert.equal(answer.status, status, `${what}: ${answer.status} ${answer.text.slice(0, 200)}`);
  assert.ok(answer.text.length < 400, `${what}: an answer of ${answer.text.length} characters`);
  assert.ok(!answer.text.includes(MARKER), `${what}: the answer quotes the request: ${answer.text}`);
  assert.ok(!answer.text.includes('\ufffd'), `${what}: ${answer.text}`);
}

const decode = (body: unknown, headers: Record<string, string> = AUTH) =>
  send('POST', '/decode', { headers, body: typeof body === 'string' ? body : JSON.stringify(body) });

async function encryptedSample(value: string) {
  const [payload] = await new AesGcmCodec(parseKeyRing(KEYS)).encode([
    { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify(value)) },
  ]);
  return {
    metadata: Object.fromEntries(
      Object.entries(payload!.metadata!).map(([key, bytes]) => [key, Buffer.from(bytes!).toString('base64')]),
    ),
    data: Buffer.from(payload!.data!).toString('base64'),
  };
}

/** The server still answers, decodes, logged no 500 and is running. */
async function assertServing(): Promise<void> {
  assert.equal(server.child.exitCode, null, `the codec server exited:\n${log.slice(-20).join('\n')}`);
  assert.equal((await send('GET', '/health')).status, 200);
  const decoded = await decode({ payloads: [await encryptedSample('still here')] });
  assert.equal(decoded.status, 200, decoded.text);
  const [payload] = (JSON.parse(decoded.text) as { payloads: { data: string }[] }).payloads;
  assert.equal(JSON.parse(Buffer.from(payload!.data, 'base64').toString('utf8')), 'still here');
  const failures = log.filter((line) => / 5\d\d /.test(line) || line.includes('codec server error'));
  assert.deepEqual(failures, []);
}

afterEach(assertServing);

describe('bodies that are not the protocol', () => {
  test('bad JSON: 400 that says the body is not JSON, or not {"payloads": [...]}', async () => {
    const bodies: (string | Buffer)[] = [
      `{"payloads": [${MARKER}`,
      '',
      'null',
      '[]',
      `"${MARKER}"`,
      '{"payloads": null}',
      '{"payloads": {}}',
      `{"payloads": "${MARKER}"}`,
      `\ufeff{"payloads": []}`,
      Buffer.from([0xff, 0xfe, 0x7b, 0x7d]),
    ];
    for (const body of bodies) {
      const answer = await send('POST', '/decode', { headers: AUTH, body });
      assertRefused(answer, 400, `body ${JSON.stringify(String(body)).slice(0, 40)}`);
      assert.match(answer.text, /^body (is not JSON|must be \{"payloads": \[\.\.\.\]\})\n$/);
    }
  });

  test('deep JSON: 100,000 nested arrays, as the body or inside a payload, is a 400', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    assertRefused(await decode(deep), 400, 'a deep body');
    assertRefused(await decode(`{"payloads": [{"metadata": {"encoding": ${deep}}}]}`), 400, 'deep metadata');
    assertRefused(await decode(`{"payloads": [{"data": ${deep}}]}`), 400, 'deep data');
    assertRefused(await decode(`{"payloads": ${deep}}`), 400, 'deep payloads');
  });

  test('huge bodies: over 8 MiB with a length, or streamed without one, and a login form over 64 KiB: 413', async () => {
    const nineMiB = Buffer.alloc(9 * 2 ** 20, 'a');
    assertRefused(await send('POST', '/decode', { headers: AUTH, body: nineMiB }), 413, 'declared 9 MiB');
    const chunked = await send('POST', '/encode', {
      headers: AUTH,
      chunks: Array.from({ length: 9 }, () => Buffer.alloc(2 ** 20, 'b')),
    });
    assertRefused(chunked, 413, 'streamed 9 MiB');
    const form = await send('POST', '/login', {
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `token=${'x'.repeat(70_000)}`,
      localAddress: ownAddress(),
    });
    assertRefused(form, 413, 'a 70 KB login form');
  });

  test('wrong content types: 415, for /decode and /encode, and for the login form', async () => {
    const body = JSON.stringify({ payloads: [] });
    for (const type of [
      undefined,
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data',
      'application/jsonx',
      'application/json-seq',
    ]) {
      for (const target of ['/decode', '/encode']) {
        const headers = { Authorization: AUTH.Authorization, ...(type && { 'Content-Type': type }) };
        assertRefused(await send('POST', target, { headers, body }), 415, `${target} as ${type}`);
      }
    }
    assert.equal(
      (await send('POST', '/decode', { headers: { ...AUTH, 'Content-Type': 'Application/JSON; charset=utf-8' }, body }))
        .status,
      200,
    );
    for (const type of [undefined, 'application/json', 'text/plain']) {
      const answer = await send('POST', '/login', {
        headers: type ? { 'Content-Type': type } : {},
        body: JSON.stringify({ token: TOKEN }),
        localAddress: ownAddress(),
      });
      assertRefused(answer, 415, `a login as ${type}`);
    }
  });

  test('malformed payloads: 400 that names the payload, never quoting it', async () => {
    const hugeKeyId = {
      encoding: Buffer.from('binary/encrypted').toString('base64'),
      'encryption-key-id': Buffer.from(`${MARKER}\n${'k'.repeat(100_000)}`).toString('base64'),
    };
    const cases: [string, unknown][] = [
      ['a number', 42],
      ['null', null],
      ['an array', [MARKER]],
      ['metadata not an object', { metadata: MARKER }],
      ['a metadata value not a string', { metadata: { encoding: 42 } }],
      ['a metadata value not base64', { metadata: { encoding: `${MARKER}!` } }],
      ['data not a string', { data: { MARKER } }],
      ['data not base64', { data: `${MARKER} !!` }],
      [
        'a ciphertext that does not decrypt',
        {
          metadata: {
            encoding: Buffer.from('binary/encrypted').toString('base64'),
            'encryption-key-id': Buffer.from('k1').toString('base64'),
          },
          data: randomBytes(64).toString('base64'),
        },
      ],
      [
        'an unknown key id of 100,000 characters, with a newline',
        { metadata: hugeKeyId, data: randomBytes(64).toString('base64') },
      ],
      [
        'a key of __proto__',
        JSON.parse(`{"metadata": {"__proto__": "${Buffer.from(MARKER).toString('base64')}"}, "data": "!!"}`),
      ],
    ];
    for (const [what, payload] of cases) {
      const answer = await decode({ payloads: [await encryptedSample('fine'), payload] });
      assertRefused(answer, 400, what);
      assert.equal(answer.text.trimEnd().split('\n').length, 1, `${what}: one line`);
    }
  });

  test('lone surrogates: in a metadata key, a value, the data, or the login token: a 4xx, well-formed', async () => {
    const escaped = (text: string) => JSON.stringify(text).replace(LONE_SURROGATE, '\\ud800');
    const bodies = [
      `{"payloads": [{"metadata": {${escaped(`${MARKER}${LONE_SURROGATE}`)}: "AA=="}, "data": ""}]}`,
      `{"payloads": [{"metadata": {"encoding": ${escaped(LONE_SURROGATE)}}}]}`,
      `{"payloads": [{"data": ${escaped(`AA${LONE_SURROGATE}`)}}]}`,
    ];
    for (const body of bodies) {
      for (const target of ['/decode', '/encode']) {
        assertRefused(await send('POST', target, { headers: AUTH, body }), 400, `${target} ${body.slice(0, 60)}`);
      }
    }
    const login = await send('POST', '/login', {
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'token=%ED%A0%80',
      localAddress: ownAddress(),
    });
    assertRefused(login, 401, 'a token that is a lone surrogate in UTF-8');
  });
});

describe('credentials', () => {
  test('bad cookies: empty, forged, malformed, from the future, repeated, or too large: 401 (431 when too large)', async () => {
    const sample = { payloads: [await encryptedSample('x')] };
    const cookies = [
      `${SESSION_COOKIE}=`,
      `${SESSION_COOKIE}=forged`,
      `${SESSION_COOKIE}=${MARKER}`,
      `${SESSION_COOKIE}=1700000000.${'A'.repeat(43)}`,
      `${SESSION_COOKIE}=99999999999.${'A'.repeat(43)}`,
      `${SESSION_COOKIE}=-1.${'A'.repeat(43)}`,
      `${SESSION_COOKIE}=${'9'.repeat(400)}.${'A'.repeat(43)}`,
      `${SESSION_COOKIE}==; =${SESSION_COOKIE}; ${SESSION_COOKIE}`,
      Array.from({ length: 500 }, (_, i) => `c${i}=${i}`).join('; '),
      `${SESSION_COOKIE}=${'x'.repeat(8_000)}`,
    ];
    for (const cookie of cookies) {
      const answer = await decode(sample, { ...JSON_TYPE, Cookie: cookie });
      assertRefused(answer, 401, `Cookie: ${cookie.slice(0, 60)}`);
    }
    const tooLarge = await send('POST', '/decode', {
      headers: { ...JSON_TYPE, Cookie: `${SESSION_COOKIE}=${'x'.repeat(20_000)}` },
      body: '{}',
    });
    assert.equal(tooLarge.status, 431);
    const repeated = await send('POST', '/decode', {
      headers: { ...JSON_TYPE, Cookie: [`${SESSION_COOKIE}=a`, `${SESSION_COOKIE}=b`] },
      body: JSON.stringify(sample),
    });
    assertRefused(repeated, 401, 'two Cookie headers');
  });

  test('many concurrent logins from one address: five are checked (401), the other 45 get 429 with Retry-After', async () => {
    const address = ownAddress();
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        send('POST', '/login', {
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body: `token=guess-${i}`,
          localAddress: address,
        }),
      ),
    );
    const statuses = answers.map((answer) => answer.status);
    assert.equal(statuses.filter((status) => status === 401).length, 5, statuses.join(' '));
    assert.equal(statuses.filter((status) => status === 429).length, 45, statuses.join(' '));
    for (const answer of answers.filter((a) => a.status === 429)) {
      assertRefused(answer, 429, 'a login over the limit');
      assert.match(String(answer.headers['retry-after']), /^\d+$/);
      assert.ok(Number(answer.headers['retry-after']) <= 60);
    }
    const right = await send('POST', '/login', {
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `token=${encodeURIComponent(TOKEN)}`,
      localAddress: address,
    });
    assert.equal(right.status, 429, 'the address waits out its minute, right token or not');
    const elsewhere = await send('POST', '/login', {
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `token=${encodeURIComponent(TOKEN)}`,
      localAddress: ownAddress(),
    });
    assert.equal(elsewhere.status, 200, 'another address logs in meanwhile');
    const session = String(elsewhere.headers['set-cookie']).split(';')[0]!;
    assert.equal(
      (await decode({ payloads: [await encryptedSample('y')] }, { ...JSON_TYPE, Cookie: session })).status,
      200,
    );
  });
});

describe('paths and methods', () => {
  test('path traversal-like and malformed paths: 401, 404 or 405, never a file, never a 500', async () => {
    const targets = [
      '/../../etc/passwd',
      '/..%2f..%2fetc%2fpasswd',
      '/%2e%2e/%2e%2e/decode',
      '//decode',
      '/login/../decode',
      '/.%2e/decode',
      '/decode%00',
      '/%00',
      '/%E0%A4%A',
      '/%ED%A0%80/decode',
      `/${'a/'.repeat(3_000)}decode`,
      '*',
      'http://evil.example/decode',
      '/decode?../../etc/passwd',
      '/health/..',
    ];
    for (const target of targets) {
      for (const method of ['GET', 'POST']) {
        const answer = await send(method, target, {
          headers: JSON_TYPE,
          body: method === 'POST' ? '{"payloads": []}' : undefined,
        });
        assert.ok([400, 401, 404, 405].includes(answer.status), `${method} ${target.slice(0, 60)}: ${answer.status}`);
        assert.ok(!answer.text.includes('root:'), target);
        assertRefused(answer, answer.status, `${method} ${target.slice(0, 60)}`);
      }
    }
  });

  test('wrong methods: 405 that says which are allowed, on every endpoint; CONNECT too', async () => {
    for (const [target, methods] of [
      ['/decode', ['GET', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'TRACE']],
      ['/encode', ['GET', 'PUT', 'DELETE', 'PATCH']],
      ['/login', ['PUT', 'DELETE', 'PATCH', 'OPTIONS']],
      ['/health', ['POST', 'PUT', 'DELETE']],
    ] as const) {
      for (const method of methods) {
        const answer = await send(method, target, { headers: AUTH });
        assert.equal(answer.status, 405, `${method} ${target}`);
        assert.match(String(answer.headers.allow), /^[A-Z, ]+$/, `${method} ${target}: Allow`);
      }
    }
    const connect = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () =>
        socket.write('CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n'),
      );
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    assert.match(connect, /^HTTP\/1\.1 405 /);
  });

  test('bytes that are not HTTP: a 400 from Node, and the server goes on', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write(`${MARKER}\u0000\r\n\r\n`));
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    assert.match(answer, /^HTTP\/1\.1 400 /);
  });
});
