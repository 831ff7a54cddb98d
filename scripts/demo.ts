// `npm start`: the reference documents' conversation, for real. Brings up (or reuses) a Temporal dev server,
// a worker, and — without ANTHROPIC_API_KEY — the local Messages API server; asks "What is the current stock
// price of General Motors?", prints each step as it happens, the answer, and the Web UI link.
//
//   npm start                       one conversation; the dev server stays up (Ctrl-C ends) when run in a terminal
//   npm start -- --exit             stop everything after the answer
//   npm start -- --protocol legacy-xml  the same chain with prompt-based XML tool use
//   npm start -- --thinking             with adaptive thinking, the model's thinking shown as it streams
//   npm start -- --threads              with message threads: each call after the first sends only the new messages
//   npm run demo:batch                  (npm start -- --batch) each model call through a Message Batch, at half the price
//   ANTHROPIC_API_KEY=… npm start   the same, with Claude
//   PAYLOAD_ENCRYPTION_KEYS=k1:$(openssl rand -base64 32) npm start
//                                   payloads encrypted (codec/), and a codec server for the Web UI (log in at its /login)
import { randomBytes, randomUUID } from 'node:crypto';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { ConversationClient } from '../client/conversation-client';
import { AesGcmCodec } from '../codec/aes-gcm-codec';
import { type CodecServer, startCodecServer } from '../codec/codec-server';
import { encryptingDataConverter } from '../codec/data-converter';
import { DEFAULT_CODEC_SERVER_PORT, DEFAULT_CORS_ORIGINS } from '../codec/server-config';
import { ConfigError, loadConfig } from '../workers/config';
import { createAnthropic } from '../workers/anthropic-client';
import { demoTools } from '../testing/demo-tools';
import { DEFAULT_MODEL } from '../common/options';
import { STOCK_QUESTION, STOCK_TOOLS } from '../testing/messages-api/fixtures';
import { startMessagesApi } from '../testing/messages-api/server';
import { demoArgs, demoDevServer, modelLine, converse, startDemoWorker, stopDevServerWhenDone } from './demo-parts';

async function main(): Promise<void> {
  const { exitWhenDone, protocol, thinking, threads, batch } = demoArgs();
  Runtime.install({ logger: new DefaultLogger('ERROR') });

  // With --thinking, the local server writes token by token, so the thinking is seen streaming.
  const mock = process.env.ANTHROPIC_API_KEY ? undefined : await startMessagesApi(thinking ? { tokenDelayMs: 40 } : {});
  const model = process.env.ANTHROPIC_MODEL || DEFAULT_MODEL;
  const config = loadConfig({ ...process.env, ...(mock && { ANTHROPIC_BASE_URL: mock.url }) });
  console.log(modelLine(mock?.url, 'deterministic demo model', model, config.ANTHROPIC_BASE_URL));

  // With PAYLOAD_ENCRYPTION_KEYS: every payload is encrypted, and the dev server's Web UI decodes through a codec server.
  const keys = config.PAYLOAD_ENCRYPTION_KEYS;
  const dataConverter = keys && encryptingDataConverter(keys, config.PAYLOAD_ENCRYPTION_PLAINTEXT);
  let codecServer: CodecServer | undefined;
  if (keys) {
    const token = process.env.CODEC_SERVER_TOKEN || randomBytes(24).toString('base64url');
    codecServer = await startCodecServer({
      codec: new AesGcmCodec(keys, { plaintext: 'accept', warn: () => undefined }), // shows what is stored
      token,
      allowedOrigins: DEFAULT_CORS_ORIGINS,
      port: Number(process.env.CODEC_SERVER_PORT || DEFAULT_CODEC_SERVER_PORT),
    });
    console.log(
      `Payload encryption: on (current key ${keys.current.id}). Codec server ${codecServer.url}: log in once at ` +
        `${codecServer.url}/login with ${process.env.CODEC_SERVER_TOKEN ? 'CODEC_SERVER_TOKEN' : `the token ${token}`}, then turn on ` +
        '"Include cross-origin credentials" in the Web UI\'s codec server settings.',
    );
  }

  const { server, uiUrl } = await demoDevServer(codecServer?.url);

  const taskQueue = config.TEMPORAL_TASK_QUEUE;
  const worker = await startDemoWorker(server, {
    taskQueue,
    anthropic: createAnthropic(config),
    tools: demoTools,
    ...(dataConverter && { dataConverter }),
  });
  const conversations = new ConversationClient({
    client: worker.client,
    taskQueue,
    tools: demoTools.map((tool) => tool.name),
  });
  const id = `demo-stock-price-${randomUUID().slice(0, 8)}`;
  await converse({
    conversations,
    id,
    question: STOCK_QUESTION,
    start: {
      model,
      protocol,
      tools: STOCK_TOOLS,
      closeAfterFirstReply: true,
      ...(thinking && { thinking: { type: 'adaptive' as const, display: 'summarized' as const } }),
      ...(threads && { threads }),
      ...(batch && { batch: true }),
    },
    showThinking: thinking,
    toolKind: 'tool',
    server,
    ...(uiUrl && { uiUrl }),
  });

  await worker.stop();
  await mock?.close();
  await stopDevServerWhenDone(server, exitWhenDone);
  await codecServer?.close();
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
