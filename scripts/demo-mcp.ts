// `npm run demo:mcp`: one conversation whose tools come from an MCP server, end to end, printed as `npm start`
// prints its own. The worker starts `@modelcontextprotocol/server-filesystem` (stdio) on a notes folder this script
// writes in a temporary directory; the conversation may use two of its reading tools. Without ANTHROPIC_API_KEY the
// local Messages API server answers with scripted replies (it lists the folder, reads the todo list, answers); with
// a key, Claude decides.
//
//   npm run demo:mcp                  one conversation; the dev server stays up (Ctrl-C ends) when run in a terminal
//   npm run demo:mcp -- --exit        stop everything after the answer
//   npm run demo:mcp -- --protocol legacy-xml
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { McpClientPool } from '../activities/mcp/mcp-client-pool';
import { parseMcpServers } from '../activities/mcp/mcp-server-config';
import { ConversationClient } from '../client/conversation-client';
import { DEFAULT_MODEL } from '../common/options';
import { startMessagesApi } from '../testing/messages-api/server';
import { createAnthropic } from '../workers/anthropic-client';
import { ConfigError, loadConfig } from '../workers/config';
import { demoArgs, demoDevServer, modelLine, converse, startDemoWorker, stopDevServerWhenDone } from './demo-parts';

const QUESTION = 'What is in my notes folder, and what is left on my todo list?';
const TOOLS = ['list_directory', 'read_text_file'];

async function main(): Promise<void> {
  const { exitWhenDone, protocol } = demoArgs();
  Runtime.install({ logger: new DefaultLogger('ERROR') });

  const notes = mkdtempSync(join(tmpdir(), 'demo-notes-'));
  writeFileSync(join(notes, 'todo.txt'), '- buy milk\n- call the bank\n');
  writeFileSync(join(notes, 'ideas.md'), '# Ideas\nA durable orchestrator for Claude.\n');

  const mock = process.env.ANTHROPIC_API_KEY ? undefined : await startMessagesApi();
  if (mock) {
    const call = (name: string, input: Record<string, unknown>, id: string) =>
      protocol === 'native'
        ? { type: 'tool_use' as const, id, name, input }
        : {
            type: 'text' as const,
            text: `<function_calls>\n<invoke>\n<tool_name>${name}</tool_name>\n<parameters>\n${Object.entries(input)
              .map(([key, value]) => `<${key}>${String(value)}</${key}>`)
              .join('\n')}\n</parameters>\n</invoke>\n`,
          };
    const stop = protocol === 'native' ? { stop_reason: 'tool_use' as const } : legacyStop;
    mock.script(QUESTION, [
      { reply: { content: [call('filesystem__list_directory', { path: notes }, 'toolu_demo_1')], ...stop } },
      {
        reply: {
          content: [call('filesystem__read_text_file', { path: join(notes, 'todo.txt') }, 'toolu_demo_2')],
          ...stop,
        },
      },
      {
        reply: {
          content: [
            {
              type: 'text',
              text: 'Your notes folder holds ideas.md and todo.txt. Still to do: buy milk, and call the bank.',
            },
          ],
          stop_reason: 'end_turn',
        },
      },
    ]);
  }
  const model = process.env.ANTHROPIC_MODEL || DEFAULT_MODEL;
  const config = loadConfig({ ...process.env, ...(mock && { ANTHROPIC_BASE_URL: mock.url }) });
  console.log(modelLine(mock?.url, 'scripted replies', model, config.ANTHROPIC_BASE_URL));

  const { server, uiUrl } = await demoDevServer();

  // The worker's own configuration names the server; the conversation only picks it (and two of its tools).
  const mcp = new McpClientPool(
    parseMcpServers(
      {
        filesystem: {
          command: process.execPath,
          args: [require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js'), notes],
          requireApproval: ['write_file', 'edit_file', 'move_file', 'create_directory'],
        },
      },
      process.env,
    ),
  );
  const taskQueue = `demo-mcp-${randomUUID().slice(0, 8)}`;
  const worker = await startDemoWorker(server, { taskQueue, anthropic: createAnthropic(config), tools: [], mcp });
  const conversations = new ConversationClient({ client: worker.client, taskQueue });
  const id = `demo-mcp-${randomUUID().slice(0, 8)}`;
  console.log(`MCP server: filesystem on ${notes} (stdio); the conversation may use ${TOOLS.join(', ')}`);
  await converse({
    conversations,
    id,
    question: QUESTION,
    start: { model, protocol, mcpServers: [{ server: 'filesystem', tools: TOOLS }], closeAfterFirstReply: true },
    toolKind: 'MCP tool',
    server,
    ...(uiUrl && { uiUrl }),
  });

  await worker.stop();
  await mcp.close();
  await mock?.close();
  rmSync(notes, { recursive: true, force: true });
  await stopDevServerWhenDone(server, exitWhenDone);
}

const legacyStop = { stop_reason: 'stop_sequence' as const, stop_sequence: '</function_calls>' };

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
