// The service's tools next to an MCP server's, with the package's testing kit: the worker starts the reference
// knowledge-graph server (@modelcontextprotocol/server-memory) over stdio, as MCP_SERVERS would configure it, and a
// conversation that names it gets its tools as `memory__…`. What the model stores in one turn it finds in the next,
// and the server's file holds it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { type ConversationTestEnv, startConversationTestEnv } from 'claude-temporal-orchestrator/testing';
import { tools } from '../src/tools';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'unit-converter-memory-'));
const memoryFile = path.join(scratch, 'memory.jsonl');
let env: ConversationTestEnv;

before(async () => {
  env = await startConversationTestEnv({
    tools,
    mcpServers: {
      memory: {
        command: process.execPath,
        args: [require.resolve('@modelcontextprotocol/server-memory/dist/index.js')],
        env: { MEMORY_FILE_PATH: memoryFile },
      },
    },
  });
});

after(async () => {
  await env?.close();
  fs.rmSync(scratch, { recursive: true, force: true });
});

test('the model converts with the service’s tool, keeps the result in the memory server, and finds it again', async () => {
  const toolUse = (name: string, input: Record<string, unknown>) => ({
    reply: { content: [{ type: 'tool_use' as const, name, input }], stop_reason: 'tool_use' },
  });
  const text = (answer: string) => ({
    reply: { content: [{ type: 'text' as const, text: answer }], stop_reason: 'end_turn' },
  });
  env.messagesApi.script('[memory]', [
    // Turn 1: convert, then remember the result.
    toolUse('convert_units', { value: 26.2, from: 'mi', to: 'km' }),
    toolUse('memory__create_entities', {
      entities: [{ name: 'marathon', entityType: 'distance', observations: ['26.2 mi is 42.1648128 km'] }],
    }),
    text('A marathon is 42.16 km; I noted that.'),
    // Turn 2: look it up instead of converting again.
    toolUse('memory__search_nodes', { query: 'marathon' }),
    text('From my notes: 26.2 mi is 42.1648128 km.'),
  ]);
  const id = `memory-${Date.now()}`;
  const first = await env.conversations.sendMessage(id, 'How far is a marathon in km? Remember it. [memory]', {
    start: { tools: ['convert_units'], mcpServers: ['memory'] },
  });
  assert.equal(first.toolCalls, 2);
  assert.equal(first.text, 'A marathon is 42.16 km; I noted that.');

  const second = await env.conversations.sendMessage(id, 'What did you note about the marathon?');
  assert.equal(second.text, 'From my notes: 26.2 mi is 42.1648128 km.');

  // What the model was offered and what it read back: the server's own tools, and the entity stored a turn earlier.
  const requests = env.messagesApi.requestsFor('[memory]');
  const offered = requests[0]!.body.tools.map((tool: { name: string }) => tool.name);
  assert.ok(offered.includes('convert_units') && offered.includes('memory__search_nodes'), offered.join(', '));
  const [found] = requests.at(-1)!.body.messages.at(-1).content;
  assert.equal(found.type, 'tool_result');
  assert.equal(found.is_error ?? false, false);
  assert.match(JSON.stringify(found.content), /26\.2 mi is 42\.1648128 km/);
  // The memory server wrote it to its own file: a real server, not a stand-in.
  assert.match(fs.readFileSync(memoryFile, 'utf8'), /"name":"marathon"/);
});
