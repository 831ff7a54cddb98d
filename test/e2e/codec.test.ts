// Payload encryption end to end: the AES-GCM codec and its keys, a real conversation whose stored history (read
// WITHOUT the codec) holds no plain text of the conversation and no API key, the codec server that decodes it back
// for the Web UI / CLI (auth, CORS, login cookie), and key rotation.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { inspect } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { z } from 'zod';
import { defineTool, ToolError } from '../../activities/tool-definition';
import { demoTools } from '../../testing/demo-tools';
import { ConversationClient } from '../../client/conversation-client';
import { AesGcmCodec, ENCRYPTED_ENCODING, KEY_ID_METADATA, PayloadDecryptionError } from '../../codec/aes-gcm-codec';
import { type CodecServer, SESSION_COOKIE, startCodecServer } from '../../codec/codec-server';
import { encryptingDataConverter } from '../../codec/data-converter';
import { KeyRing, parseKeyRing } from '../../codec/keys';
import { loadCodecServerConfig } from '../../codec/server-config';
import { loadConfig } from '../../workers/config';
import { type Harness, namespace, startHarness, uniquePrompt } from '../support/harness';

const b64 = (bytes: Buffer): string => bytes.toString('base64');
const KEY0 = randomBytes(32);
const KEY1 = randomBytes(32);
const RING0 = parseKeyRing(`key0:${b64(KEY0)}`);
const RING10 = parseKeyRing(`key1:${b64(KEY1)},key0:${b64(KEY0)}`);
const RING1 = parseKeyRing(`key1:${b64(KEY1)}`);
const utf8 = (text: string): Uint8Array => Buffer.from(text, 'utf8');
const str = (bytes: Uint8Array | null | undefined): string => Buffer.from(bytes ?? new Uint8Array()).toString('utf8');
const jsonPayload = (value: unknown): Payload => ({
  metadata: { encoding: utf8('json/plain') },
  data: utf8(JSON.stringify(value)),
});

describe('keys', () => {
  test('id:base64 pairs, the first is current; errors name the key, never its material', () => {
    const ring = parseKeyRing(` key1:${b64(KEY1)} , key0:${b64(KEY0).replace(/\+/g, '-').replace(/\//g, '_')}`);
    assert.equal(ring.current.id, 'key1');
    assert.deepEqual(ring.ids, ['key1', 'key0']);
    assert.deepEqual(ring.get('key0'), KEY0);

    const short = b64(randomBytes(31));
    assert.throws(
      () => parseKeyRing(`k:${short}`),
      (error: Error) => /k has 31 bytes/.test(error.message) && !error.message.includes(short),
    );
    assert.throws(() => parseKeyRing(`a:${b64(KEY0)},a:${b64(KEY1)}`), /appears twice/);
    assert.throws(() => parseKeyRing(`a:not*base64`), /key a is not base64/);
    assert.throws(() => parseKeyRing(b64(KEY0)), /not id:base64key/);
    assert.throws(() => parseKeyRing(' , '), /no keys/);
  });

  test('a key ring prints only its ids (String, JSON, inspect)', () => {
    for (const shown of [
      String(RING10),
      JSON.stringify({ keys: RING10 }),
      inspect(RING10),
      inspect({ config: { keys: RING10 } }),
    ]) {
      assert.match(shown, /key1/);
      assert.ok(
        !shown.includes(b64(KEY1)) && !shown.includes(b64(KEY0)) && !shown.includes(KEY1.toString('hex')),
        shown,
      );
    }
  });

  test('workers/config.ts validates PAYLOAD_ENCRYPTION_KEYS with zod, without echoing the value', () => {
    const base = { ANTHROPIC_BASE_URL: 'http://127.0.0.1:1' };
    const config = loadConfig({ ...base, PAYLOAD_ENCRYPTION_KEYS: `key1:${b64(KEY1)},key0:${b64(KEY0)}` });
    assert.ok(config.PAYLOAD_ENCRYPTION_KEYS instanceof KeyRing);
    assert.equal(config.PAYLOAD_ENCRYPTION_KEYS.current.id, 'key1');
    assert.equal(loadConfig(base).PAYLOAD_ENCRYPTION_KEYS, undefined);
    const bad = b64(randomBytes(16));
    assert.throws(
      () => loadConfig({ ...base, PAYLOAD_ENCRYPTION_KEYS: `k:${bad}` }),
      (error: Error) =>
        /PAYLOAD_ENCRYPTION_KEYS: Key k has 16 bytes/.test(error.message) && !error.message.includes(bad),
    );
  });
});

