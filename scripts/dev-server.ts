// Runs `temporal server start-dev` (the official Temporal CLI's single-process dev server, backed by SQLite) with
// this project's search attributes registered, and waits until it really answers. Used by the test runner (one
// server for the whole run, on a temp SQLite file), by crash tests (kill() = SIGKILL, restart() = same file and
// ports) and by the demo (a SQLite file under the cache folder).
//
// As a command, `tsx scripts/dev-server.ts [--port 7233] [--ui-port 8233] [--db-file F] [--namespace NS]` starts one
// on 7233/8233 with its database under ~/.cache/claude-temporal-orchestrator/, prints the address and the UI URL,
// and stops cleanly on Ctrl-C / SIGTERM.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { SearchAttributeType as SearchAttributeTypes, TypedSearchAttributes } from '@temporalio/common';
// Not re-exported from the package root in 1.24.
import {
  encodeSearchAttributeIndexedValueType,
  type SearchAttributeKey,
  type SearchAttributeType,
} from '@temporalio/common/lib/search-attributes';
import { msToTs } from '@temporalio/common/lib/time';
import { conversationSearchAttributes } from '../workflows/search-attributes';
import { freePorts, isPortOpen } from './free-port';
import { cacheRoot, ensureTemporalCli } from './temporal-cli';

export interface DevServerOptions {
  /** SQLite file. Default: a fresh temp file, deleted by stop(). A file you pass is never deleted. */
  dbFile?: string;
  /** gRPC frontend port. Default: a free port. */
  port?: number;
  /** Web UI port. Default: a free port. */
  uiPort?: number;
  /** Namespace to create and wait for (besides "default", which always exists). Default "default". */
  namespace?: string;
  /** Remote codec endpoint for the Web UI (`--ui-codec-endpoint`). */
  codecEndpoint?: string;
  /** Progress messages of ours (starting, ready, stopping). */
  log?: (line: string) => void;
  /** The server's own stdout/stderr lines. Default: dropped (the last lines still go into startup errors). */
  serverOutput?: (line: string) => void;
  /** Search attributes to register. Default: conversationSearchAttributes from workflows/search-attributes.ts. */
  searchAttributes?: readonly SearchAttributeKeyAny[];
  /** The Temporal CLI to run. Default: ensureTemporalCli(). */
  cliPath?: string;
  /** How long to wait for the server to answer, per start. Default 90 s. */
  startTimeoutMs?: number;
  /** How long stop() waits after SIGTERM before SIGKILL. Default 10 s. */
  stopTimeoutMs?: number;
}

export interface DevServer {
  /** host:port of the gRPC frontend, for Connection.connect({ address }). */
  address: string;
  uiUrl: string;
  namespace: string;
  /** The SQLite file ('' for a reused server we know nothing about). */
  dbFile: string;
  /** The running server process (undefined for a reused server, or while stopped). */
  process?: ChildProcess;
  /** SIGTERM, wait, then SIGKILL. Idempotent. Removes the SQLite file if startDevServer created it. */
  stop(): Promise<void>;
  /** SIGKILL, as in a crash; keeps the SQLite file for restart(). */
  kill(): Promise<void>;
  /** Start again on the same SQLite file and ports (stopping it first if it is running); waits until ready. */
  restart(): Promise<void>;
}

export type SearchAttributeKeyAny = SearchAttributeKey<SearchAttributeType>;

const HOST = '127.0.0.1';

/**
 * Custom search attributes per type that the dev server's SQLite visibility store can hold in one namespace: it maps
 * each to a fixed column (Int01..Int03, Keyword01..Keyword10, ...; go.temporal.io/server common/searchattribute/defs.go
 * sqlDbCustomSearchAttributes). One more and `start-dev` exits with "cannot have more than 3 search attributes of
 * type Int".
 */
export const SQLITE_SEARCH_ATTRIBUTE_LIMITS: Readonly<Record<SearchAttributeType, number>> = {
  KEYWORD: 10,
  TEXT: 3,
  INT: 3,
  DOUBLE: 3,
  BOOL: 3,
  DATETIME: 3,
  KEYWORD_LIST: 3,
};

/** Throws a clear error when `keys` cannot all be registered on a SQLite-backed dev server. */
export function checkSqliteSearchAttributeLimits(keys: readonly SearchAttributeKeyAny[]): void {
  const counts = new Map<SearchAttributeType, string[]>();
  for (const key of keys) counts.set(key.type, [...(counts.get(key.type) ?? []), key.name]);
  const over = [...counts].filter(([type, names]) => names.length > SQLITE_SEARCH_ATTRIBUTE_LIMITS[type]);
  if (over.length === 0) return;
  throw new Error(
    'The Temporal dev server (SQLite visibility) holds at most ' +
      Object.entries(SQLITE_SEARCH_ATTRIBUTE_LIMITS).map(([type, n]) => `${n} ${type}`).join(', ') +
      ' custom search attributes per namespace, but ' +
      over.map(([type, names]) => `${names.length} are ${type} (${names.join(', ')})`).join('; ') +
      '. Change the types or drop some in workflows/search-attributes.ts.',
  );
}
const OUTPUT_TAIL_LINES = 80;

