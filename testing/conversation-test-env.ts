// A conversation test environment for a service's own tests: its tools on a real worker (on a task queue of its own),
// a real Temporal server (the one at TEMPORAL_ADDRESS when it answers, else a dev server started here), the local
// Messages API server that the worker's Anthropic SDK talks to, and a client that knows the tools. Script the model's
// replies with `messagesApi.script(…)`, talk through `conversations`, and `close()` at the end.
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import type { ToolDefinition } from '../activities/tool-definition';
import { ConversationClient } from '../client/conversation-client';
import { createAnthropic } from '../workers/anthropic-client';
import { type ConversationWorkerOptions, createConversationWorker } from '../workers/conversation-worker';
import { connectOrStartDevServer, type DevServer, type DevServerOptions } from './dev-server';
import { startMessagesApi } from './messages-api/server';
import type { MessagesApi, MessagesApiOptions } from './messages-api/types';

export interface ConversationTestEnvOptions {
  /** The tools under test: the worker runs them, the client accepts their names. */
  tools: readonly ToolDefinition[];
  messagesApi?: MessagesApiOptions;
  /** For the dev server started when TEMPORAL_ADDRESS is not set (or does not answer). */
  devServer?: DevServerOptions;
  toolOptions?: ConversationWorkerOptions['toolOptions'];
}

export interface ConversationTestEnv {
  /** The local Messages API server: script replies and faults, read the requests the worker sent. */
  messagesApi: MessagesApi;
  conversations: ConversationClient;
  worker: Worker;
  taskQueue: string;
  temporal: DevServer;
  /** Stops the worker, closes the connections and the Messages API server, and stops a dev server started here. */
  close(): Promise<void>;
}

export async function startConversationTestEnv(options: ConversationTestEnvOptions): Promise<ConversationTestEnv> {
  const cleanups: Array<() => Promise<unknown>> = [];
  const close = async (): Promise<void> => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  };
  try {
    const temporal = await connectOrStartDevServer(options.devServer);
    cleanups.push(() => temporal.stop());
    const messagesApi = await startMessagesApi(options.messagesApi);
    cleanups.push(() => messagesApi.close());
    const taskQueue = `test-${randomUUID()}`;
    const workerConnection = await NativeConnection.connect({ address: temporal.address });
    cleanups.push(() => workerConnection.close());
    const worker = await createConversationWorker({
      connection: workerConnection,
      namespace: temporal.namespace,
      taskQueue,
      anthropic: createAnthropic({ ANTHROPIC_BASE_URL: messagesApi.url }),
      tools: options.tools,
      ...(options.toolOptions && { toolOptions: options.toolOptions }),
    });
    const running = worker.run();
    cleanups.push(async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    });
    const connection = await Connection.connect({ address: temporal.address });
    cleanups.push(() => connection.close());
    const conversations = new ConversationClient({
      client: new Client({ connection, namespace: temporal.namespace }),
      taskQueue,
      tools: options.tools.map((tool) => tool.name),
    });
    return { messagesApi, conversations, worker, taskQueue, temporal, close };
  } catch (error) {
    await close();
    throw error;
  }
}