describe('AesGcmCodec', () => {
  test('round-trips payloads; a random IV per payload; key id and encoding in the metadata', async () => {
    const codec = new AesGcmCodec(RING10);
    const original = [
      jsonPayload({ hello: 'world' }),
      jsonPayload('same'),
      jsonPayload('same'),
      { metadata: { encoding: utf8('binary/null') } },
    ];
    const encoded = await codec.encode(original);
    for (const payload of encoded) {
      assert.equal(str(payload.metadata?.encoding), ENCRYPTED_ENCODING);
      assert.equal(str(payload.metadata?.[KEY_ID_METADATA]), 'key1');
      assert.ok(!str(payload.data).includes('world') && !str(payload.data).includes('same'));
    }
    assert.notDeepEqual(encoded[1]!.data, encoded[2]!.data, 'the same plaintext encrypts differently each time');
    const decoded = await codec.decode(encoded);
    assert.deepEqual(
      decoded.map((p) => [str(p.metadata?.encoding), str(p.data)]),
      original.map((p) => [str(p.metadata?.encoding), str(p.data)]),
    );
    await assert.rejects(
      codec.decode([original[0]!]),
      PayloadDecryptionError,
      'a payload that is not encrypted is refused (test/unit/encryption-refusals.test.ts)',
    );
  });

  test('an altered payload, an unknown key id and a wrong key fail with clear errors', async () => {
    const [encoded] = await new AesGcmCodec(RING10).encode([jsonPayload('secret')]);
    const tampered = { ...encoded!, data: Buffer.from(encoded!.data!).map((byte, i) => (i === 20 ? byte ^ 1 : byte)) };
    await assert.rejects(new AesGcmCodec(RING10).decode([tampered]), /authentication failed/);
    await assert.rejects(
      new AesGcmCodec(RING0).decode([encoded!]),
      (error: Error) =>
        error instanceof PayloadDecryptionError &&
        /encryption key "key1" is not configured \(configured: key0\)/.test(error.message),
    );
    const impostor = parseKeyRing(`key1:${b64(randomBytes(32))}`);
    await assert.rejects(
      new AesGcmCodec(impostor).decode([encoded!]),
      /Cannot decrypt payload with key "key1": authentication failed/,
    );
    const relabelled = { ...encoded!, metadata: { ...encoded!.metadata, [KEY_ID_METADATA]: utf8('key0') } };
    await assert.rejects(
      new AesGcmCodec(RING10).decode([relabelled]),
      /authentication failed/,
      'the key id is authenticated',
    );
  });

  test('rotation: encoded with key0, decoded after key1 became current; key1 alone cannot', async () => {
    const [old] = await new AesGcmCodec(RING0).encode([jsonPayload('written before the rotation')]);
    const [fresh] = await new AesGcmCodec(RING10).encode([jsonPayload('written after')]);
    assert.equal(str(fresh!.metadata?.[KEY_ID_METADATA]), 'key1');
    assert.deepEqual(
      (await new AesGcmCodec(RING10).decode([old!, fresh!])).map((p) => JSON.parse(str(p.data))),
      ['written before the rotation', 'written after'],
    );
    await assert.rejects(new AesGcmCodec(RING1).decode([old!]), /key "key0" is not configured/);
  });
});

// ---- End to end: a real worker and client with the codec, the stored history read without it. ----

const CODE = `project-${randomUUID()}`;
const MISSING = `missing-${randomUUID()}`;
const VAULT_ANSWER = `vault-answer-${randomUUID()}`;
const REPLY = `The vault says ${VAULT_ANSWER} (reply ${randomUUID()})`;
const API_KEY = `sk-ant-api03-${randomBytes(30).toString('base64url')}`;
const TOKEN = randomBytes(24).toString('base64url');
const UI_ORIGIN = 'http://localhost:8233';

