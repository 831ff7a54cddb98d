// A worker of this build starting against a namespace set up for the previous release (every search attribute but
// ForkedFrom, which this build added): with WORKER_SEARCH_ATTRIBUTES=check (the default) it refuses to start and
// prints the exact `temporal operator search-attribute create` command for what is missing; with `add` it adds it and
// starts. The namespace is a fresh one on the real dev server, holding the old set only.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { Connection } from '@temporalio/client';
import { ForkedFrom, registeredSearchAttributes } from '../../common/search-attributes';
import { namespaceAttributes } from '../../client/namespace-search-attributes';
import { ensureSearchAttributes } from '../../testing';
import { ensureNamespace } from '../../testing/dev-server/ensure-namespace';
import { ConfigError } from '../../workers/config';
import { searchAttributesAtStart } from '../../workers/search-attributes-at-start';
import { temporalAddress } from '../support/harness';
import { startWorkerProcess } from '../support/worker-process';
import { waitUntil } from '../support/wait-until';

const namespace = `old-set-${randomUUID().slice(0, 8)}`;
const oldSet = registeredSearchAttributes.filter((key) => key.name !== ForkedFrom.name);
const createForkedFrom = `temporal operator search-attribute create --namespace ${namespace} --type Keyword --name ForkedFrom`;
let connection: Connection;

before(async () => {
  connection = await Connection.connect({ address: temporalAddress });
  await ensureNamespace(connection, namespace);
  // The frontend learns of a new namespace when its cache refreshes (seconds).
  await waitUntil(
    `namespace ${namespace} to hold the old set`,
    () =>
      ensureSearchAttributes(connection, namespace, oldSet).then(
        () => true,
        () => false,
      ),
    { timeoutMs: 60_000, everyMs: 500 },
  );
});
after(async () => {
  await connection?.close();
});

function workerOn(mode: 'check' | 'add') {
  return startWorkerProcess({
    namespace,
    taskQueue: `old-set-${randomUUID()}`,
    anthropicBaseUrl: 'http://127.0.0.1:9', // never called: the worker takes no work here
    executionLog: '/dev/null',
    env: { WORKER_SEARCH_ATTRIBUTES: mode },
  });
}

test('check (the default): a namespace lacking ForkedFrom is refused with the command that adds it, and left as it is', async () => {
  const warnings: string[] = [];
  const error = await searchAttributesAtStart(connection, namespace, 'check', (m) => warnings.push(m)).then(
    () => assert.fail('the check passed on a namespace without ForkedFrom'),
    (err: unknown) => err,
  );
  assert.ok(error instanceof ConfigError, String(error));
  assert.match(error.message, /Missing: ForkedFrom\./);
  assert.ok(error.message.includes(createForkedFrom), error.message);
  // Only what is missing: no command names an attribute the namespace has.
  assert.doesNotMatch(error.message, /--name ConversationStatus/);
  assert.deepEqual(warnings, []);
  assert.deepEqual(
    (await namespaceAttributes(connection, namespace)).missing.map((key) => key.name),
    ['ForkedFrom'],
  );

  // The worker process refuses the same way: it exits before "Worker ready", with the command in its output.
  const refused = await workerOn('check').then(
    () => assert.fail('the worker started on a namespace without ForkedFrom'),
    (err: unknown) => err as Error,
  );
  assert.match(refused.message, /exited before it was ready \(exit code 1\)/);
  assert.ok(refused.message.includes(createForkedFrom), refused.message);
});

test('add: the worker adds ForkedFrom and starts; the check then passes', async () => {
  const worker = await workerOn('add');
  try {
    assert.ok(worker.tail().includes(`Added search attributes to namespace ${namespace}`), worker.tail());
    assert.deepEqual(await namespaceAttributes(connection, namespace), { missing: [], mistyped: [] });
    await searchAttributesAtStart(connection, namespace, 'check', () =>
      assert.fail('a warning on a complete namespace'),
    );
  } finally {
    await worker.stop();
  }
});
