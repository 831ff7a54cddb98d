// Starts a dev server: the Temporal CLI's `server start-dev` on a SQLite file (a fresh temp file by default), with the
// conversation search attributes, on free ports — tried again on other ports when one is taken while it starts.
import os from 'node:os';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { registeredSearchAttributes } from '../../common/search-attributes';
import { freePorts } from '../free-port';
import { cacheRoot, ensureTemporalCli } from '../temporal-cli';
import { errorMessage } from './grpc-errors';
import { ManagedDevServer } from './managed-dev-server';
import { checkSqliteSearchAttributeLimits, searchAttributeArgs } from './search-attributes';
import type { DevServer, DevServerOptions } from './types';

const HOST = '127.0.0.1';

/** Where the demo and `npm run dev-server` keep their database between runs. */
export function defaultPersistentDbFile(): string {
  return path.join(cacheRoot(), 'dev-server', 'temporal.sqlite');
}

export async function startDevServer(options: DevServerOptions = {}): Promise<DevServer> {
  const searchAttributes = options.searchAttributes ?? registeredSearchAttributes;
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
      'server',
      'start-dev',
      '--db-filename',
      dbFile,
      '--port',
      String(port),
      '--ui-port',
      String(uiPort),
      '--ip',
      HOST,
      '--log-level',
      'warn',
      // "default" is always created; naming it again would only ask the CLI to create it twice.
      ...(namespace === 'default' ? [] : ['--namespace', namespace]),
      ...searchAttributeArgs(searchAttributes),
      ...(options.codecEndpoint ? ['--ui-codec-endpoint', options.codecEndpoint] : []),
      // Eager activity execution: a workflow task that schedules an activity gets the activity task back in the
      // same response when the worker has a free slot — one matching round trip less per model call and per tool.
      '--dynamic-config-value',
      'system.enableActivityEagerExecution=true',
      // Task queue priority and fairness (docs/fairness.md): a conversation's priority and tenant order its tasks
      // when workers are busy. Server 1.29 has them behind these switches (migration: a queue's backlog from before
      // fairness was on is still drained).
      '--dynamic-config-value',
      'matching.useNewMatcher=true',
      '--dynamic-config-value',
      'matching.enableFairness=true',
      '--dynamic-config-value',
      'matching.enableMigration=true',
      // Write-ahead log, synced at checkpoints: a commit no longer waits for a rollback-journal fsync. 200 concurrent
      // conversations on 2 cores: 18.0–18.3 s instead of 31.7–35.8 s, activity completions acknowledged in p50 ≤ 250–500 ms
      // instead of ≤ 1000 ms. A SIGKILLed server loses nothing committed (only an OS crash could drop the last commits).
      '--sqlite-pragma',
      'journal_mode=wal',
      '--sqlite-pragma',
      'synchronous=normal',
      ...Object.entries(options.dynamicConfig ?? {}).flatMap(([key, value]) => [
        '--dynamic-config-value',
        `${key}=${JSON.stringify(value)}`,
      ]),
    ];
    const server = new ManagedDevServer(
      `${HOST}:${port}`,
      `http://${HOST}:${uiPort}`,
      namespace,
      dbFile,
      args,
      cliPath,
      ownedDbDir,
      options,
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
