// The service's tools in real conversations, with the package's testing kit: a real worker and Temporal server, and
// the local Messages API server scripted to call this service's tools (then its demo model reads the results back).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type ConversationTestEnv, startConversationTestEnv } from 'claude-temporal-orchestrator/testing';
import { tools } from '../src/tools';

let env: ConversationTestEnv;

before(async () => {
  env = await startConversationTestEnv({ tools });
});

after(async () => {
  await env?.close();
});

test('a conversion runs convert_units and answers with its result', async () => {
  env.messagesApi.script('[freezer]', [
    {
      reply: {
        content: [{ type: 'tool_use', name: 'convert_units', input: { value: 0, from: 'F', to: 'C' } }],
        stop_reason: 'tool_use',
      },
    },
  ]);
  const reply = await env.conversations.sendMessage('freezer-1', 'What is 0 °F in Celsius? [freezer]', {
    start: { tools: ['convert_units'] },
  });
  assert.match(reply.text, /convert_units returned: .*"value":-17\.77777778.*"unit":"°C"/);
  assert.equal(reply.toolCalls, 1);
});

test('an unknown unit comes back to the model as an UnknownUnit error, and the conversation goes on', async () => {
  env.messagesApi.script('[smoot]', [
    {
      reply: {
        content: [{ type: 'tool_use', name: 'lookup_unit', input: { unit: 'smoot' } }],
        stop_reason: 'tool_use',
      },
    },
  ]);
  const reply = await env.conversations.sendMessage('smoot-1', 'How long is a smoot? [smoot]', {
    start: { tools: ['lookup_unit'] },
  });
  assert.match(reply.text, /UnknownUnit: no unit called "smoot"/);
  const [, toolResults] = env.messagesApi.requestsFor('[smoot]').map((request) => request.body.messages.at(-1));
  assert.equal(toolResults.content[0].is_error, true);
  assert.equal(reply.status, 'awaiting_user');
});