const vaultLookup = defineTool({
  name: 'vault_lookup',
  description: 'Looks a code name up in the vault.',
  input: z.object({ code_name: z.string().min(1) }),
  run({ code_name }) {
    if (code_name.startsWith('missing')) throw new ToolError('NotInVault', `no vault entry for "${code_name}"`);
    return `${VAULT_ANSWER} for ${code_name}`;
  },
});

let h: Harness;
let codecServer: CodecServer;

before(async () => {
  h = await startHarness({
    tools: [...demoTools, vaultLookup],
    dataConverter: encryptingDataConverter(RING10),
    anthropicApiKey: API_KEY,
  });
  codecServer = await startCodecServer({ codec: new AesGcmCodec(RING10), token: TOKEN, allowedOrigins: [UI_ORIGIN] });
});
after(async () => {
  await codecServer?.close();
  await h?.close();
});

interface Found {
  path: string;
  payload: Payload;
}

/** Every Payload in a history event tree (objects with Uint8Array `data` and/or byte-valued `metadata`). */
function payloadsIn(value: unknown, path = '', found: Found[] = []): Found[] {
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return found;
  const record = value as Record<string, unknown>;
  const metadata = record.metadata as Record<string, unknown> | undefined;
  const looksLikePayload =
    (record.data instanceof Uint8Array || record.data == null) &&
    metadata &&
    typeof metadata === 'object' &&
    Object.values(metadata).length > 0 &&
    Object.values(metadata).every((v) => v instanceof Uint8Array);
  if (looksLikePayload) {
    found.push({ path, payload: record as Payload });
    return found;
  }
  for (const [key, child] of Object.entries(record)) payloadsIn(child, `${path}.${key}`, found);
  return found;
}

/**
 * Payloads that are plain by design: search attributes (status, model, counts: the server filters on them) and the
 * SDK's own local-activity marker bookkeeping (`details.data`: seq, activity type, times; its result is encrypted).
 */
// Search attributes are indexed by the server; the SDK's markers (local-activity bookkeeping, patch ids) hold no
// conversation content.
const plainByDesign = (path: string): boolean =>
  path.includes('searchAttributes') || /markerRecordedEventAttributes\.details\.(data|patch-data)\./.test(path);

async function storedHistory(workflowId: string) {
  // A plain client: no codec, exactly what the server (and anyone reading its database) holds.
  const plain = new Client({ connection: h.client.connection, namespace });
  const history = await plain.workflow.getHandle(workflowId).fetchHistory();
  const bytes = Buffer.from(temporal.api.history.v1.History.encode(history).finish());
  const payloads = payloadsIn(history.events);
  return { history, bytes, payloads };
}

async function postCodec(
  path: string,
  init: { body?: unknown; headers?: Record<string, string>; method?: string } = {},
) {
  return fetch(`${codecServer.url}${path}`, {
    method: init.method ?? 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Namespace': namespace, ...init.headers },
    ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
  });
}

const toJson = (p: Payload) => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v!).toString('base64')]),
  ),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});
const fromJson = (p: { metadata: Record<string, string>; data?: string }): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: Buffer.from(p.data ?? '', 'base64'),
});