/** `--search-attribute Name=Type` pairs for every attribute in workflows/search-attributes.ts. */
export function searchAttributeArgs(keys: readonly SearchAttributeKeyAny[] = conversationSearchAttributes): string[] {
  return keys.flatMap((key) => [
    '--search-attribute',
    `${key.name}=${TypedSearchAttributes.toMetadataType(key.type)}`,
  ]);
}

/** Where the demo and `tsx scripts/dev-server.ts` keep their database between runs. */
export function defaultPersistentDbFile(): string {
  return path.join(cacheRoot(), 'dev-server', 'temporal.sqlite');
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function grpcCode(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

const GRPC_ALREADY_EXISTS = 6;
const GRPC_NOT_FOUND = 5;

/**
 * Makes sure every conversation search attribute exists in `namespace` with the right type: adds the missing ones
 * (an "already exists" race is fine) and fails if one exists with another type.
 */
export async function ensureSearchAttributes(
  connection: Connection,
  namespace: string,
  keys: readonly SearchAttributeKeyAny[] = conversationSearchAttributes,
): Promise<void> {
  const wanted = new Map<string, number>();
  for (const key of keys) {
    const type = encodeSearchAttributeIndexedValueType(key.type);
    if (type === undefined) throw new Error(`Unknown search attribute type ${key.type} for ${key.name}`);
    wanted.set(key.name, type);
  }
  const list = async (): Promise<Record<string, number>> => {
    const response = await connection.withDeadline(Date.now() + 10_000, () =>
      connection.operatorService.listSearchAttributes({ namespace }),
    );
    return (response.customAttributes ?? {}) as Record<string, number>;
  };
  const check = (existing: Record<string, number>): string[] => {
    const missing: string[] = [];
    for (const [name, type] of wanted) {
      const have = existing[name];
      if (have === undefined) missing.push(name);
      else if (have !== type) {
        throw new Error(
          `Search attribute ${name} exists in namespace ${namespace} as ${typeName(have)}, but ` +
            `workflows/search-attributes.ts says ${typeName(type)}. A server cannot change a search attribute's ` +
            'type; for a dev server, delete its SQLite file (a database from before the change) and start again.',
        );
      }
    }
    return missing;
  };

  let missing = check(await list());
  if (missing.length === 0) return;
  try {
    await connection.withDeadline(Date.now() + 30_000, () =>
      connection.operatorService.addSearchAttributes({
        namespace,
        searchAttributes: Object.fromEntries(missing.map((name) => [name, wanted.get(name) ?? 0])),
      }),
    );
  } catch (error) {
    if (grpcCode(error) !== GRPC_ALREADY_EXISTS && !/already exists/i.test(errorMessage(error))) throw error;
  }
  // Registration is asynchronous on a real cluster (immediate on the dev server): wait for it to show.
  const deadline = Date.now() + 30_000;
  for (;;) {
    missing = check(await list());
    if (missing.length === 0) return;
    if (Date.now() > deadline) throw new Error(`Search attributes still missing in ${namespace}: ${missing.join(', ')}`);
    await sleep(500);
  }
}

function typeName(type: number): string {
  return (
    Object.values(SearchAttributeTypes).find((name) => encodeSearchAttributeIndexedValueType(name) === type) ??
    `type #${type}`
  );
}

/** Creates `namespace` on a server that does not have it yet, and waits until it can be described. */
async function ensureNamespace(connection: Connection, namespace: string): Promise<void> {
  const describe = (): Promise<unknown> =>
    connection.withDeadline(Date.now() + 5000, () => connection.workflowService.describeNamespace({ namespace }));
  try {
    await describe();
    return;
  } catch (error) {
    if (grpcCode(error) !== GRPC_NOT_FOUND) throw error;
  }
  try {
    await connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs('1 day'),
    });
  } catch (error) {
    if (grpcCode(error) !== GRPC_ALREADY_EXISTS) throw error;
  }
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await describe();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(500);
    }
  }
}

class ManagedDevServer implements DevServer {
  process?: ChildProcess;
  private exited?: Promise<void>;
  private readonly tail: string[] = [];
  private readonly onParentExit = (): void => {
    // Last resort if our process exits without stop(): never leave a server running behind us.
    this.process?.kill('SIGKILL');
  };

