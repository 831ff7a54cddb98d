// An MCP server (stdio) that misbehaves on purpose, for the hostile-input suite: what a broken or malicious server can
// send the orchestrator through the protocol itself. Run as `node --import tsx hostile-mcp-server.ts`.
//   HOSTILE_MCP_PAGES=endless   tools/list answers page after page, each with a nextCursor, for ever
//   HOSTILE_MCP_PAGE_LOG=<file> each page served appends a line there (how far the client followed)
// Otherwise its tools:
//   huge_error       a JSON-RPC error whose message is 600,000 characters
//   odd_error        a JSON-RPC error whose message holds a lone surrogate and NUL
//   huge_result      a result of 600,000 characters, flagged isError
//   huge_progress    progress notifications whose message is 3,000,000 characters, then "done"
import { appendFileSync } from 'node:fs';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';

const HUGE = 600_000;
const HUGE_PROGRESS = 3_000_000;

const server = new Server({ name: 'hostile', version: '1.0.0' }, { capabilities: { tools: {} } });
const tool = (name: string) => ({ name, description: `Misbehaves: ${name}`, inputSchema: { type: 'object' as const } });

server.setRequestHandler(ListToolsRequestSchema, async (request) => {
  if (process.env.HOSTILE_MCP_PAGES === 'endless') {
    const page = Number(request.params?.cursor ?? 0);
    if (process.env.HOSTILE_MCP_PAGE_LOG) appendFileSync(process.env.HOSTILE_MCP_PAGE_LOG, `${page}\n`);
    return { tools: [tool(`page_${page}`)], nextCursor: String(page + 1) };
  }
  return { tools: ['huge_error', 'odd_error', 'huge_result', 'huge_progress'].map(tool) };
});

server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
  switch (request.params.name) {
    case 'huge_error':
      throw new McpError(ErrorCode.InternalError, 'E'.repeat(HUGE));
    case 'odd_error':
      throw new McpError(ErrorCode.InvalidParams, 'lone \ud800 surrogate, NUL \u0000 here');
    case 'huge_result':
      return { content: [{ type: 'text', text: 'R'.repeat(HUGE) }], isError: true };
    case 'huge_progress': {
      const progressToken = request.params._meta?.progressToken;
      if (progressToken !== undefined) {
        for (const progress of [1, 2]) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken, progress, total: 3, message: 'P'.repeat(HUGE_PROGRESS) },
          });
          await new Promise((resolve) => setTimeout(resolve, 1_500));
        }
      }
      return { content: [{ type: 'text', text: 'done' }] };
    }
    default:
      throw new McpError(ErrorCode.InvalidParams, 'no such tool');
  }
});

void server.connect(new StdioServerTransport());
