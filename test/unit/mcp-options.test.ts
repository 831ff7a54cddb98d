// `mcpServers` in the conversation options: names of configured servers, optionally with some of their tools;
// never a description of a server.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withDefaults } from '../../common/options';

test('servers by name, or with the tools to offer; normalised to one shape', () => {
  assert.deepEqual(withDefaults({}).mcpServers, []);
  assert.deepEqual(
    withDefaults({ mcpServers: ['filesystem', { server: 'everything', tools: ['echo', 'get-sum'] }] }).mcpServers,
    [{ server: 'filesystem' }, { server: 'everything', tools: ['echo', 'get-sum'] }],
  );
  // What a run hands to the next one parses again to the same thing.
  const options = withDefaults({ mcpServers: ['filesystem'] });
  assert.deepEqual(withDefaults(options as never).mcpServers, options.mcpServers);
});

test('refused: a server listed twice, a bad name, a command, a tool listed twice', () => {
  assert.throws(() => withDefaults({ mcpServers: ['fs', { server: 'fs' }] }), /mcpServers: a server is listed twice/);
  assert.throws(() => withDefaults({ mcpServers: ['my server'] }), /mcpServers\.0: .*MCP server names/);
  assert.throws(
    () => withDefaults({ mcpServers: [{ server: 'fs', command: 'rm' } as never] }),
    /Unrecognized key: "command"/,
  );
  assert.throws(
    () => withDefaults({ mcpServers: [{ server: 'fs', tools: ['read', 'read'] }] }),
    /tools are listed twice/,
  );
});

test('tool_choice may force a tool of a chosen MCP server; with no tools at all it may not', () => {
  const options = withDefaults({
    mcpServers: ['filesystem'],
    toolChoice: { type: 'tool', name: 'filesystem__read_text_file' },
  });
  assert.equal(options.toolChoice?.type, 'tool');
  assert.doesNotThrow(() => withDefaults({ mcpServers: ['filesystem'], toolChoice: { type: 'any' } }));
  assert.throws(
    () => withDefaults({ mcpServers: ['filesystem'], toolChoice: { type: 'tool', name: 'github__search' } }),
    /not in tools nor a tool of mcpServers/,
  );
  assert.throws(() => withDefaults({ toolChoice: { type: 'any' } }), /needs at least one tool/);
});