  constructor(
    readonly address: string,
    readonly uiUrl: string,
    readonly namespace: string,
    readonly dbFile: string,
    private readonly args: string[],
    private readonly cliPath: string,
    private readonly ownedDbDir: string | undefined,
    private readonly options: DevServerOptions,
  ) {}

  private get searchAttributes(): readonly SearchAttributeKeyAny[] {
    return this.options.searchAttributes ?? conversationSearchAttributes;
  }

  private log(line: string): void {
    this.options.log?.(line);
  }

  private get running(): boolean {
    return this.process !== undefined && this.process.exitCode === null && this.process.signalCode === null;
  }

  async start(): Promise<void> {
    const started = Date.now();
    const [host, portText] = this.address.split(':') as [string, string];
    if (await isPortOpen(host, Number(portText), 500)) {
      throw new Error(`Cannot start the Temporal dev server on ${this.address}: something already listens there.`);
    }
    this.tail.length = 0;
    this.log(`Starting Temporal dev server: ${this.cliPath} ${this.args.join(' ')}`);
    const child = spawn(this.cliPath, this.args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.process = child;
    process.on('exit', this.onParentExit);
    this.exited = new Promise<void>((resolve) => {
      child.once('close', () => resolve()); // after 'exit', once its output is fully read
      child.once('error', (error) => {
        this.pushOutput(`spawn error: ${error.message}`);
        resolve();
      });
    });
    void this.exited.then(() => process.off('exit', this.onParentExit));
    for (const stream of [child.stdout, child.stderr]) {
      let partial = '';
      stream.on('data', (chunk: Buffer) => {
        const lines = (partial + chunk.toString('utf8')).split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) this.pushOutput(line);
      });
      stream.on('end', () => {
        if (partial) this.pushOutput(partial);
      });
    }

    try {
      await this.waitUntilReady(child, started + (this.options.startTimeoutMs ?? 90_000));
    } catch (error) {
      await this.kill();
      throw error;
    }
    this.log(`Temporal dev server ready at ${this.address} (UI ${this.uiUrl}) in ${Date.now() - started} ms.`);
  }

  private pushOutput(line: string): void {
    if (!line.trim()) return;
    this.tail.push(line);
    if (this.tail.length > OUTPUT_TAIL_LINES) this.tail.shift();
    this.options.serverOutput?.(line);
  }

  private failure(why: string): Error {
    const output = this.tail.length ? `\n--- last server output ---\n${this.tail.join('\n')}` : ' (no server output)';
    return new Error(`Temporal dev server (${this.cliPath} ${this.args.join(' ')}) ${why}${output}`);
  }

  private async waitUntilReady(child: ChildProcess, deadline: number): Promise<void> {
    let exitedEarly = false;
    void this.exited?.then(() => (exitedEarly = true));
    let lastError: unknown;
    while (!exitedEarly) {
      if (Date.now() > deadline) {
        throw this.failure(`did not answer within the start timeout; last error: ${errorMessage(lastError)}`);
      }
      let connection: Connection | undefined;
      try {
        connection = await Connection.connect({ address: this.address, connectTimeout: 2000 });
        await connection.withDeadline(Date.now() + 5000, () =>
          connection!.workflowService.describeNamespace({ namespace: this.namespace }),
        );
        // Registered at creation by --search-attribute; this also adds any that an older database file lacks
        // (the CLI only applies --search-attribute when it creates the namespace).
        await ensureSearchAttributes(connection, this.namespace, this.searchAttributes);
        return;
      } catch (error) {
        lastError = error;
      } finally {
        await connection?.close().catch(() => {});
      }
      await Promise.race([sleep(250), this.exited]);
    }
    throw this.failure(
      `exited during startup (${child.signalCode ? `signal ${child.signalCode}` : `exit code ${child.exitCode}`})`,
    );
  }

  async stop(): Promise<void> {
    await this.terminate(true);
    if (this.ownedDbDir) await fsp.rm(this.ownedDbDir, { recursive: true, force: true });
  }

  async kill(): Promise<void> {
    await this.terminate(false);
  }

