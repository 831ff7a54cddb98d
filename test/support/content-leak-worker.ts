// The worker of test/e2e/no-content-in-spans-or-logs.test.ts, as its own process: runWorker (configured by the
// environment: encryption, tracing, content capture, log level) with the demo tools, the marker-carrying tools and
// the quoting MCP server.
import { runWorker } from '../../workers/run-worker';
import { demoTools } from '../../testing/demo-tools';
import { contentLeakTools } from './content-leak-tools';

runWorker({
  tools: [...demoTools, ...contentLeakTools],
  mcpServers: {
    quoting: { command: process.execPath, args: ['--import', 'tsx', require.resolve('./quoting-mcp-server')] },
  },
}).catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
