// `npm run gateway`: the HTTP/SSE gateway and its chat page (gateway/gateway-server.ts), configured by environment
// (gateway/gateway-config.ts): GATEWAY_TOKEN is required; TEMPORAL_* as for the worker; PAYLOAD_ENCRYPTION_KEYS when
// the workers encrypt payloads.
import { ConversationClient } from '../client/conversation-client';
import { dataConverterFromEnv } from '../codec/data-converter';
import { ConfigError } from '../workers/config';
import { loadGatewayConfig } from './gateway-config';
import { startGateway } from './gateway-server';

async function main(): Promise<void> {
  const config = loadGatewayConfig();
  const dataConverter = dataConverterFromEnv();
  const conversations = await ConversationClient.connect({
    address: config.TEMPORAL_ADDRESS,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    ...(dataConverter && { dataConverter }),
  });
  const gateway = await startGateway({
    conversations,
    token: config.GATEWAY_TOKEN,
    host: config.GATEWAY_HOST,
    port: config.GATEWAY_PORT,
    maxBodyBytes: config.GATEWAY_MAX_BODY_BYTES,
    maxStreamsPerToken: config.GATEWAY_MAX_STREAMS_PER_TOKEN,
    maxStreamsPerConversation: config.GATEWAY_MAX_STREAMS_PER_CONVERSATION,
    maxStreamBufferBytes: config.GATEWAY_MAX_STREAM_BUFFER_BYTES,
    namespace: config.TEMPORAL_NAMESPACE,
    ...(config.TEMPORAL_UI_URL && { temporalUiUrl: config.TEMPORAL_UI_URL }),
  });
  console.log(`Gateway listening on ${gateway.url} (chat page at ${gateway.url}/)`);
  const stop = (signal: NodeJS.Signals): void => {
    console.log(`${signal}: stopping the gateway`);
    void gateway.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
