// Scripting the local Messages API from another process, as a service does whose worker runs on its own: the
// server started as a command (`npm run messages-api`) with a script file, more steps sent over HTTP while it runs,
// what it received read back over HTTP — and the real SDK as the worker's client.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { DEMO_MODEL } from '../../testing/messages-api/fixtures';
import type { RecordedRequest } from '../../testing/messages-api/types';

const MAIN = path.resolve(__dirname, '..', '..', 'testing', 'messages-api', 'main.ts');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'messages-api-scripts-'));

/** The server as a command; resolves with its URL once it listens, or with its exit code and output if it stops. */
function startCommand(
  env: NodeJS.ProcessEnv,
): Promise<{ child: ChildProcess; url?: string; code?: number; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: { ...process.env, MESSAGES_API_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve) => {
    const read = (chunk: Buffer): void => {
      output += chunk.toString();
      const url = /listening on (http:\/\/\S+)/.exec(output)?.[1];
      if (url) resolve({ child, url, output });
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code) => resolve({ child, code: code ?? -1, output }));
  });
}

const ask = (client: Anthropic, text: string) =>
  client.messages.create({ model: DEMO_MODEL, max_tokens: 256, messages: [{ role: 'user', content: text }] });

describe('the local Messages API scripted from outside its process', () => {
  let server: Awaited<ReturnType<typeof startCommand>>;
  let client: Anthropic;

  before(async () => {
    const file = path.join(dir, 'scripts.json');
    fs.writeFileSync(
      file,
      JSON.stringify({
        '[from-file]': [
          { reply: { content: [{ type: 'text', text: 'Scripted from a file.' }], stop_reason: 'end_turn' } },
        ],
      }),
    );
    server = await startCommand({ MESSAGES_API_SCRIPT_FILE: file });
    assert.ok(server.url, `the server started: ${server.output}`);
    client = new Anthropic({ apiKey: 'test-key', baseURL: server.url, maxRetries: 0 });
  });
  after(() => {
    server?.child.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a script file given at start answers the conversation it names; others get the demo model', async () => {
    const scripted = await ask(client, 'Hello [from-file]');
    assert.deepEqual(scripted.content, [{ type: 'text', text: 'Scripted from a file.', citations: null }]);
    const demo = await ask(client, 'Hello [from-file]'); // its one step is spent
    assert.notEqual((demo.content[0] as { text?: string }).text, 'Scripted from a file.');
  });

  test('POST /_test/scripts queues steps while it runs: a 529 with retry-after, then a reply', async () => {
    const posted = await fetch(`${server.url}/_test/scripts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        match: '[over-http]',
        steps: [
          { fault: 'status', status: 529, headers: { 'retry-after': '1' } },
          { reply: { content: [{ type: 'text', text: 'After the overload.' }], stop_reason: 'end_turn' } },
        ],
      }),
    });
    assert.equal(posted.status, 200);
    assert.deepEqual(await posted.json(), { match: '[over-http]', queued: 2 });
    const failure = await ask(client, 'Hi [over-http]').then(
      () => assert.fail('the 529 was not sent'),
      (error: unknown) => error,
    );
    assert.ok(failure instanceof Anthropic.APIError && failure.status === 529, String(failure));
    assert.equal(failure.headers?.get('retry-after'), '1');
    const reply = await ask(client, 'Hi [over-http]');
    assert.equal((reply.content[0] as { text: string }).text, 'After the overload.');

    const read = await fetch(`${server.url}/_test/requests?match=${encodeURIComponent('[over-http]')}`);
    const { requests } = (await read.json()) as { requests: RecordedRequest[] };
    assert.deepEqual(
      requests.map((r) => [r.status, r.match]),
      [
        [529, '[over-http]'],
        [200, '[over-http]'],
      ],
    );
  });

  test('a malformed script is refused with 400 naming where it is wrong, and queues nothing', async () => {
    for (const body of [
      'not json',
      JSON.stringify({ match: '', steps: [{ demo: true }] }),
      JSON.stringify({ match: '[bad]', steps: [{ fault: 'status', status: 200 }] }),
      JSON.stringify({
        match: '[bad]',
        steps: [{ reply: { content: [{ type: 'txt', text: 'x' }], stop_reason: 'end_turn' } }],
      }),
      JSON.stringify({ match: '[bad]', steps: [{ demo: true, delayMs: -1 }] }),
    ]) {
      const response = await fetch(`${server.url}/_test/scripts`, { method: 'POST', body });
      assert.equal(response.status, 400, body);
      assert.match(((await response.json()) as { error: string }).error, /JSON|not a script:\n\S/);
    }
    const reply = await ask(client, 'Hello [bad]');
    assert.equal(reply.stop_reason, 'end_turn', 'the demo model answered: nothing was queued');
    const unknown = await fetch(`${server.url}/_test/nothing`);
    assert.equal(unknown.status, 404);
  });

  test('DELETE /_test/scripts forgets every script and request', async () => {
    await fetch(`${server.url}/_test/scripts`, {
      method: 'POST',
      body: JSON.stringify({ match: '[forgotten]', steps: [{ fault: 'status', status: 500 }] }),
    });
    assert.equal((await fetch(`${server.url}/_test/scripts`, { method: 'DELETE' })).status, 200);
    assert.equal((await ask(client, 'Hello [forgotten]')).stop_reason, 'end_turn');
    const { requests } = (await (await fetch(`${server.url}/_test/requests`)).json()) as { requests: unknown[] };
    assert.equal(requests.length, 1, 'only the request made after the reset');
  });

  test('a script file that is not one stops the command with exit code 2 and the path of the problem', async () => {
    const file = path.join(dir, 'bad.json');
    fs.writeFileSync(file, JSON.stringify({ '[x]': [{ reply: { content: 'text', stop_reason: 'end_turn' } }] }));
    const bad = await startCommand({ MESSAGES_API_SCRIPT_FILE: file });
    assert.equal(bad.code, 2, bad.output);
    assert.match(bad.output, /is not a script file:\n\[x\]\.0/);
    const missing = await startCommand({ MESSAGES_API_SCRIPT_FILE: path.join(dir, 'missing.json') });
    assert.equal(missing.code, 2);
    assert.match(missing.output, /MESSAGES_API_SCRIPT_FILE .*missing\.json: ENOENT/);
  });
});
