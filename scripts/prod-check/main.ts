// `npm run prod-check`: the production topology of docker-compose.yml, without Docker, from nothing: PostgreSQL from
// Debian's packages (a private cluster), the Temporal server built from its Go module at the compose file's version
// with its own SQL tool setting up the schema (deploy/setup-postgres.sh, as the temporal-schema service runs it),
// the namespace and search attributes (deploy/setup-namespace.sh, as temporal-setup runs it), the codec server
// (compose's command) and three workers (the Dockerfile's CMD, on the workflow bundle its build step makes), configured from
// docker-compose.yml and deploy/example.env (topology.ts). Then the mixed soak (scripts/soak/run-soak.ts) with worker
// kills and Temporal server kills (PostgreSQL stays up), the figures, and everything torn down again.
//
//   npm run prod-check                                    1,000 conversations
//   npm run prod-check -- --conversations 200 --keep-logs  (any soak option; see npm run soak -- --help)
//
// Not in the default suite: it builds the server (minutes the first time) and runs for several minutes.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import { AesGcmCodec } from '../../codec/aes-gcm-codec';
import { encryptingDataConverter } from '../../codec/data-converter';
import { parseKeyRing } from '../../codec/keys';
import { freePorts } from '../../testing/free-port';
import { startMessagesApi } from '../../testing/messages-api/server';
import type { MessagesApi } from '../../testing/messages-api/types';
import { ensureTemporalCli } from '../../testing/temporal-cli';
import { cleanUpOnSignal, runMain } from '../script-main';
import { spawnWorker } from '../worker-process';
import { parseArgs } from '../soak/args';
import { runSoak } from '../soak/run-soak';
import { ensureDebianPackages, type Postgres, startPostgres } from './postgres';
import { ensureTemporalServer } from './temporal-server-build';
import { loadCompose, nativeTopology, ROOT, TEMPORAL_PORT_VARIABLES } from './topology';

const run = promisify(execFile);
/** The soak's defaults for this check: 1,000 conversations, three workers, worker kills, server kills. */
const DEFAULTS = [
  '--conversations',
  '1000',
  '--workers',
  '3',
  '--kill-every',
  '20s',
  '--server-kill-every',
  '60s',
  '--deadline',
  '20m',
];

