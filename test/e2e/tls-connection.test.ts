// Every command of the package reaches a Temporal server behind TLS — as Temporal Cloud is — with the same environment
// variables: the worker, the CLI and the gateway, through a TLS front that wants the server's name, a private CA and a
// client certificate (mTLS), and that notes the API key each call carries.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import { startMessagesApi } from '../../testing/messages-api/server';
import type { MessagesApi } from '../../testing/messages-api/types';
import { startWithOutput } from '../support/run-script';
import { temporalAddress } from '../support/harness';
import { startTlsProxy, type TlsProxy } from '../support/tls-proxy';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';

const ROOT = path.resolve(__dirname, '..', '..');
const API_KEY = 'cloud-api-key-of-this-test';
const run = promisify(execFile);

let proxy: TlsProxy;
let api: MessagesApi;
let worker: WorkerProcess | undefined;
let settings: Record<string, string>;

before(async () => {
  proxy = await startTlsProxy(temporalAddress);
  api = await startMessagesApi();
  settings = {
    TEMPORAL_ADDRESS: proxy.address,
    TEMPORAL_TASK_QUEUE: `tls-${randomUUID()}`,
    TEMPORAL_API_KEY: API_KEY,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: proxy.caCertPath,
    TEMPORAL_TLS_SERVER_NAME: proxy.serverName,
    TEMPORAL_TLS_CLIENT_CERT_PATH: proxy.clientCertPath,
    TEMPORAL_TLS_CLIENT_KEY_PATH: proxy.clientKeyPath,
  };
});
after(async () => {
  await worker?.kill();
  await api?.close();
  await proxy?.close();
});

test('the worker, the CLI and the gateway all connect through TLS with a client certificate and an API key', async () => {
  worker = await startWorkerProcess({
    temporalAddress: proxy.address,
    taskQueue: settings.TEMPORAL_TASK_QUEUE!,
    anthropicBaseUrl: api.url,
    executionLog: path.join(mkdtempSync(path.join(tmpdir(), 'tls-worker-')), 'executions.jsonl'),
    env: settings,
  });
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, ...settings };

  const id = `tls-${randomUUID()}`;
  const cliCallsFrom = proxy.calls.length;
  const { stdout } = await run(
    process.execPath,
    [
      ...['--import', 'tsx', path.join(ROOT, 'client', 'cli.ts'), 'start', '--id', id, '--json'],
      ...['--tools', 'get_ticker_symbol,get_current_stock_price', 'What is the current stock price of General Motors?'],
    ],
    { cwd: ROOT, env },
  );
  assert.match((JSON.parse(stdout) as { reply: { text: string } }).reply.text, /38\.50/);
  assert.ok(
    proxy.calls.slice(cliCallsFrom).some((call) => call.path.endsWith('/StartWorkflowExecution')),
    'the CLI started the conversation through the TLS front',
  );

  const gateway = startWithOutput(process.execPath, ['--import', 'tsx', path.join(ROOT, 'gateway', 'main.ts')], {
    cwd: ROOT,
    env: { ...env, GATEWAY_TOKEN: 'a-token-of-sixteen-chars', GATEWAY_PORT: '0' },
  });
  try {
    const url = await gateway.waitFor(/Gateway listening on (http:\/\/\S+)/);
    const gatewayCallsFrom = proxy.calls.length;
    const state = await fetch(`${url}/api/conversations/${id}`, {
      headers: { authorization: 'Bearer a-token-of-sixteen-chars' },
    });
    assert.equal(state.status, 200, await state.clone().text());
    assert.equal(((await state.json()) as { status: string }).status, 'awaiting_user');
    assert.ok(proxy.calls.length > gatewayCallsFrom, 'the gateway read the state through the TLS front');
  } finally {
    assert.equal(await gateway.stop(), 0, gateway.output());
  }

  // Every call, whoever made it, came with the client certificate and the API key.
  const strays = proxy.calls.filter(
    (call) => call.authorization !== `Bearer ${API_KEY}` || call.clientCertCn !== 'test-client',
  );
  assert.deepEqual(strays, []);
});
