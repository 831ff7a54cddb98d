// The test kit as a service's own test uses it (README, "Test your service"): on a reused server (TEMPORAL_ADDRESS, as
// here) a second run with the same fixed conversation id finds it free again: close() deleted the first run's
// conversation, left open on a task queue that nobody polls after it.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { demoTools } from '../../testing/demo-tools';
import { startConversationTestEnv } from '../../testing/conversation-test-env';
import { freePorts } from '../../testing/free-port';

test('two environments in sequence on one server, with the same fixed id, both complete', async () => {
  assert.ok(process.env.TEMPORAL_ADDRESS, 'the environments reuse the test run’s server');
  const fixedId = `order-test-${randomUUID()}`; // fixed for both runs, fresh for each run of this test
  for (const run of [1, 2]) {
    const env = await startConversationTestEnv({ tools: demoTools });
    try {
      env.messagesApi.script(`run ${run}`, [
        { reply: { content: [{ type: 'text', text: `Reply of run ${run}.` }], stop_reason: 'end_turn' } },
      ]);
      // Left open at close(), as the README's test leaves it; the next run's sendMessage must not land on it.
      const reply = await env.conversations.sendMessage(fixedId, `Hello from run ${run}`, {
        start: { tools: [] },
        timeoutMs: 60_000,
      });
      assert.equal(reply.text, `Reply of run ${run}.`);
      assert.equal(reply.turn, 1, 'a new conversation, not the one of the run before');
    } finally {
      await env.close();
    }
    await assert.rejects(
      describeWith(env.temporal.address, fixedId),
      (err: unknown) => err instanceof WorkflowNotFoundError,
      'close() deleted the open conversation',
    );
  }
});

test('keepConversations leaves them for a look after the test', async () => {
  const env = await startConversationTestEnv({ tools: demoTools, keepConversations: true });
  const id = `kept-${randomUUID()}`;
  try {
    await env.conversations.sendMessage(id, 'Hello', { start: { tools: [], closeAfterFirstReply: true } });
  } finally {
    await env.close();
  }
  const description = await describeWith(env.temporal.address, id);
  assert.equal(description.status.name, 'COMPLETED');
});

test('fixed ports for a dev loop: the live relay and the local Messages API listen where they are told', async () => {
  const [relayPort, apiPort] = await freePorts(2);
  const env = await startConversationTestEnv({
    tools: demoTools,
    liveRelay: { port: relayPort },
    messagesApi: { port: apiPort },
  });
  try {
    assert.equal(env.messagesApi.url, `http://127.0.0.1:${apiPort}`);
    // The relay answers on its port: an unknown feed is a 404 of the relay's own, not a refused connection.
    const unknownFeed = await fetch(`http://127.0.0.1:${relayPort}/live/${'0'.repeat(32)}`);
    assert.equal(unknownFeed.status, 404);
    const reply = await env.conversations.sendMessage(`ports-${randomUUID()}`, 'Hello', {
      start: { tools: [], closeAfterFirstReply: true },
    });
    assert.ok(reply.text.length > 0);
  } finally {
    await env.close();
  }
  await assert.rejects(fetch(`http://127.0.0.1:${relayPort}/`), 'close() stopped the relay');
});

/** Describes a workflow through a connection of its own (the environment's is closed). */
async function describeWith(address: string, workflowId: string) {
  const connection = await Connection.connect({ address });
  try {
    return await new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default' }).workflow
      .getHandle(workflowId)
      .describe();
  } finally {
    await connection.close();
  }
}

test('MCP servers as a worker configures them: a conversation that names one calls its tools; links to the Web UI', async () => {
  const env = await startConversationTestEnv({
    tools: demoTools,
    mcpServers: {
      everything: {
        command: process.execPath,
        args: [require.resolve('@modelcontextprotocol/server-everything/dist/index.js')],
      },
    },
  });
  try {
    const tag = `[kit-mcp-${randomUUID().slice(0, 8)}]`;
    env.messagesApi.script(tag, [
      {
        reply: {
          content: [{ type: 'tool_use', name: 'everything__echo', input: { message: 'from the kit' } }],
          stop_reason: 'tool_use',
        },
      },
      { reply: { content: [{ type: 'text', text: 'Echoed.' }], stop_reason: 'end_turn' } },
    ]);
    const id = `kit-mcp-${randomUUID()}`;
    const reply = await env.conversations.sendMessage(id, `Echo something ${tag}`, {
      start: {
        tools: [],
        mcpServers: ['everything'],
      },
    });
    assert.equal(reply.text, 'Echoed.');
    const [result] = env.messagesApi.requestsFor(tag)[1]!.body.messages.at(-1).content;
    assert.equal(result.type, 'tool_result');
    assert.match(JSON.stringify(result.content), /Echo: from the kit/);
    // The test run's server says where its UI is (TEMPORAL_UI_URL); a server that does not gets no link.
    const ui = process.env.TEMPORAL_UI_URL || env.temporal.uiUrl;
    assert.equal(
      env.conversations.conversationUrl(id),
      ui ? `${ui}/namespaces/${env.temporal.namespace}/workflows/${id}` : undefined,
    );
  } finally {
    await env.close();
  }
});
