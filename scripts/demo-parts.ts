// What `npm start` and the other demos share: their flags, the model line, the dev server they reuse or start, the
// worker and client on it, the closing lines, and staying up (so the Web UI link works) until Ctrl-C.
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { StartOptions } from '../client/call-options';
import type { ConversationClient } from '../client/conversation-client';
import { followConversation } from '../client/progress';
import { renderLine } from '../client/transcript-format';
import type { ConversationSnapshot, TurnResult } from '../common/conversation-types';
import { connectOrStartDevServer, type DevServer, defaultPersistentDbFile } from '../testing/dev-server';
import { type ConversationWorkerOptions, createConversationWorker } from '../workers/conversation-worker';

export interface DemoArgs {
  /** --exit, or stdout is not a terminal: stop everything after the answer. */
  exitWhenDone: boolean;
  protocol: 'native' | 'legacy-xml';
  /** --thinking: adaptive thinking, shown as it streams. */
  thinking: boolean;
  /** --threads: the API holds the conversation (message threads); each call sends only what its turn added. */
  threads: boolean;
  /** Each model call through a Message Batch (docs/batches.md): half the price, the answer when the batch ends. */
  batch: boolean;
}

export function demoArgs(args = process.argv.slice(2)): DemoArgs {
  const protocolArg = args.includes('--protocol') ? args[args.indexOf('--protocol') + 1] : undefined;
  return {
    exitWhenDone: args.includes('--exit') || !process.stdout.isTTY,
    protocol: protocolArg === 'legacy-xml' ? 'legacy-xml' : 'native',
    thinking: args.includes('--thinking'),
    threads: args.includes('--threads'),
    batch: args.includes('--batch'),
  };
}

/** The line that says who answers: the local Messages API server (`localModel` says how) or Claude. */
export function modelLine(localUrl: string | undefined, localModel: string, model: string, baseUrl?: string): string {
  return localUrl
    ? `Model: the local Messages API server's ${localModel} at ${localUrl} (no ANTHROPIC_API_KEY set)`
    : `Model: ${model} (Claude, via ${baseUrl ?? 'https://api.anthropic.com'})`;
}

/** The dev server at TEMPORAL_ADDRESS (default localhost:7233) if one answers, else one started on the cache's SQLite file. */
export async function demoDevServer(codecEndpoint?: string): Promise<{ server: DevServer; uiUrl?: string }> {
  process.env.TEMPORAL_ADDRESS ??= 'localhost:7233';
  const server = await connectOrStartDevServer({
    port: 7233,
    uiPort: 8233,
    dbFile: defaultPersistentDbFile(),
    log: (line) => console.log(`[temporal] ${line}`),
    ...(codecEndpoint && { codecEndpoint }),
  });
  // A server we started knows its UI; one we found running does not say where its UI is: TEMPORAL_UI_URL does.
  const uiUrl = process.env.TEMPORAL_UI_URL || server.uiUrl || undefined;
  console.log(
    `Temporal: ${server.address} (namespace ${server.namespace}), Web UI ${uiUrl ?? 'unknown (set TEMPORAL_UI_URL)'}`,
  );
  return { server, ...(uiUrl && { uiUrl }) };
}

export interface DemoWorker {
  /** A client of the dev server, with the worker's data converter. */
  client: Client;
  /** Shuts the worker down, waits for it, and closes both connections. */
  stop(): Promise<void>;
}

/** A conversation worker on the demo's dev server, running, and a client beside it. */
export async function startDemoWorker(
  server: DevServer,
  options: Omit<ConversationWorkerOptions, 'connection' | 'namespace'>,
): Promise<DemoWorker> {
  const workerConnection = await NativeConnection.connect({ address: server.address });
  const worker = await createConversationWorker({
    ...options,
    connection: workerConnection,
    namespace: server.namespace,
  });
  const running = worker.run();
  const connection = await Connection.connect({ address: server.address });
  const { dataConverter } = options;
  const client = new Client({ connection, namespace: server.namespace, ...(dataConverter && { dataConverter }) });
  return {
    client,
    async stop() {
      worker.shutdown();
      await running;
      await workerConnection.close();
      await connection.close();
    },
  };
}