async function main(): Promise<number> {
  const args = parseArgs([...DEFAULTS, ...process.argv.slice(2)]);
  if (!args) return 0;
  const t0 = Date.now();
  const log = (line: string): void =>
    void process.stderr.write(`[prod-check ${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);
  const workDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'prod-check-'));
  const logFile = (name: string) => fs.openSync(path.join(workDir, `${name}.log`), 'a');
  const children: ChildProcess[] = [];
  let postgres: Postgres | undefined;
  let server: ChildProcess | undefined;
  let mock: MessagesApi | undefined;
  let cleanedUp: Promise<void> | undefined;
  const cleanup = (): Promise<void> =>
    (cleanedUp ??= (async () => {
      for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await sleep(2000);
      for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await mock?.close().catch(() => undefined);
      await postgres?.stop().catch(() => undefined);
      if (!args.keepLogs) await fsp.rm(workDir, { recursive: true, force: true });
      else log(`logs kept in ${workDir}`);
    })());
  cleanUpOnSignal(cleanup, log);

  try {
    const compose = loadCompose();
    const pgBin = await ensureDebianPackages(log);
    const serverVersion = nativeTopology(await placeholderSettings()).serverVersion;
    const build = await ensureTemporalServer(serverVersion, log);
    const cli = await ensureTemporalCli(log);

    mock = await startMessagesApi();
    const keys = `k1:${randomBytes(32).toString('base64')}`;
    const [pgPort, codecPort, ...rest] = await freePorts(2 + args.workers, '127.0.0.1');
    // The server stores membership ports in a PostgreSQL smallint: they must stay below 32768.
    const low = await freeLowPorts(TEMPORAL_PORT_VARIABLES.length);
    const temporalPorts = Object.fromEntries(TEMPORAL_PORT_VARIABLES.map((key) => [key, low.shift()!]));
    const topology = nativeTopology({
      ports: { postgres: pgPort!, codecServer: codecPort!, temporal: temporalPorts, workerMetrics: rest },
      schemaRoot: build.postgresSchema,
      variables: {
        PAYLOAD_ENCRYPTION_KEYS: keys,
        CODEC_SERVER_TOKEN: randomBytes(24).toString('base64url'),
        ANTHROPIC_BASE_URL: mock.url, // the local Messages API: there is no API key here
      },
    });
    const pgUser = compose.services.postgresql.environment.POSTGRES_USER as string;
    const pgPassword = topology.env.temporal.POSTGRES_PWD!;

    // PostgreSQL, then the schema with the server's own SQL tool (the compose file's script, on this host's PATH).
    postgres = await startPostgres({
      bin: pgBin,
      dir: path.join(workDir, 'postgres'),
      port: pgPort!,
      user: pgUser,
      password: pgPassword,
      log,
    });
    const tools = path.join(workDir, 'bin');
    await fsp.mkdir(tools);
    await fsp.symlink(build.sql, path.join(tools, 'temporal-sql-tool'));
    await fsp.symlink(cli, path.join(tools, 'temporal'));
    const PATH = `${tools}${path.delimiter}${process.env.PATH}`;
    const script = async (file: string, env: Record<string, string>, name: string) => {
      log(`${name}: sh ${path.relative(ROOT, file)}`);
      const { stdout } = await run('sh', [file], { env: { PATH, HOME: os.homedir(), ...env }, timeout: 5 * 60_000 });
      fs.writeFileSync(path.join(workDir, `${name}.log`), stdout);
    };
    await script(topology.scripts.schema, topology.env['temporal-schema'], 'temporal-schema');

    // The Temporal server: the Go build, configured by the compose file's environment (its embedded template).
    const address = `127.0.0.1:${temporalPorts.FRONTEND_GRPC_PORT}`;
    const startServer = async (): Promise<void> => {
      server = spawn(build.server, ['start'], {
        env: { PATH, HOME: os.homedir(), ...topology.env.temporal },
        stdio: ['ignore', logFile('temporal'), logFile('temporal')],
      });
      children.push(server);
      await waitForFrontend(address, 120_000);
    };
    await startServer();
    log(`Temporal server ${serverVersion} (${build.server}) at ${address}, PostgreSQL persistence and visibility`);
    await script(topology.scripts.namespace, topology.env['temporal-setup'], 'temporal-setup');
    const namespace = topology.env['temporal-setup'].NAMESPACE!;

    // The build (dist/ and its workflow bundles), as the Dockerfile makes it; then the codec server, as compose runs it.
    const [buildProgram, ...buildArgs] = topology.buildCommand;
    await run(buildProgram!, buildArgs, { cwd: ROOT, timeout: 5 * 60_000 });
    const [codecProgram, ...codecArgs] = topology.codecServerCommand;
    const codec = spawn(codecProgram === 'node' ? process.execPath : codecProgram!, codecArgs, {
      cwd: ROOT,
      env: { PATH, HOME: os.homedir(), ...topology.env['codec-server'] },
      stdio: ['ignore', logFile('codec-server'), logFile('codec-server')],
    });
    children.push(codec);
    const codecUrl = `http://127.0.0.1:${codecPort}`;
    await waitForHttp(`${codecUrl}/health`, 60_000);
    await checkCodecServer(codecUrl, topology.env['codec-server'].CODEC_SERVER_TOKEN!, keys);
    log(`codec server ${codecUrl}; workers: ${topology.workerCommand.join(' ')} (the Dockerfile's CMD)`);

    const workerOutput = fs.createWriteStream(path.join(workDir, 'workers.log'));
    let replica = 0;
    const { figures, ok } = await runSoak(args, {
      address,
      namespace,
      taskQueue: topology.env.worker.TEMPORAL_TASK_QUEUE!,
      mock,
      dataConverter: encryptingDataConverter(parseKeyRing(keys)),
      workerLog: path.join(workDir, 'workers.log'),
      log,
      async startWorker(workerEnv) {
        const env = topology.workers[replica++ % topology.workers.length]!;
        const process = await spawnWorker({
          entry: topology.workerCommand.at(-1)!,
          command: topology.workerCommand,
          env: { ...env, ...workerEnv },
          readyTimeoutMs: 120_000,
          output: (line) => void workerOutput.write(`${line}\n`),
        });
        return { process, metricsUrl: `http://${env.WORKER_METRICS_ADDRESS}/metrics` };
      },
      async killServer() {
        const victim = server!;
        victim.kill('SIGKILL');
        await new Promise((resolve) =>
          victim.exitCode !== null || victim.signalCode !== null ? resolve(undefined) : victim.once('close', resolve),
        );
        await startServer();
      },
    });
    workerOutput.end();
    console.log(
      `\nProduction topology, natively: PostgreSQL (${postgres.version}), Temporal server ${serverVersion} built from ` +
        `${'go.temporal.io/server'} (schema by its SQL tool), codec server, ${args.workers} workers (${topology.workerCommand.join(' ')}).` +
        `\nFigures: started ${figures.started}, completed ${figures.completed}, failed ${figures.failed}, lost ${figures.lost}, ` +
        `duplicates ${figures.duplicates}, stuck ${figures.stuck}, elapsed ${(figures.elapsedMs / 1000).toFixed(1)} s`,
    );
    return ok ? 0 : 1;
  } finally {
    await cleanup();
  }
}

