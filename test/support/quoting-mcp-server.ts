// An MCP server (stdio) whose one tool answers every call with a JSON-RPC error that quotes the call's arguments,
// padded to about 600 KB: a protocol error carrying content, as a careless or hostile server sends it. Run by a
// worker as `node --import tsx test/support/quoting-mcp-server.ts`.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';

const PADDING_CHARS = 600_000;

const server = new Server({ name: 'quoting', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: 'lookup',
      description: 'Looks a record up.',
      inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
    },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  throw new McpError(
    ErrorCode.InvalidParams,
    `no record matches ${JSON.stringify(request.params.arguments)}; ${'.'.repeat(PADDING_CHARS)}`,
  );
});
void server.connect(new StdioServerTransport());
