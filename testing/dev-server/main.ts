#!/usr/bin/env node
// A Temporal dev server with the conversation search attributes, as a command: `claude-temporal-orchestrator-dev-server`
// (the package's bin), `npm run dev-server` here. On 7233/8233 with its database under
// ~/.cache/claude-temporal-orchestrator/; prints the address and the UI URL, and stops cleanly on Ctrl-C / SIGTERM.
import fs from 'node:fs';
import path from 'node:path';
import { packageVersion } from '../../client/package-version';
import { errorMessage } from './grpc-errors';
import { defaultPersistentDbFile, startDevServer } from './start-dev-server';
import type { DevServerOptions } from './types';

const USAGE = `usage: claude-temporal-orchestrator-dev-server [options]

A Temporal dev server (the official CLI's \`temporal server start-dev\`, SQLite) with the conversation search attributes
registered, until Ctrl-C. The Temporal CLI is taken from PATH or TEMPORAL_CLI_PATH, else built or downloaded once.

  --port N              the gRPC port (default 7233): TEMPORAL_ADDRESS=localhost:N for workers and clients
  --ui-port N           the Web UI's port (default 8233)
  --db-file F           the SQLite file (default: under ~/.cache/claude-temporal-orchestrator/, kept between runs)
  --namespace NS        a namespace to create besides "default"
  --codec-endpoint URL  the codec server the Web UI decodes payloads with
  --help, --version`;

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
    const port = (): number => {
      const text = need();
      const number = Number(text);
      if (!/^\d{1,5}$/.test(text) || number > 65_535)
        throw new Error(`${flag} takes a port, 0-65535: ${text.slice(0, 40)}`);
      return number;
    };
    switch (flag) {
      case '--port':
        options.port = port();
        break;
      case '--ui-port':
        options.uiPort = port();
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
        throw new Error(`Unknown option ${flag}.\n\n${USAGE}`);
    }
  }
  return options;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--version')) return void console.log(packageVersion());
  if (argv.includes('--help') || argv.includes('-h')) return void console.log(USAGE);
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
