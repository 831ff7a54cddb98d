#!/usr/bin/env node
// The gateway as a command: `claude-temporal-orchestrator gateway` or `claude-temporal-orchestrator-gateway` (the
// package's bins), `npm run gateway` here. The HTTP/SSE gateway and its chat page (gateway-server.ts), configured by
// environment (gateway-config.ts): GATEWAY_TOKEN (one admin token) and/or GATEWAY_TOKENS / GATEWAY_TOKENS_FILE (tokens of
// several principals); TEMPORAL_* (address, namespace, task queue, TLS or an API key: client/connection-settings.ts) as
// for the worker and the CLI; PAYLOAD_ENCRYPTION_KEYS when the workers encrypt payloads. The
// namespace must have the ConversationOwner search attribute (deploy/setup-namespace.sh registers it).
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import type { Connection, ConnectionLike } from '@temporalio/client';
import { connectionOptions } from '../client/connection-settings';
import { ConversationClient } from '../client/conversation-client';
import { ConfigError } from '../client/environment-config';
import { packageVersion } from '../client/package-version';
import { dataConverterFromEnv } from '../codec/data-converter';
import { ConversationOwner } from '../common/search-attributes';
import { loadGatewayConfig } from './gateway-config';
import { startGateway } from './gateway-server';
import { GATEWAY_USAGE } from './usage';

/** Runs the gateway from the environment until SIGINT or SIGTERM; resolves once it has stopped. */
export async function runGateway(): Promise<void> {
  const config = loadGatewayConfig();
  const dataConverter = dataConverterFromEnv();
  const { address, ...connection } = connectionOptions(config);
  const conversations = await ConversationClient.connect({
    address,
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    ...(dataConverter && { dataConverter }),
  });
  await checkOwnerAttribute(conversations.client.connection, config.TEMPORAL_NAMESPACE);
  const gateway = await startGateway({
    conversations,
    tokens: config.tokens,
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
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  console.log(`${signal}: stopping the gateway`);
  // Open event streams and polls end with the server; a stop never waits on them for long.
  const stopped = Promise.all([gateway.close(), conversations.client.connection.close()]);
  const late = await Promise.race([stopped.then(() => false), sleep(STOP_WAIT_MS).then(() => true)]);
  if (late) console.log(`The gateway did not stop within ${STOP_WAIT_MS} ms; exiting anyway.`);
}

/** How long a stopping gateway waits for its server and connection to close. */
const STOP_WAIT_MS = 5_000;

/**
 * Without ConversationOwner registered every start would fail: say so at start-up. A server that will not list its
 * search attributes (an API key without the permission) is taken at its word later.
 */
async function checkOwnerAttribute(connection: ConnectionLike, namespace: string): Promise<void> {
  const operator = (connection as Partial<Connection>).operatorService;
  if (!operator) return;
  let names: string[];
  try {
    const listed = await connection.withDeadline(Date.now() + 10_000, () =>
      operator.listSearchAttributes({ namespace }),
    );
    names = Object.keys(listed.customAttributes ?? {});
  } catch (err) {
    console.warn(`Could not list the search attributes of ${namespace} (${(err as Error).message}); going on`);
    return;
  }
  if (!names.includes(ConversationOwner.name)) {
    throw new ConfigError(
      `The namespace ${namespace} has no ${ConversationOwner.name} search attribute (Keyword), which records each ` +
        "conversation's owner: register it (deploy/setup-namespace.sh, or temporal operator search-attribute create " +
        `--name ${ConversationOwner.name} --type Keyword) and start the gateway again.`,
    );
  }
}

/** Prints the help or the version when asked (true), before any configuration is read; refuses other arguments. */
function answeredHelpOrVersion(): boolean {
  const { values } = parseArgs({ options: { help: { type: 'boolean', short: 'h' }, version: { type: 'boolean' } } });
  if (values.version) console.log(packageVersion());
  else if (values.help) console.log(GATEWAY_USAGE);
  return Boolean(values.version || values.help);
}

if (require.main === module) {
  let answered = false;
  try {
    answered = answeredHelpOrVersion();
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${GATEWAY_USAGE}`);
    process.exit(2);
  }
  if (!answered) {
    runGateway().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err instanceof ConfigError ? err.message : err);
        process.exit(1);
      },
    );
  }
}
