// `npm start`: the reference documents' conversation, for real. Brings up (or reuses) a Temporal dev server,
// a worker, and — without ANTHROPIC_API_KEY — the local Messages API server; asks "What is the current stock
// price of General Motors?", prints each step as it happens, the answer, and the Web UI link.
//
//   npm start                       one conversation; the dev server stays up (Ctrl-C ends) when run in a terminal
//   npm start -- --exit             stop everything after the answer
//   npm start -- --protocol legacy-xml  the same chain with prompt-based XML tool use
//   ANTHROPIC_API_KEY=… npm start   the same, with Claude
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { ConversationClient } from '../client/conversation-client';
import { followConversation } from '../client/progress';
import { renderLine } from '../client/transcript-format';
import { ConfigError, loadConfig } from '../workers/config';
import { createAnthropic, createConversationWorker } from '../workers/worker';
import { connectOrStartDevServer, defaultPersistentDbFile } from './dev-server';
import { startMockAnthropic } from './mock-anthropic/server';

const QUESTION = 'What is the current stock price of General Motors?';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const exitWhenDone = args.includes('--exit') || !process.stdout.isTTY;
  const protocol = args.includes('--protocol') && args[args.indexOf('--protocol') + 1] === 'legacy-xml' ? 'legacy-xml' : 'native';
  Runtime.install({ logger: new DefaultLogger('ERROR') });

  const mock = process.env.ANTHROPIC_API_KEY ? undefined : await startMockAnthropic();
  const config = loadConfig({ ...process.env, ...(mock && { ANTHROPIC_BASE_URL: mock.url }) });
  console.log(mock
    ? `Model: the local Messages API server's deterministic demo model at ${mock.url} (no ANTHROPIC_API_KEY set)`
    : `Model: ${config.ANTHROPIC_MODEL} (Claude, via ${config.ANTHROPIC_BASE_URL ?? 'https://api.anthropic.com'})`);

  process.env.TEMPORAL_ADDRESS ??= 'localhost:7233';
  const server = await connectOrStartDevServer({
    port: 7233,
    uiPort: 8233,
    dbFile: defaultPersistentDbFile(),
    log: (line) => console.log(`[temporal] ${line}`),
  });
  const uiUrl = server.uiUrl || process.env.TEMPORAL_UI_URL || 'http://localhost:8233';
  console.log(`Temporal: ${server.address} (namespace ${server.namespace}), Web UI ${uiUrl}`);

  const taskQueue = config.TEMPORAL_TASK_QUEUE;
  const workerConnection = await NativeConnection.connect({ address: server.address });
  const worker = await createConversationWorker({
    connection: workerConnection,
    namespace: server.namespace,
    taskQueue,
    anthropic: createAnthropic(config),
  });
  const running = worker.run();

  const connection = await Connection.connect({ address: server.address });
  const conversations = new ConversationClient({ client: new Client({ connection, namespace: server.namespace }), taskQueue });
  const id = `demo-stock-price-${randomUUID().slice(0, 8)}`;
  console.log(`\nConversation ${id} (${protocol} tool use)\n`);

  const reply = conversations.sendMessage(id, QUESTION, {
    model: config.ANTHROPIC_MODEL,
    protocol,
    tools: ['get_ticker_symbol', 'get_current_stock_price'],
    closeAfterFirstReply: true,
  });
  await followConversation(conversations, id, reply, { onLine: (line) => console.log(renderLine(line)) });
  const result = await reply;

  console.log(`\nAnswer: ${result.text}`);
  console.log(`(${result.modelCalls} model calls, ${result.toolCalls} tool calls, ${result.usage.inputTokens} input / ${result.usage.outputTokens} output tokens)`);
  console.log(`Web UI: ${uiUrl}/namespaces/${server.namespace}/workflows/${id}`);

  worker.shutdown();
  await running;
  await workerConnection.close();
  await connection.close();
  await mock?.close();
  if (exitWhenDone) {
    await server.stop();
    return;
  }
  console.log('\nThe dev server keeps running so the link works; Ctrl-C stops it.');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.stop();
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
