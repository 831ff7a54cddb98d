// A namespace that lacks the conversation search attributes (a new namespace, a self-hosted cluster set up by hand):
// a conversation's start is refused with a typed error that says how to add them — ensureSearchAttributes, or the
// Temporal CLI commands — instead of the server's bare "no mapping defined for search attribute"; and
// ensureSearchAttributes, given just the server's address, adds them so the same start then works.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { Connection } from '@temporalio/client';
import { ConversationClient } from '../../client/conversation-client';
import { ConversationError } from '../../client/errors';
import { registeredSearchAttributes } from '../../common/search-attributes';
import { ensureSearchAttributes } from '../../testing';
import { ensureNamespace } from '../../testing/dev-server/ensure-namespace';
import { temporalAddress } from '../support/harness';
import { waitUntil } from '../support/wait-until';

const namespace = `bare-${randomUUID().slice(0, 8)}`;
const taskQueue = `bare-${randomUUID()}`;
let conversations: ConversationClient;
/** Ends the long poll that makes the task queue's poller live (below). */
const polling = new AbortController();

before(async () => {
  const connection = await Connection.connect({ address: temporalAddress });
  try {
    await ensureNamespace(connection, namespace);
  } finally {
    await connection.close();
  }
  // `tools` given: the client asks no worker (none polls here); a start needs none.
  conversations = await ConversationClient.connect({
    address: temporalAddress,
    namespace,
    taskQueue,
    tools: [],
  });
  // The frontend learns of a new namespace when its cache refreshes (seconds): until then a call meets "not found".
  await waitUntil(
    `the frontend to know namespace ${namespace}`,
    async () => {
      const error = await conversations.client.workflow
        .getHandle('no-such-conversation')
        .describe()
        .catch((e) => e);
      return (error as Error).name !== 'NamespaceNotFoundError';
    },
    { timeoutMs: 60_000, everyMs: 500 },
  );
});
after(async () => {
  polling.abort();
  await conversations?.client.connection.close();
});

/**
 * A poller on the task queue, as a worker's, so that the client's look for a live worker passes and the start reaches
 * the namespace: Temporal's own long poll, asked again until the test ends (a task it hands out is left to time out).
 */
async function pollWorkflowTasks(): Promise<void> {
  const { connection } = conversations.client;
  const poll = () =>
    connection.workflowService.pollWorkflowTaskQueue({ namespace, taskQueue: { name: taskQueue }, identity: 'test' });
  while (!polling.signal.aborted) {
    // A long poll must have a deadline (the server refuses one without); a minute, as a worker's.
    await connection
      .withAbortSignal(polling.signal, () => connection.withDeadline(Date.now() + 60_000, poll))
      .catch(() => new Promise((resolve) => setTimeout(resolve, 200))); // ended, or refused: ask again soon
  }
}

/** The refusal of `call`: a ConversationError with the setup's code, whose message says how to set the namespace up. */
async function refusedForMissingAttributes(call: () => Promise<unknown>): Promise<ConversationError> {
  const error = await call().then(
    () => assert.fail('the call went through on a namespace without the search attributes'),
    (err: unknown) => err,
  );
  assert.ok(error instanceof ConversationError, String(error));
  assert.equal(error.code, 'search_attributes_missing', error.message);
  assert.match(error.message, new RegExp(`namespace "${namespace}"`));
  assert.match(error.message, /ensureSearchAttributes\(address, namespace\)/);
  for (const key of registeredSearchAttributes) assert.match(error.message, new RegExp(`--name ${key.name}\\b`));
  assert.match(
    error.message,
    new RegExp(`temporal operator search-attribute create --namespace ${namespace} --type Keyword --name `),
  );
  return error;
}

test('a start on a namespace without the search attributes is refused with the fix, and ensureSearchAttributes(address, …) is that fix', async () => {
  const id = `bare-${randomUUID()}`;
  void pollWorkflowTasks();
  await refusedForMissingAttributes(() => conversations.startConversation({ id, tools: [] }));
  await refusedForMissingAttributes(() =>
    conversations.startConversation({ id: `${id}-2`, tools: [], firstMessage: 'Hello' }),
  );

  await ensureSearchAttributes(temporalAddress, namespace); // an address: no Connection of the caller's own
  assert.equal(await conversations.startConversation({ id, tools: [] }), id);
  await conversations.client.workflow.getHandle(id).terminate('test over');
});
