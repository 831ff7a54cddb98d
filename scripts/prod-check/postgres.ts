// PostgreSQL from Debian's packages, as a private cluster of this run: its own data folder, a free port, the compose
// file's user and password (POSTGRES_USER/POSTGRES_PASSWORD of the postgresql service). Installed with apt-get when
// missing (the machines run as root). The server refuses to run as root, so it runs as the `postgres` user.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { findOnPath } from '../../testing/temporal-cli';

const run = promisify(execFile);
/** The Debian packages this topology needs on the host: PostgreSQL, and nc for deploy/setup-postgres.sh. */
export async function ensureDebianPackages(log: (line: string) => void): Promise<string> {
  const missing: string[] = [];
  if (!postgresBinDir()) missing.push('postgresql');
  if (!(await findOnPath('nc'))) missing.push('netcat-openbsd');
  if (missing.length > 0) {
    log(`apt-get install ${missing.join(' ')}`);
    await run('apt-get', ['update'], { timeout: 10 * 60_000 });
    await run('apt-get', ['install', '-y', ...missing], {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      timeout: 20 * 60_000,
      maxBuffer: 32 * 1024 * 1024,
    });
  }
  const bin = postgresBinDir();
  if (!bin)
    throw new Error('PostgreSQL is not installed under /usr/lib/postgresql/<version>/bin after apt-get install');
  return bin;
}

function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return undefined;
  const versions = fs
    .readdirSync(root)
    .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] && path.join(root, versions[0], 'bin');
}

export interface Postgres {
  port: number;
  version: string;
  stop(): Promise<void>;
}

export async function startPostgres(options: {
  bin: string;
  dir: string;
  port: number;
  user: string;
  password: string;
  log: (line: string) => void;
}): Promise<Postgres> {
  const { bin, dir, port, user, password } = options;
  const data = path.join(dir, 'data');
  await fsp.mkdir(dir, { recursive: true });
  await fsp.chmod(path.dirname(dir), 0o755).catch(() => undefined);
  await fsp.chmod(dir, 0o755);
  const pwfile = path.join(dir, 'pwfile');
  await fsp.writeFile(pwfile, `${password}\n`, { mode: 0o644 });
  await run('chown', ['postgres:postgres', dir]);
  const asPostgres = (file: string, args: string[]) => run('runuser', ['-u', 'postgres', '--', file, ...args]);
  await asPostgres(path.join(bin, 'initdb'), ['-D', data, '-U', user, `--pwfile=${pwfile}`, '-A', 'scram-sha-256']);
  const child: ChildProcess = spawn(
    'runuser',
    [
      '-u',
      'postgres',
      '--',
      path.join(bin, 'postgres'),
      '-D',
      data,
      '-p',
      String(port),
      '-k',
      dir,
      '-c',
      'listen_addresses=127.0.0.1',
    ],
    { stdio: ['ignore', 'ignore', fs.openSync(path.join(dir, 'postgres.log'), 'a')] },
  );
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  for (let i = 0; ; i++) {
    try {
      await run(path.join(bin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port)]);
      break;
    } catch {
      if (i > 120 || child.exitCode !== null) throw new Error(`PostgreSQL did not start; see ${dir}/postgres.log`);
      await sleep(250);
    }
  }
  const version = (await run(path.join(bin, 'postgres'), ['--version'])).stdout.trim();
  options.log(`${version} on 127.0.0.1:${port} (data in ${data})`);
  return {
    port,
    version,
    async stop() {
      await asPostgres(path.join(bin, 'pg_ctl'), ['stop', '-D', data, '-m', 'fast']).catch(() => undefined);
      await Promise.race([exited, sleep(20_000)]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}