export interface DemoConversation {
  conversations: ConversationClient;
  id: string;
  question: string;
  start: Omit<StartOptions, 'id'> & { protocol: DemoArgs['protocol'] };
  /** Print the model's thinking as it streams (the conversation's `thinking` events, live ones included). */
  showThinking?: boolean;
  /** What its tools are called in the closing line: "tool", "MCP tool". */
  toolKind: string;
  server: DevServer;
  uiUrl?: string;
  /** Called with each state polled while the turn runs (e.g. to decide pending approvals); awaited. */
  onState?(state: ConversationSnapshot): Promise<void>;
}

/** Asks the question, prints each step as it happens, then the answer, what it took and its Web UI link. */
export async function converse(demo: DemoConversation): Promise<TurnResult> {
  const { conversations, id, server, uiUrl } = demo;
  console.log(`\nConversation ${id} (${demo.start.protocol} tool use)\n`);
  let reply: Promise<TurnResult>;
  let thinking: Promise<void> = Promise.resolve();
  if (demo.showThinking) {
    // Started first, so the events can be read from the first one: the thinking streams as the model writes it.
    await conversations.startConversation({ id, firstMessage: demo.question, ...demo.start });
    reply = conversations.awaitTurn(id, 1);
    thinking = printThinking(conversations, id);
  } else {
    reply = conversations.sendMessage(id, demo.question, { start: demo.start });
  }
  await followConversation(conversations, id, reply, {
    onLine: (line) => console.log(renderLine(line)),
    ...(demo.onState && { onState: demo.onState }),
  });
  const result = await reply;
  await thinking;
  console.log(`\nAnswer: ${result.text}`);
  const cost = result.costUsd === null ? 'cost unknown' : `$${result.costUsd.toFixed(4)}`;
  console.log(
    `(${result.modelCalls} model calls, ${result.toolCalls} ${demo.toolKind} calls, ${result.usage.inputTokens} input / ` +
      `${result.usage.outputTokens} output tokens, ${cost})`,
  );
  console.log(
    uiUrl
      ? `Web UI: ${webUiLink(uiUrl, server, id)}`
      : 'Web UI: unknown for a server this command did not start; set TEMPORAL_UI_URL to print the link.',
  );
  return result;
}

/** A workflow's page in the Web UI (a sub-agent's id has a `/`: encoded). */
export function webUiLink(uiUrl: string, server: DevServer, id: string): string {
  return `${uiUrl}/namespaces/${server.namespace}/workflows/${encodeURIComponent(id)}`;
}

/** The first turn's thinking, block by block as it streams: `thinking   …`. */
async function printThinking(conversations: ConversationClient, id: string): Promise<void> {
  let block: string | undefined;
  for await (const { event, seen } of conversations.events(id, { fromOffset: 0 })) {
    // What was seen live comes again in the final reply with no new text: nothing to print.
    if (event.type === 'thinking' && (seen || (event.text === '' && !event.redacted))) continue;
    if (event.type === 'thinking') {
      const key = `${event.call}/${event.attempt}/${event.block}`;
      if (key !== block) process.stdout.write(`${block ? '\n' : ''}thinking   ${event.redacted ? '(redacted)' : ''}`);
      block = key;
      process.stdout.write(event.text);
    } else if (block && event.type !== 'model_call_finished') {
      process.stdout.write('\n');
      block = undefined;
    }
    if (event.type === 'turn_finished' || event.type === 'turn_failed' || event.type === 'conversation_ended') break;
  }
  if (block) process.stdout.write('\n');
}

/** Unless told to exit, keeps the dev server up until Ctrl-C so the link works; then stops it. */
export async function stopDevServerWhenDone(server: DevServer, exitWhenDone: boolean): Promise<void> {
  if (!exitWhenDone) {
    console.log('\nThe dev server keeps running so the link works; Ctrl-C stops it.');
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
  }
  await server.stop();
}
