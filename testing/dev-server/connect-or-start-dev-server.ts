// The server a test run, the demo or a benchmark uses: the one at $TEMPORAL_ADDRESS when it answers (made ready for
// conversations: namespace and search attributes), else a dev server started here.
import { Connection } from '@temporalio/client';
import { ensureNamespace } from './ensure-namespace';
import { errorMessage } from './grpc-errors';
import { ensureSearchAttributes } from './search-attributes';
import { startDevServer } from './start-dev-server';
import type { DevServer, DevServerOptions } from './types';

/**
 * Reuses the server at $TEMPORAL_ADDRESS when it answers (making sure the namespace — $TEMPORAL_NAMESPACE, else
 * options.namespace, else "default" — and the search attributes exist); its stop() does nothing. Otherwise starts
 * a dev server like startDevServer(options).
 */
export async function connectOrStartDevServer(options: DevServerOptions = {}): Promise<DevServer> {
  const address = process.env.TEMPORAL_ADDRESS;
  if (!address) return await startDevServer(options);
  const namespace = process.env.TEMPORAL_NAMESPACE || options.namespace || 'default';
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address, connectTimeout: 5000 });
  } catch (error) {
    options.log?.(
      `TEMPORAL_ADDRESS=${address} does not answer (${errorMessage(error)}); starting a dev server instead.`,
    );
    return await startDevServer(options);
  }
  try {
    await ensureNamespace(connection, namespace);
    await ensureSearchAttributes(connection, namespace, options.searchAttributes);
  } finally {
    await connection.close().catch(() => {});
  }
  options.log?.(`Using the Temporal server at ${address} (namespace ${namespace}).`);
  const notOurs = async (): Promise<void> => {
    throw new Error(
      `The Temporal server at ${address} was not started by us (TEMPORAL_ADDRESS): cannot kill or restart it.`,
    );
  };
  return {
    address,
    uiUrl: process.env.TEMPORAL_UI_URL ?? '',
    namespace,
    dbFile: process.env.TEMPORAL_DB_FILE ?? '',
    stop: async () => {},
    kill: notOurs,
    restart: notOurs,
  };
}
