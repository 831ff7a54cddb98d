// The dev server the test runner started (scripts/run-tests.ts exports TEMPORAL_ADDRESS etc.), and a second,
// private one that is SIGKILLed and restarted on the same SQLite file to show that state survives a crash.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { type SearchAttributePair } from '@temporalio/common';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import { connectOrStartDevServer, type DevServer, startDevServer } from '../../testing/dev-server';
import { isPortOpen } from '../../testing/free-port';
import {
  ConversationAwaitingApproval,
  ConversationModel,
  ConversationStatus,
  registeredSearchAttributes,
  ConversationTurns,
} from '../../common/search-attributes';
import { waitUntil } from '../support/wait-until';

function requireEnv(name: string): string {
  const value = process.env[name];
  assert.ok(value, `${name} is not set: run the tests with \`npm test\` (scripts/run-tests.ts)`);
  return value;
}

const address = requireEnv('TEMPORAL_ADDRESS');
const namespace = requireEnv('TEMPORAL_NAMESPACE');
const cliPath = requireEnv('TEMPORAL_CLI_PATH');

/** How long the server may take to answer what a test waits for. */
const SERVER_WAIT = { timeoutMs: 15_000, everyMs: 200 };

function uniqueId(prefix: string): string {
  return `${prefix}-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
}

describe('the shared dev server', () => {
  let connection: Connection;
  let client: Client;

  before(async () => {
    connection = await Connection.connect({ address });
    client = new Client({ connection, namespace });
  });
  after(async () => {
    await connection?.close();
  });

  test('the runner exported a usable environment', () => {
    assert.match(address, /^[\w.-]+:\d+$/);
    assert.ok(fs.statSync(cliPath).isFile(), `TEMPORAL_CLI_PATH=${cliPath} is not a file`);
    const uiUrl = process.env.TEMPORAL_UI_URL;
    if (uiUrl) assert.match(uiUrl, /^http:\/\/[\w.-]+:\d+$/);
  });

  test('every conversation search attribute is registered with its type', async () => {
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
    assert.ok(customAttributes, 'listSearchAttributes returned no custom attributes');
    for (const key of registeredSearchAttributes) {
      assert.equal(
        customAttributes[key.name],
        encodeSearchAttributeIndexedValueType(key.type),
        `${key.name} should be registered as ${key.type}`,
      );
    }
  });

  test('typed search attributes can be set on a workflow and queried', async () => {
    const workflowId = uniqueId('sa-query');
    const status = uniqueId('status');
    const pairs: SearchAttributePair[] = [
      { key: ConversationStatus, value: status },
      { key: ConversationModel, value: 'claude-test' },
      { key: ConversationTurns, value: 7 },
      { key: ConversationAwaitingApproval, value: true },
    ];
    // No worker polls tq-none, so the workflow just sits there, running, with its attributes.
    const handle = await client.workflow.start('nonexistent-type', {
      taskQueue: 'tq-none',
      workflowId,
      typedSearchAttributes: pairs,
    });
    try {
      const query = `ConversationStatus = "${status}" AND ConversationTurns >= 7 AND ConversationAwaitingApproval = true`;
      const found = await waitUntil(
        'the visibility query to find the workflow',
        async () => {
          const ids: string[] = [];
          for await (const execution of client.workflow.list({ query })) ids.push(execution.workflowId);
          return ids.length > 0 ? ids : undefined;
        },
        SERVER_WAIT,
      );
      assert.deepEqual(found, [workflowId]);
      const description = await handle.describe();
      assert.equal(description.typedSearchAttributes.get(ConversationModel), 'claude-test');
      assert.equal(description.typedSearchAttributes.get(ConversationTurns), 7);
    } finally {
      await handle.terminate('test done').catch(() => {});
    }
  });

  test('connectOrStartDevServer reuses TEMPORAL_ADDRESS and does not own it', async () => {
    const reused = await connectOrStartDevServer();
    assert.equal(reused.address, address);
    assert.equal(reused.namespace, namespace);
    assert.equal(reused.process, undefined);
    await assert.rejects(reused.kill(), /not started by us/);
    await reused.stop();
    // stop() on a reused server is a no-op: the shared server still answers.
    await connection.workflowService.describeNamespace({ namespace });
  });
});

describe('a private dev server', () => {
  let server: DevServer | undefined;
  after(async () => {
    await server?.stop();
  });

  test(
    'survives SIGKILL: restart() on the same SQLite file keeps workflows and their history',
    { timeout: 180_000 },
    async () => {
      const started = Date.now();
      server = await startDevServer({ cliPath, namespace: 'crash-test' });
      const startMs = Date.now() - started;
      assert.notEqual(server.address, address, 'the private server must not be the shared one');
      assert.equal(server.namespace, 'crash-test');
      assert.ok(fs.existsSync(server.dbFile), `the SQLite file ${server.dbFile} should exist`);
      const firstPid = server.process?.pid;
      assert.ok(firstPid, 'the server process should be running');
      const [host, port] = server.address.split(':') as [string, string];

      const workflowId = uniqueId('crash');
      let runId: string;
      {
        const connection = await Connection.connect({ address: server.address });
        try {
          const client = new Client({ connection, namespace: server.namespace });
          const handle = await client.workflow.start('nonexistent-type', {
            taskQueue: 'tq-none',
            workflowId,
            typedSearchAttributes: [{ key: ConversationStatus, value: 'before-crash' }],
          });
          runId = handle.firstExecutionRunId;
          await handle.signal('ping', 'before the crash');
          // The UI is up too.
          const ui = await fetch(server.uiUrl);
          assert.equal(ui.status, 200, `GET ${server.uiUrl}`);
        } finally {
          await connection.close();
        }
      }

      const processBeforeKill = server.process;
      await server.kill();
      assert.equal(processBeforeKill?.signalCode, 'SIGKILL');
      assert.equal(await isPortOpen(host, Number(port)), false, 'nothing should listen after kill()');
      assert.ok(fs.existsSync(server.dbFile), 'kill() must keep the SQLite file');

      const restarted = Date.now();
      await server.restart();
      const restartMs = Date.now() - restarted;
      assert.notEqual(server.process?.pid, firstPid, 'restart() should run a new process');
      assert.equal(server.address, `${host}:${port}`, 'restart() keeps the port');

      const connection = await Connection.connect({ address: server.address });
      try {
        const client = new Client({ connection, namespace: server.namespace });
        const description = await client.workflow.getHandle(workflowId).describe();
        assert.equal(description.runId, runId);
        assert.equal(description.status.name, 'RUNNING');
        assert.equal(description.typedSearchAttributes.get(ConversationStatus), 'before-crash');
        const history = await client.workflow.getHandle(workflowId).fetchHistory();
        const signals = (history.events ?? []).filter((event) => event.workflowExecutionSignaledEventAttributes);
        assert.equal(signals.length, 1, 'the signal sent before the crash is still in the history');
        assert.equal(signals[0]?.workflowExecutionSignaledEventAttributes?.signalName, 'ping');
        // Search attributes are still registered (and queryable) after the restart.
        const { customAttributes } = await connection.operatorService.listSearchAttributes({
          namespace: server.namespace,
        });
        for (const key of registeredSearchAttributes) {
          assert.equal(customAttributes?.[key.name], encodeSearchAttributeIndexedValueType(key.type), key.name);
        }
        const ids = await waitUntil(
          'the restarted server to answer visibility queries',
          async () => {
            const found: string[] = [];
            for await (const e of client.workflow.list({ query: 'ConversationStatus = "before-crash"' }))
              found.push(e.workflowId);
            return found.length > 0 ? found : undefined;
          },
          SERVER_WAIT,
        );
        assert.deepEqual(ids, [workflowId]);
        await assert.rejects(client.workflow.getHandle(uniqueId('never-started')).describe(), WorkflowNotFoundError);
      } finally {
        await connection.close();
      }

      const dbFile = server.dbFile;
      const lastProcess = server.process;
      await server.stop();
      server = undefined;
      assert.notEqual(lastProcess?.exitCode ?? lastProcess?.signalCode, null, 'stop() waits for the process to exit');
      assert.equal(fs.existsSync(dbFile), false, 'stop() removes the temp SQLite file it created');
      assert.equal(await isPortOpen(host, Number(port)), false, 'nothing should listen after stop()');
      // Not assertions, but worth seeing in the TAP output.
      console.log(`dev server start ${startMs} ms, restart after SIGKILL ${restartMs} ms`);
    },
  );
});

describe('ports taken while a dev server starts', () => {
  // A stand-in for the CLI that logs every start, fails the first one as a port taken by someone else would, and
  // runs the real CLI after that.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-cli-'));
  const starts = path.join(dir, 'starts');
  const fakeCli = path.join(dir, 'temporal');
  const failFirst = path.join(dir, 'fail-first');
  fs.writeFileSync(
    fakeCli,
    [
      '#!/bin/sh',
      `echo start >> '${starts}'`,
      `if [ -f '${failFirst}' ]; then rm '${failFirst}'`,
      `  echo '{"level":"FATAL","message":"listen tcp 127.0.0.1:1: bind: address already in use"}'; exit 1; fi`,
      `exec '${cliPath}' "$@"`,
    ].join('\n'),
    { mode: 0o755 },
  );
  const startCount = (): number =>
    fs.existsSync(starts) ? fs.readFileSync(starts, 'utf8').split('\n').filter(Boolean).length : 0;
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('a port it picked was taken: it starts again on other ports', { timeout: 120_000 }, async () => {
    fs.rmSync(starts, { force: true });
    fs.writeFileSync(failFirst, '');
    const lines: string[] = [];
    const server = await startDevServer({ cliPath: fakeCli, log: (line) => lines.push(line) });
    try {
      assert.equal(startCount(), 2);
      assert.ok(
        lines.some((line) => /Port 1 was taken .*trying other ports/.test(line)),
        lines.join('\n'),
      );
      assert.equal((await fetch(server.uiUrl)).status, 200, 'the second start is a working server');
    } finally {
      await server.stop();
    }
  });

  test('a port the caller gave is taken: one start, and an error that says so', { timeout: 60_000 }, async () => {
    fs.rmSync(starts, { force: true });
    const squatter = net.createServer();
    await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = squatter.address() as net.AddressInfo;
      await assert.rejects(startDevServer({ cliPath: fakeCli, uiPort: port }), /address already in use/);
      assert.equal(startCount(), 1, 'not tried again: the caller asked for that port');
    } finally {
      await new Promise<void>((resolve) => squatter.close(() => resolve()));
    }
  });
});
