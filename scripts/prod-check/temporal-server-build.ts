// The Temporal server and its SQL tool, built once from their Go module at the compose file's version and cached
// beside the CLI (testing/temporal-cli.ts): ${XDG_CACHE_HOME:-~/.cache}/claude-temporal-orchestrator/temporal-server/
// v<version>/{server,sql}. Built into a temporary GOBIN and renamed into place, so a half-built binary is never used.
// The module's schema folder (schema/postgresql/v12) comes from the Go module cache (`go mod download -json`).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { cacheRoot, findOnPath } from '../../testing/temporal-cli';

const run = promisify(execFile);
export const SERVER_MODULE = 'go.temporal.io/server';
export const SERVER_PACKAGES = { server: `${SERVER_MODULE}/cmd/server`, sql: `${SERVER_MODULE}/cmd/tools/sql` };

export interface TemporalServerBuild {
  server: string;
  sql: string;
  /** <module>/schema/postgresql/v12 */
  postgresSchema: string;
}

export async function ensureTemporalServer(version: string, log: (line: string) => void): Promise<TemporalServerBuild> {
  const tag = version.startsWith('v') ? version : `v${version}`;
  const go = await findOnPath('go');
  if (!go) throw new Error('Go is not on PATH: it builds the Temporal server (go install go.temporal.io/server/...).');
  const dir = path.join(cacheRoot(), 'temporal-server', tag);
  const server = path.join(dir, 'server');
  const sql = path.join(dir, 'sql');
  if (!(fs.existsSync(server) && fs.existsSync(sql))) {
    log(
      `building the Temporal server ${tag} and its SQL tool from ${SERVER_MODULE} (go install; minutes the first time)`,
    );
    await fsp.mkdir(path.dirname(dir), { recursive: true });
    const gobin = await fsp.mkdtemp(`${dir}.build-`);
    try {
      await run(go, ['install', `${SERVER_PACKAGES.server}@${tag}`, `${SERVER_PACKAGES.sql}@${tag}`], {
        env: { ...process.env, GOBIN: gobin, GOFLAGS: '-mod=mod' },
        maxBuffer: 16 * 1024 * 1024,
        timeout: 30 * 60_000,
      });
      await fsp.rm(dir, { recursive: true, force: true });
      await fsp.rename(gobin, dir);
    } finally {
      await fsp.rm(gobin, { recursive: true, force: true });
    }
  }
  const { stdout } = await run(go, ['mod', 'download', '-json', `${SERVER_MODULE}@${tag}`], { timeout: 10 * 60_000 });
  const moduleDir = (JSON.parse(stdout) as { Dir?: string }).Dir;
  if (!moduleDir) throw new Error(`go mod download ${SERVER_MODULE}@${tag} did not say where the module is`);
  return { server, sql, postgresSchema: path.join(moduleDir, 'schema', 'postgresql', 'v12') };
}