describe('a conversation with payload encryption', () => {
  let id: string;
  let prompt: string;

  before(async () => {
    prompt = uniquePrompt(`Tell me what the vault holds for ${CODE}, please.`);
    h.mock.script(prompt, [
      {
        reply: {
          content: [{ type: 'tool_use', name: 'vault_lookup', input: { code_name: MISSING } }],
          stop_reason: 'tool_use',
        },
      },
      {
        reply: {
          content: [{ type: 'tool_use', name: 'vault_lookup', input: { code_name: CODE } }],
          stop_reason: 'tool_use',
        },
      },
      { reply: { content: [{ type: 'text', text: REPLY }], stop_reason: 'end_turn' } },
    ]);
    id = `codec-${randomUUID()}`;
    const reply = await h.conversations.sendMessage(id, prompt, {
      start: {
        tools: ['vault_lookup'],
        closeAfterFirstReply: true,
      },
    });
    assert.equal(reply.text, REPLY, 'the client with the codec reads the reply');
    assert.equal(reply.toolCalls, 2);
  });

  test('the stored history holds no plain text of the conversation and no API key', async () => {
    const { bytes, payloads } = await storedHistory(id);
    const secrets = { prompt, CODE, MISSING, VAULT_ANSWER, REPLY, API_KEY };
    for (const [name, secret] of Object.entries(secrets)) {
      assert.equal(bytes.indexOf(Buffer.from(secret, 'utf8')), -1, `${name} is in the stored history`);
    }
    // The model really was called with that key (so its absence above means something).
    assert.ok(
      h.mock.requests.some(
        (r) => r.headers['x-api-key'] === API_KEY || r.headers.authorization === `Bearer ${API_KEY}`,
      ),
    );
    assert.ok(payloads.length > 10, `found ${payloads.length} payloads`);
    for (const { path, payload } of payloads) {
      if (plainByDesign(path)) continue;
      assert.equal(
        str(payload.metadata?.encoding),
        ENCRYPTED_ENCODING,
        `${path} is not encrypted: ${str(payload.data)}`,
      );
      assert.equal(str(payload.metadata?.[KEY_ID_METADATA]), 'key1', path);
    }
  });

  test('user metadata (static summary/details, activity summaries) and failure messages are encrypted too', async () => {
    const { history, payloads } = await storedHistory(id);
    const started = history.events!.find((e) => e.workflowExecutionStartedEventAttributes)!;
    assert.equal(str(started.userMetadata?.summary?.metadata?.encoding), ENCRYPTED_ENCODING);
    assert.equal(str(started.userMetadata?.details?.metadata?.encoding), ENCRYPTED_ENCODING);
    const scheduled = history.events!.filter((e) => e.activityTaskScheduledEventAttributes);
    assert.ok(scheduled.length >= 5);
    for (const event of scheduled)
      assert.equal(str(event.userMetadata?.summary?.metadata?.encoding), ENCRYPTED_ENCODING);
    const codec = new AesGcmCodec(RING10);
    const [summary] = await codec.decode([started.userMetadata!.summary!]);
    assert.equal(JSON.parse(str(summary!.data)), prompt, 'the static summary is the first line of the first message');
    const toolSummaries = await codec.decode(scheduled.map((e) => e.userMetadata!.summary!));
    assert.ok(toolSummaries.some((p) => JSON.parse(str(p.data)) === `vault_lookup(code_name="${CODE}")`));

    // The tool's error ("no vault entry for …") as a failure: message and stack moved into an encrypted payload.
    const failed = history.events!.find((e) => e.activityTaskFailedEventAttributes)!;
    const failure = failed.activityTaskFailedEventAttributes!.failure!;
    assert.equal(failure.message, 'Encoded failure');
    assert.equal(failure.stackTrace ?? '', '');
    assert.equal(str(failure.encodedAttributes?.metadata?.encoding), ENCRYPTED_ENCODING);
    const [attributes] = await codec.decode([failure.encodedAttributes!]);
    assert.match(JSON.parse(str(attributes!.data)).message, new RegExp(`no vault entry for "${MISSING}"`));
    assert.ok(payloads.some((p) => p.path.includes('encodedAttributes')));
  });

  test('the codec server decodes the stored payloads back to the original, as the Web UI asks', async () => {
    const { payloads } = await storedHistory(id);
    const encrypted = payloads.filter((p) => !plainByDesign(p.path)).map((p) => p.payload);
    const response = await postCodec('/decode', {
      body: { payloads: encrypted.map(toJson) },
      headers: { Authorization: `Bearer ${TOKEN}`, Origin: UI_ORIGIN },
    });
    assert.equal(response.status, 200, await response.clone().text());
    assert.equal(response.headers.get('access-control-allow-origin'), UI_ORIGIN);
    const body = (await response.json()) as { payloads: { metadata: Record<string, string>; data?: string }[] };
    const decoded = body.payloads.map(fromJson);
    const local = await new AesGcmCodec(RING10).decode(encrypted);
    assert.deepEqual(
      decoded.map((p) => [str(p.metadata?.encoding), str(p.data)]),
      local.map((p) => [str(p.metadata?.encoding), str(p.data)]),
    );
    const text = decoded.map((p) => str(p.data)).join('\n');
    for (const expected of [prompt, CODE, VAULT_ANSWER, REPLY])
      assert.ok(text.includes(JSON.stringify(expected).slice(1, -1)), expected);
    assert.ok(!text.includes(API_KEY), 'nor does the API key appear in any decoded payload');

    // …and /encode is its inverse (the UI encodes inputs it sends, e.g. a signal's argument).
    const encodedBack = await postCodec('/some/prefix/encode', {
      body: { payloads: [toJson(jsonPayload(REPLY))] },
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(encodedBack.status, 200);
    const [again] = (
      (await encodedBack.json()) as { payloads: { metadata: Record<string, string>; data?: string }[] }
    ).payloads.map(fromJson);
    assert.equal(str(again!.metadata?.encoding), ENCRYPTED_ENCODING);
    assert.equal(JSON.parse(str((await new AesGcmCodec(RING10).decode([again!]))[0]!.data)), REPLY);
  });

  test('a model error (401) keeps the API key out of the error message and the decoded history', async () => {
    const failing = uniquePrompt(`This one is rejected ${randomUUID()}`);
    h.mock.script(failing, [{ fault: 'status', status: 401 }]);
    const failId = `codec-401-${randomUUID()}`;
    await assert.rejects(
      h.conversations.sendMessage(failId, failing, { start: { tools: [], closeAfterFirstReply: true } }),
      (error: Error) => {
        assert.match(error.message, /401/);
        assert.ok(!error.message.includes(API_KEY));
        return true;
      },
    );
    const { history, bytes, payloads } = await storedHistory(failId);
    assert.equal(bytes.indexOf(Buffer.from(API_KEY)), -1);
    assert.equal(bytes.indexOf(Buffer.from(failing)), -1);
    const closed = history.events!.find((e) => e.workflowExecutionFailedEventAttributes);
    assert.ok(closed, 'the workflow failed');
    assert.equal(
      closed.workflowExecutionFailedEventAttributes!.failure!.message,
      'Encoded failure',
      'the workflow bundle has the failure converter',
    );
    const decoded = await new AesGcmCodec(RING10).decode(
      payloads.filter((p) => !plainByDesign(p.path)).map((p) => p.payload),
    );
    const text = decoded.map((p) => str(p.data)).join('\n');
    assert.match(text, /401/);
    assert.ok(!text.includes(API_KEY));
  });
});

describe('the codec server', () => {
  const sample = toJson(jsonPayload('hello'));

  test('refuses /encode and /decode without the token (401), or with a wrong one', async () => {
    for (const headers of [
      {},
      { Authorization: 'Bearer wrong-token' },
      { Authorization: `Basic ${TOKEN}` },
      { Cookie: `${SESSION_COOKIE}=forged` },
    ] as Record<string, string>[]) {
      for (const path of ['/decode', '/encode']) {
        const response = await postCodec(path, { body: { payloads: [sample] }, headers });
        assert.equal(response.status, 401, `${path} ${JSON.stringify(headers)}`);
        assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer/);
      }
    }
  });

  test('answers the CORS preflight for the Web UI origin, and refuses other origins', async () => {
    const preflight = await fetch(`${codecServer.url}/decode`, {
      method: 'OPTIONS',
      headers: {
        Origin: UI_ORIGIN,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type,x-namespace,authorization',
      },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), UI_ORIGIN);
    assert.equal(preflight.headers.get('access-control-allow-credentials'), 'true');
    assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /POST/);
    const allowedHeaders = (preflight.headers.get('access-control-allow-headers') ?? '').toLowerCase();
    for (const header of ['content-type', 'x-namespace', 'authorization'])
      assert.ok(allowedHeaders.includes(header), header);

    const evil = await fetch(`${codecServer.url}/decode`, {
      method: 'OPTIONS',
      headers: { Origin: 'http://evil.example', 'Access-Control-Request-Method': 'POST' },
    });
    assert.equal(evil.status, 403);
    assert.equal(evil.headers.get('access-control-allow-origin'), null);
    const evilPost = await postCodec('/decode', {
      body: { payloads: [sample] },
      headers: { Origin: 'http://evil.example', Authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(evilPost.status, 403);
  });

  test('a browser logs in once at /login; the session cookie (credentials: include) then decodes', async () => {
    const page = await fetch(`${codecServer.url}/login`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<form/);
    const wrong = await fetch(`${codecServer.url}/login`, {
      method: 'POST',
      body: new URLSearchParams({ token: 'nope' }),
    });
    assert.equal(wrong.status, 401);
    const login = await fetch(`${codecServer.url}/login`, {
      method: 'POST',
      body: new URLSearchParams({ token: TOKEN }),
    });
    assert.equal(login.status, 200);
    const setCookie = login.headers.get('set-cookie') ?? '';
    assert.match(setCookie, new RegExp(`^${SESSION_COOKIE}=[^;]+; HttpOnly; SameSite=Strict; Path=/`));
    assert.ok(!setCookie.includes(TOKEN), 'the cookie is derived from the token, not the token');
    const [encrypted] = await new AesGcmCodec(RING10).encode([jsonPayload('via cookie')]);
    const response = await postCodec('/decode', {
      body: { payloads: [toJson(encrypted!)] },
      headers: { Cookie: setCookie.split(';')[0]!, Origin: UI_ORIGIN },
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('access-control-allow-credentials'), 'true');
    const [decoded] = (
      (await response.json()) as { payloads: { metadata: Record<string, string>; data?: string }[] }
    ).payloads.map(fromJson);
    assert.equal(JSON.parse(str(decoded!.data)), 'via cookie');
  });

  test('bad requests: not JSON, no payloads array, undecodable payload (400); wrong method (405); unknown path (404)', async () => {
    const auth = { Authorization: `Bearer ${TOKEN}` };
    const notJson = await fetch(`${codecServer.url}/decode`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: '{nope',
    });
    assert.equal(notJson.status, 400);
    assert.equal((await postCodec('/decode', { body: { nothing: true }, headers: auth })).status, 400);
    const [foreign] = await new AesGcmCodec(parseKeyRing(`other:${b64(randomBytes(32))}`)).encode([jsonPayload('x')]);
    const unknownKey = await postCodec('/decode', { body: { payloads: [toJson(foreign!)] }, headers: auth });
    assert.equal(unknownKey.status, 400);
    assert.match(await unknownKey.text(), /encryption key "other" is not configured/);
    assert.equal((await fetch(`${codecServer.url}/decode`, { headers: auth })).status, 405);
    assert.equal((await postCodec('/elsewhere', { body: {}, headers: auth })).status, 404);
  });
});

describe('the codec server: sessions end, and logins are limited', () => {
  /** A codec server on a clock the test moves. */
  async function clockedServer(options: { sessionMaxAgeSeconds?: number } = {}) {
    let nowMs = Date.parse('2026-03-01T09:00:00Z');
    const server = await startCodecServer({
      codec: new AesGcmCodec(RING10),
      token: TOKEN,
      allowedOrigins: [UI_ORIGIN],
      now: () => nowMs,
      ...options,
    });
    const login = (token: string) =>
      fetch(`${server.url}/login`, { method: 'POST', body: new URLSearchParams({ token }) });
    const decodeWith = async (cookieHeader: string) => {
      const [encrypted] = await new AesGcmCodec(RING10).encode([jsonPayload('session check')]);
      return fetch(`${server.url}/decode`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Cookie: cookieHeader },
        body: JSON.stringify({ payloads: [toJson(encrypted!)] }),
      });
    };
    return { server, login, decodeWith, advance: (ms: number) => (nowMs += ms) };
  }

  test('a login lasts 8 hours by default: the cookie says so (Max-Age), and the server refuses it afterwards', async () => {
    const { server, login, decodeWith, advance } = await clockedServer();
    try {
      const response = await login(TOKEN);
      assert.equal(response.status, 200);
      const setCookie = response.headers.get('set-cookie') ?? '';
      const session = setCookie.split(';')[0]!;
      assert.equal((await decodeWith(session)).status, 200);
      advance(8 * 3600_000 - 1_000);
      assert.equal((await decodeWith(session)).status, 200, 'still within its lifetime');
      advance(1_000);
      assert.equal((await decodeWith(session)).status, 401, 'a browser that kept the cookie past Max-Age');
      const forged = `${SESSION_COOKIE}=${session.split('=')[1]!.replace(/^\d+/, '9999999999')}`;
      assert.equal((await decodeWith(forged)).status, 401, 'an issue time moved on is not the one signed');
      assert.match(setCookie, /; Max-Age=28800(;|$)/, 'and the browser drops it then');
    } finally {
      await server.close();
    }
  });

  test('the lifetime is configurable (CODEC_SERVER_SESSION_MAX_AGE)', async () => {
    const { server, login, decodeWith, advance } = await clockedServer({ sessionMaxAgeSeconds: 600 });
    try {
      const setCookie = (await login(TOKEN)).headers.get('set-cookie') ?? '';
      assert.match(setCookie, /; Max-Age=600(;|$)/);
      advance(600_000);
      assert.equal((await decodeWith(setCookie.split(';')[0]!)).status, 401);
    } finally {
      await server.close();
    }
    const base = { PAYLOAD_ENCRYPTION_KEYS: `key1:${b64(KEY1)}`, CODEC_SERVER_TOKEN: TOKEN };
    assert.equal(loadCodecServerConfig(base).CODEC_SERVER_SESSION_MAX_AGE, 8 * 3600);
    assert.equal(
      loadCodecServerConfig({ ...base, CODEC_SERVER_SESSION_MAX_AGE: '30 minutes' }).CODEC_SERVER_SESSION_MAX_AGE,
      1800,
    );
    assert.throws(
      () => loadCodecServerConfig({ ...base, CODEC_SERVER_SESSION_MAX_AGE: 'forever' }),
      /CODEC_SERVER_SESSION_MAX_AGE: must be a duration/,
    );
  });

  test('five failed logins a minute from one address, then 429 with Retry-After, even for the right token, until the minute is over', async () => {
    const { server, login, advance } = await clockedServer();
    try {
      for (let i = 0; i < 5; i++) assert.equal((await login(`guess-${i}`)).status, 401);
      const limited = await login('guess-5');
      assert.equal(limited.status, 429);
      assert.equal(limited.headers.get('retry-after'), '60');
      assert.equal((await login(TOKEN)).status, 429, 'no more attempts, right or wrong, until the window moves on');
      advance(30_000);
      assert.equal((await login(TOKEN)).headers.get('retry-after'), '30');
      advance(30_000);
      assert.equal((await login(TOKEN)).status, 200);
      assert.equal((await login('guess-6')).status, 401, 'a successful login clears the count');
    } finally {
      await server.close();
    }
  });
});

describe('key rotation with a running worker', () => {
  test('a history written with key0 decodes after key1 becomes current', async () => {
    // Before the rotation: a client that only knows key0 starts the conversation (its input is encrypted with key0).
    // The worker already has both keys (deploy the decrypting side first), with key1 current.
    const oldClient = new ConversationClient({
      client: new Client({ connection: h.client.connection, namespace, dataConverter: encryptingDataConverter(RING0) }),
      taskQueue: h.taskQueue,
      tools: [...demoTools, vaultLookup].map((tool) => tool.name),
    });
    const prompt = uniquePrompt(`Rotation check for ${randomUUID()}`);
    const id = await oldClient.startConversation({ firstMessage: prompt, tools: [], closeAfterFirstReply: true });
    const reply = await h.conversations.awaitTurn(id, 1);
    assert.equal(reply.status, 'completed');

    const { payloads } = await storedHistory(id);
    const encrypted = payloads.filter((p) => !plainByDesign(p.path)).map((p) => p.payload);
    const keyIds = new Set(encrypted.map((p) => str(p.metadata?.[KEY_ID_METADATA])));
    assert.deepEqual([...keyIds].sort(), ['key0', 'key1'], 'the history holds payloads of both keys');

    // After the rotation (key1 current, key0 kept for reading): everything decodes, through the codec server too.
    const decoded = await new AesGcmCodec(RING10).decode(encrypted);
    assert.ok(decoded.some((p) => str(p.data).includes(prompt)));
    const response = await postCodec('/decode', {
      body: { payloads: encrypted.map(toJson) },
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(response.status, 200);
    assert.equal(((await response.json()) as { payloads: unknown[] }).payloads.length, encrypted.length);
    // Dropping key0 too early makes the old payloads unreadable, with an error that names the missing key.
    await assert.rejects(
      new AesGcmCodec(RING1).decode(encrypted),
      /encryption key "key0" is not configured \(configured: key1\)/,
    );
  });
});
