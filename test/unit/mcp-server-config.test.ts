// The MCP servers of a worker's configuration: the Claude Desktop / Claude Code shape, defaults, `${VAR}` from the
// worker's environment, and a message naming what is wrong.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseMcpServers, parseMcpServersJson } from '../../activities/mcp/mcp-server-config';
import { runWorker } from '../../workers/run-worker';

test('a stdio server (no type) and an HTTP server, with the defaults filled in', () => {
  const servers = parseMcpServers(
    {
      filesystem: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/data'] },
      tickets: { type: 'http', url: 'https://mcp.example.com/mcp', requireApproval: ['create_*'] },
    },
    {},
  );
  assert.deepEqual(servers, [
    {
      name: 'filesystem',
      type: 'stdio',
      command: 'npx',
      args: ['-y', '@modelcontextprotocol/server-filesystem', '/data'],
      env: {},
      requireApproval: [],
      timeout: '60 seconds',
      heartbeatTimeout: '10 seconds',
      maxAttempts: 3,
      retryInitialInterval: '1 second',
    },
    {
      name: 'tickets',
      type: 'http',
      url: 'https://mcp.example.com/mcp',
      headers: {},
      requireApproval: ['create_*'],
      timeout: '60 seconds',
      heartbeatTimeout: '10 seconds',
      maxAttempts: 3,
      retryInitialInterval: '1 second',
    },
  ]);
});

test('${VAR} and ${VAR:-default} are read from the worker’s environment; an unset one is an error naming it', () => {
  const [server] = parseMcpServers(
    {
      github: {
        type: 'http',
        url: '${GITHUB_MCP_URL:-https://api.example.com/mcp}',
        headers: { Authorization: 'Bearer ${GITHUB_TOKEN}' },
      },
    },
    { GITHUB_TOKEN: 'ghp_secret' },
  );
  assert.equal(server!.type === 'http' && server!.headers.Authorization, 'Bearer ghp_secret');
  assert.equal(server!.type === 'http' && server!.url, 'https://api.example.com/mcp');
  assert.throws(
    () => parseMcpServers({ s: { command: 'x', env: { TOKEN: '${MISSING_TOKEN}' } } }, {}),
    /mcpServers\.s\.env\.TOKEN uses \$\{MISSING_TOKEN\}, which is not set/,
  );
});

test('a Claude Desktop file (`{ "mcpServers": … }`) works as it is', () => {
  const servers = parseMcpServersJson('{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "m"]}}}', 'f', {});
  assert.deepEqual(
    servers.map((s) => [s.name, s.type]),
    [['memory', 'stdio']],
  );
});

test('mistakes are named: a bad server name, a server with neither command nor url, unknown keys, bad JSON', () => {
  assert.throws(
    () => parseMcpServers({ 'my server': { command: 'x' } }, {}),
    /"my server": server names match \^\[a-zA-Z0-9_-\]\{1,32\}\$/,
  );
  assert.throws(() => parseMcpServers({ s: { args: ['x'] } }, {}), /Invalid MCP server configuration: mcpServers\.s/);
  assert.throws(() => parseMcpServers({ s: { type: 'http', url: 'ftp://x' } }, {}), /http\(s\) URL/);
  assert.throws(() => parseMcpServers({ s: { command: 'x', timeout: 'soon' } }, {}), /timeout: must be a duration/);
  assert.throws(
    () => parseMcpServersJson('{nope', 'MCP_SERVERS', {}),
    /^McpConfigError: MCP_SERVERS: not valid JSON|MCP_SERVERS: not valid JSON/,
  );
});

test('runWorker --check reads MCP_SERVERS and MCP_SERVERS_FILE, and prints names and transports only', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-config-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'mcp.json');
  writeFileSync(file, JSON.stringify({ mcpServers: { tickets: { type: 'http', url: 'http://127.0.0.1:1/mcp' } } }));
  const printed: string[] = [];
  t.mock.method(console, 'log', (line: string) => printed.push(line));
  const env = {
    ANTHROPIC_BASE_URL: 'http://127.0.0.1:4010',
    MCP_SERVERS: JSON.stringify({ files: { command: 'npx', args: ['--token', '${FILES_TOKEN}'] } }),
    MCP_SERVERS_FILE: file,
    FILES_TOKEN: 'very-secret',
  };
  await runWorker({ tools: [], env, checkOnly: true });
  assert.match(printed.join('\n'), /MCP servers: files \(stdio\), tickets \(http\)/);
  assert.doesNotMatch(printed.join('\n'), /very-secret|npx|127\.0\.0\.1:1/);

  await assert.rejects(
    runWorker({ tools: [], env: { ...env, MCP_SERVERS_FILE: undefined, FILES_TOKEN: undefined }, checkOnly: true }),
    /FILES_TOKEN/,
  );
  await assert.rejects(
    runWorker({ tools: [], env, mcpServers: { files: { command: 'x' } }, checkOnly: true }),
    /MCP server configured twice: files/,
  );
});
