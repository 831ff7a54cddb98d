// Runs `temporal server start-dev` (the official Temporal CLI's single-process dev server, backed by SQLite) with this
// project's search attributes registered, and waits until it really answers. Used by the test runner (one server for
// the whole run, on a temp SQLite file), by crash tests (kill() = SIGKILL, restart() = same file and ports), by the
// demo (a SQLite file under the cache folder) and by a service's own tests (the package's testing entry point).
//
//   types.ts                          DevServerOptions, DevServer
//   start-dev-server.ts               startDevServer: command line, ports (tried again when one is taken), SQLite file
//   managed-dev-server.ts             the process: start and wait until ready, stop, kill, restart
//   connect-or-start-dev-server.ts    reuse $TEMPORAL_ADDRESS, else start one
//   search-attributes.ts, ensure-namespace.ts   making a server ready for conversations
//   main.ts                           `npm run dev-server`
export { connectOrStartDevServer } from './connect-or-start-dev-server';
export { ensureNamespace } from './ensure-namespace';
export {
  checkSqliteSearchAttributeLimits,
  ensureSearchAttributes,
  searchAttributeArgs,
  SQLITE_SEARCH_ATTRIBUTE_LIMITS,
} from './search-attributes';
export { defaultPersistentDbFile, startDevServer } from './start-dev-server';
export type { DevServer, DevServerOptions, SearchAttributeKeyAny } from './types';