  private async terminate(graceful: boolean): Promise<void> {
    const child = this.process;
    if (!child || !this.running) {
      await this.exited;
      return;
    }
    if (graceful) {
      this.log(`Stopping Temporal dev server at ${this.address}`);
      child.kill('SIGTERM');
      const timeout = this.options.stopTimeoutMs ?? 10_000;
      let timer: NodeJS.Timeout | undefined;
      const stopped = await Promise.race([
        this.exited!.then(() => true),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeout))),
      ]);
      clearTimeout(timer); // a pending timer would keep the caller's process alive for `timeout`
      if (stopped) return;
      this.log(`Temporal dev server did not stop within ${timeout} ms of SIGTERM; sending SIGKILL.`);
    }
    child.kill('SIGKILL');
    await this.exited;
  }

  async restart(): Promise<void> {
    if (this.running) await this.terminate(true);
    else await this.exited;
    if (this.ownedDbDir) await fsp.mkdir(this.ownedDbDir, { recursive: true });
    // The old process is gone, but give the kernel a moment if a port is still held by a dying socket.
    const [host, portText] = this.address.split(':') as [string, string];
    for (let i = 0; i < 40 && (await isPortOpen(host, Number(portText), 200)); i++) await sleep(250);
    await this.start();
  }
}

export async function startDevServer(options: DevServerOptions = {}): Promise<DevServer> {
  const searchAttributes = options.searchAttributes ?? conversationSearchAttributes;
  checkSqliteSearchAttributeLimits(searchAttributes);
  const cliPath = options.cliPath ?? (await ensureTemporalCli(options.log));
  const namespace = options.namespace ?? 'default';
  let ownedDbDir: string | undefined;
  let dbFile = options.dbFile;
  if (dbFile === undefined) {
    ownedDbDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'temporal-dev-server-'));
    dbFile = path.join(ownedDbDir, 'temporal.sqlite');
  } else {
    dbFile = path.resolve(dbFile);
    await fsp.mkdir(path.dirname(dbFile), { recursive: true });
  }
  // Ports we pick are free when picked, but the server's own services pick theirs too, and another process can take
  // one in between: a start that fails on a taken port is tried again with fresh ones, unless the port was given.
  const given = new Set([options.port, options.uiPort].filter((p) => p !== undefined));
  for (let attempt = 1; ; attempt++) {
    const free = await freePorts((options.port === undefined ? 1 : 0) + (options.uiPort === undefined ? 1 : 0), HOST);
    const port = options.port ?? free.shift()!;
    const uiPort = options.uiPort ?? free.shift()!;
    const args = [
      'server', 'start-dev',
      '--db-filename', dbFile,
      '--port', String(port),
      '--ui-port', String(uiPort),
      '--ip', HOST,
      '--log-level', 'warn',
      // "default" is always created; naming it again would only ask the CLI to create it twice.
      ...(namespace === 'default' ? [] : ['--namespace', namespace]),
      ...searchAttributeArgs(searchAttributes),
      ...(options.codecEndpoint ? ['--ui-codec-endpoint', options.codecEndpoint] : []),
      // Eager activity execution: a workflow task that schedules an activity gets the activity task back in the
      // same response when the worker has a free slot — one matching round trip less per model call and per tool.
      '--dynamic-config-value', 'system.enableActivityEagerExecution=true',
      // Write-ahead log, synced at checkpoints: a commit no longer waits for a rollback-journal fsync. 200 concurrent
      // conversations on 2 cores: 18.0–18.3 s instead of 31.7–35.8 s, activity completions acknowledged in p50 ≤ 250–500 ms
      // instead of ≤ 1000 ms. A SIGKILLed server loses nothing committed (only an OS crash could drop the last commits).
      '--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal',
    ];
    const server = new ManagedDevServer(
      `${HOST}:${port}`, `http://${HOST}:${uiPort}`, namespace, dbFile, args, cliPath, ownedDbDir, options,
    );
    try {
      await server.start();
      return server;
    } catch (error) {
      const taken = /:(\d+): bind: address already in use/i.exec(errorMessage(error))?.[1];
      if (taken !== undefined && !given.has(Number(taken)) && attempt < 3) {
        options.log?.(`Port ${taken} was taken while the dev server started (attempt ${attempt}); trying other ports.`);
        continue;
      }
      if (ownedDbDir) await fsp.rm(ownedDbDir, { recursive: true, force: true });
      throw error;
    }
  }
}

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
    options.log?.(`TEMPORAL_ADDRESS=${address} does not answer (${errorMessage(error)}); starting a dev server instead.`);
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
    throw new Error(`The Temporal server at ${address} was not started by us (TEMPORAL_ADDRESS): cannot kill or restart it.`);
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
      case '--port': options.port = Number(need()); break;
      case '--ui-port': options.uiPort = Number(need()); break;
      case '--db-file': options.dbFile = need(); break;
      case '--namespace': options.namespace = need(); break;
      case '--codec-endpoint': options.codecEndpoint = need(); break;
      default: throw new Error(`Unknown option ${flag}. Options: --port N --ui-port N --db-file F --namespace NS --codec-endpoint URL`);
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
