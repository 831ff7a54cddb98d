// `npm run dev-server [-- --port 7233] [--ui-port 8233] [--db-file F] [--namespace NS] [--codec-endpoint URL]`:
// a dev server on 7233/8233 with its database under ~/.cache/claude-temporal-orchestrator/; prints the address and
// the UI URL, and stops cleanly on Ctrl-C / SIGTERM.
import fs from 'node:fs';
import path from 'node:path';
import { errorMessage } from './grpc-errors';
import { defaultPersistentDbFile, startDevServer } from './start-dev-server';
import type { DevServerOptions } from './types';

function parseCliArgs(argv: string[]): DevServerOptions {
  const options: DevServerOptions = {};
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    const need = (): string => {
      if (value === undefined) throw new Error(`${flag} needs a value`);
      i++;
      return value;
    };
    switch (flag) {
      case '--port':
        options.port = Number(need());
        break;
      case '--ui-port':
        options.uiPort = Number(need());
        break;
      case '--db-file':
        options.dbFile = need();
        break;
      case '--namespace':
        options.namespace = need();
        break;
      case '--codec-endpoint':
        options.codecEndpoint = need();
        break;
      default:
        throw new Error(
          `Unknown option ${flag}. Options: --port N --ui-port N --db-file F --namespace NS --codec-endpoint URL`,
        );
    }
  }
  return options;
}

async function main(): Promise<void> {
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  let stopping = false;
  const options: DevServerOptions = {
    port: 7233,
    uiPort: 8233,
    dbFile: defaultPersistentDbFile(),
    log,
    // The server's warnings, except the burst of "connection refused" it logs while shutting down.
    serverOutput: (line) => {
      if (!stopping) log(line);
    },
    ...parseCliArgs(process.argv.slice(2)),
  };
  if (options.dbFile) fs.mkdirSync(path.dirname(options.dbFile), { recursive: true });
  const server = await startDevServer(options);
  process.stdout.write(
    `Temporal dev server\n  address:   ${server.address}\n  namespace: ${server.namespace}\n` +
      `  UI:        ${server.uiUrl}\n  database:  ${server.dbFile}\nCtrl-C to stop.\n`,
  );
  server.process?.once('exit', (code, signal) => {
    if (stopping) return;
    log(`Temporal dev server exited unexpectedly (${signal ?? `exit code ${code}`}).`);
    process.exit(1);
  });
  const shutdown = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping...`);
    server.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        log(`Failed to stop: ${errorMessage(error)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`${errorMessage(error)}\n`);
    process.exit(1);
  });
}