/** Settings that only serve to read the versions (nativeTopology needs ports and paths to exist in form). */
async function placeholderSettings() {
  return {
    ports: { postgres: 0, codecServer: 0, temporal: { FRONTEND_GRPC_PORT: 0 }, workerMetrics: [] },
    schemaRoot: '',
    variables: { PAYLOAD_ENCRYPTION_KEYS: 'x', CODEC_SERVER_TOKEN: 'x' },
  };
}

/** Free ports between 20000 and 32767 (the ephemeral range starts above), checked by binding them. */
async function freeLowPorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < count) {
    const port = 20_000 + Math.floor(Math.random() * 12_768);
    if (ports.includes(port)) continue;
    const free = await new Promise<boolean>((resolve) => {
      const probe = net.createServer();
      probe.once('error', () => resolve(false));
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
    if (free) ports.push(port);
  }
  return ports;
}

async function waitForFrontend(address: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let connection: Connection | undefined;
    try {
      connection = await Connection.connect({ address, connectTimeout: 2000 });
      await connection.withDeadline(Date.now() + 5000, () => connection!.workflowService.getSystemInfo({}));
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`the Temporal server at ${address} did not answer: ${String(error)}`);
      await sleep(500);
    } finally {
      await connection?.close().catch(() => undefined);
    }
  }
}

/** The codec server decrypts what the deployment's key encrypted (the Web UI's and the CLI's view of payloads). */
async function checkCodecServer(url: string, token: string, keys: string): Promise<void> {
  const payload = { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"codec check"') };
  const [encrypted] = await new AesGcmCodec(parseKeyRing(keys)).encode([payload]);
  const b64 = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? new Uint8Array()).toString('base64');
  const response = await fetch(`${url}/decode`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      payloads: [
        {
          metadata: Object.fromEntries(Object.entries(encrypted!.metadata ?? {}).map(([k, v]) => [k, b64(v)])),
          data: b64(encrypted!.data),
        },
      ],
    }),
  });
  const body = (await response.json()) as { payloads?: { data?: string }[] };
  const text = Buffer.from(body.payloads?.[0]?.data ?? '', 'base64').toString();
  if (!response.ok || text !== '"codec check"')
    throw new Error(`the codec server did not decode: ${response.status} ${text}`);
}

async function waitForHttp(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (
    !(await fetch(url).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (Date.now() > deadline) throw new Error(`${url} did not answer`);
    await sleep(500);
  }
}

if (require.main === module) runMain(main);
