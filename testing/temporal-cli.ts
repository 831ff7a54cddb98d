// Finds (or, once, builds) the official Temporal CLI, whose `temporal server start-dev` is the dev server that the
// demo and the tests run against. In order:
//   1. $TEMPORAL_CLI_PATH, if set — it must exist and run, or this fails loudly;
//   2. `temporal` on $PATH;
//   3. the cache: ${XDG_CACHE_HOME:-~/.cache}/claude-temporal-orchestrator/temporal-cli/v1.5.1/temporal;
//   4. with Go >= 1.25 on $PATH: `go install github.com/temporalio/cli/cmd/temporal@v1.5.1` into that cache folder
//      (built in a temporary GOBIN and renamed into place, so a half-built binary is never used; a lock file makes
//      concurrent callers wait for one build instead of building twice). Several minutes the first time;
//   5. without Go: the copy of the CLI that @temporalio/testing downloads for TestWorkflowEnvironment.createLocal().
//      The SDK does not return the path it downloaded to, but the path is fixed by sdk-core
//      (ephemeral_server/mod.rs: `<downloadDir>/temporal-sdk-typescript-<sdk version>`), so we point its
//      `downloadDir` at our cache, let it download (it starts and stops a throwaway server to do so) and use the file.
// There is no other download path.
//
// As a command, `tsx testing/temporal-cli.ts` prints the path on stdout (progress goes to stderr).
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export const TEMPORAL_CLI_VERSION = 'v1.5.1';
export const TEMPORAL_CLI_GO_PACKAGE = 'github.com/temporalio/cli/cmd/temporal';
/** The CLI's go.mod says `go 1.25.0`. */
export const MIN_GO_VERSION: readonly [number, number] = [1, 25];

type Log = (line: string) => void;

export function cacheRoot(): string {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'claude-temporal-orchestrator');
}

/** Where the Go build puts the CLI: .../temporal-cli/v1.5.1/temporal */
export function cachedCliPath(): string {
  return path.join(cacheRoot(), 'temporal-cli', TEMPORAL_CLI_VERSION, exeName('temporal'));
}

/** Where @temporalio/testing's download ends up when it is the source of the CLI. */
export function sdkDownloadDir(): string {
  return path.join(cacheRoot(), 'temporal-cli', 'sdk-download');
}

function exeName(name: string): string {
  return process.platform === 'win32' ? `${name}.exe` : name;
}

async function isExecutableFile(file: string): Promise<boolean> {
  try {
    const stat = await fsp.stat(file);
    if (!stat.isFile()) return false;
    await fsp.access(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `which`: the first executable `name` on $PATH. */
export async function findOnPath(name: string): Promise<string | undefined> {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, exeName(name));
    if (await isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

function run(file: string, args: string[], timeoutMs = 30_000): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: timeoutMs, maxBuffer: 4 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(Object.assign(error, { stdout, stderr }));
      else resolve({ stdout, stderr });
    });
  });
}

/**
 * Runs `<file> --version` and returns its first line when it looks like the Temporal CLI
 * (`temporal version 1.5.1 (Server 1.29.1, UI 2.x)`), else undefined.
 */
export async function temporalCliVersion(file: string): Promise<string | undefined> {
  try {
    const { stdout } = await run(file, ['--version'], 20_000);
    const line = stdout.trim().split('\n')[0] ?? '';
    return /^temporal version /.test(line) ? line : undefined;
  } catch {
    return undefined;
  }
}

export async function ensureTemporalCli(log: Log = () => {}): Promise<string> {
  // 1. An explicit path wins, and a wrong one is an error rather than something to silently skip.
  const explicit = process.env.TEMPORAL_CLI_PATH;
  if (explicit) {
    const file = path.resolve(explicit);
    if (!fs.existsSync(file)) throw new Error(`TEMPORAL_CLI_PATH=${explicit}: no such file.`);
    if (!(await isExecutableFile(file))) throw new Error(`TEMPORAL_CLI_PATH=${explicit}: not an executable file.`);
    if (!(await temporalCliVersion(file))) {
      throw new Error(`TEMPORAL_CLI_PATH=${explicit}: \`${file} --version\` did not answer like the Temporal CLI.`);
    }
    return file;
  }

  // 2. The user's own CLI.
  const onPath = await findOnPath('temporal');
  if (onPath) {
    if (await temporalCliVersion(onPath)) return onPath;
    log(`Ignoring ${onPath}: \`temporal --version\` did not answer like the Temporal CLI.`);
  }

  // 3. Our cache (a Go build from an earlier run).
  const cached = cachedCliPath();
  if (await isUsableCli(cached)) return cached;

  // 4. Build it with Go.
  const go = await findOnPath('go');
  let whyNotGo = 'Go is not on PATH';
  if (go) {
    const goVersion = await readGoVersion(go);
    if (goVersion && !atLeast(goVersion.numbers, MIN_GO_VERSION)) {
      whyNotGo =
        `Go ${goVersion.text} is too old: Temporal CLI ${TEMPORAL_CLI_VERSION} needs Go >= ` +
        `${MIN_GO_VERSION.join('.')} (install a newer Go, or set TEMPORAL_CLI_PATH to a Temporal CLI binary)`;
      log(`${whyNotGo}.`);
    } else {
      return await buildWithGo(go, goVersion?.text ?? 'unknown version', log);
    }
  }

  // 5. No (usable) Go: the dev-server download that @temporalio/testing does for TestWorkflowEnvironment.
  const downloaded = hasTestingSdk() ? sdkDownloadPath() : undefined;
  if (downloaded && (await isUsableCli(downloaded))) return downloaded;
  log(`${whyNotGo}; falling back to the Temporal CLI download done by @temporalio/testing.`);
  try {
    return await downloadWithTestingSdk(log);
  } catch (error) {
    throw new Error(
      `Could not get a Temporal CLI. ${whyNotGo}, and the @temporalio/testing download failed: ` +
        `${errorMessage(error)}\nFix one of: put \`temporal\` on PATH, set TEMPORAL_CLI_PATH, or install Go >= ` +
        `${MIN_GO_VERSION.join('.')} so it can be built with \`go install ${TEMPORAL_CLI_GO_PACKAGE}@${TEMPORAL_CLI_VERSION}\`.`,
    );
  }
}

async function isUsableCli(file: string): Promise<boolean> {
  return (await isExecutableFile(file)) && (await temporalCliVersion(file)) !== undefined;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// ---------------------------------------------------------------------------------------------------------------
// Go build

interface GoVersion {
  text: string;
  numbers: [number, number];
}

async function readGoVersion(go: string): Promise<GoVersion | undefined> {
  try {
    const { stdout } = await run(go, ['env', 'GOVERSION']);
    const text = stdout.trim(); // "go1.26.8", or "devel go1.27-abcdef ..." for a source build
    const match = /go(\d+)\.(\d+)/.exec(text);
    if (!match) return undefined;
    return { text: text.replace(/^go/, ''), numbers: [Number(match[1]), Number(match[2])] };
  } catch {
    return undefined;
  }
}

function atLeast(have: readonly [number, number], want: readonly [number, number]): boolean {
  return have[0] > want[0] || (have[0] === want[0] && have[1] >= want[1]);
}

function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

interface LockInfo {
  pid: number;
  host: string;
  startedAt: string;
}

/** Takes the build lock, or returns the current holder when someone else has it. */
async function tryLock(lockFile: string): Promise<{ acquired: true } | { acquired: false; holder?: LockInfo }> {
  const mine: LockInfo = { pid: process.pid, host: os.hostname(), startedAt: new Date().toISOString() };
  try {
    await fsp.writeFile(lockFile, JSON.stringify(mine), { flag: 'wx' });
    return { acquired: true };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  let holder: LockInfo | undefined;
  try {
    holder = JSON.parse(await fsp.readFile(lockFile, 'utf8')) as LockInfo;
  } catch {
    // Being written right now, or garbage: judge by age below.
  }
  const stale = holder
    ? holder.host === os.hostname() && !pidAlive(holder.pid)
    : Date.now() - (await fsp.stat(lockFile).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs > 60_000;
  if (stale) {
    await fsp.rm(lockFile, { force: true });
    return await tryLock(lockFile);
  }
  return { acquired: false, holder };
}

async function buildWithGo(go: string, goVersion: string, log: Log): Promise<string> {
  const target = cachedCliPath();
  const versionDir = path.dirname(target);
  const cliDir = path.dirname(versionDir);
  await fsp.mkdir(cliDir, { recursive: true });
  const lockFile = path.join(cliDir, `${TEMPORAL_CLI_VERSION}.build.lock`);

  const waitStarted = Date.now();
  let lastWaitLog = 0;
  for (;;) {
    if (await isUsableCli(target)) return target;
    const lock = await tryLock(lockFile);
    if (lock.acquired) break;
    if (Date.now() - lastWaitLog > 30_000) {
      lastWaitLog = Date.now();
      const who = lock.holder ? `pid ${lock.holder.pid} on ${lock.holder.host}` : 'another process';
      log(
        `Waiting for ${who} to finish building the Temporal CLI (lock ${lockFile}; ` +
          `waited ${formatDuration(Date.now() - waitStarted)}).`,
      );
    }
    if (Date.now() - waitStarted > 60 * 60_000) {
      throw new Error(`Gave up after an hour waiting for the Temporal CLI build lock ${lockFile}; delete it if stale.`);
    }
    await sleep(2000);
  }

  try {
    // Someone may have finished between our check and taking the lock.
    if (await isUsableCli(target)) return target;
    await removeAbandonedBuildDirs(cliDir);
    const tmpBin = path.join(cliDir, `.build-${process.pid}-${Date.now()}`);
    await fsp.mkdir(tmpBin, { recursive: true });
    try {
      await runGoInstall(go, goVersion, tmpBin, log);
      const built = path.join(tmpBin, exeName('temporal'));
      const version = await temporalCliVersion(built);
      if (!version) throw new Error(`go install finished but ${built} does not answer \`--version\`.`);
      await fsp.mkdir(versionDir, { recursive: true });
      await fsp.rename(built, target); // same filesystem: atomic
      log(`Temporal CLI ready: ${target} (${version}).`);
      return target;
    } finally {
      await fsp.rm(tmpBin, { recursive: true, force: true });
    }
  } finally {
    await fsp.rm(lockFile, { force: true });
  }
}

/** Temp GOBINs left by builds that were killed (their pid is gone). */
async function removeAbandonedBuildDirs(cliDir: string): Promise<void> {
  for (const entry of await fsp.readdir(cliDir)) {
    const match = /^\.build-(\d+)-\d+$/.exec(entry);
    if (match && !pidAlive(Number(match[1]))) await fsp.rm(path.join(cliDir, entry), { recursive: true, force: true });
  }
}

async function runGoInstall(go: string, goVersion: string, gobin: string, log: Log): Promise<void> {
  const pkg = `${TEMPORAL_CLI_GO_PACKAGE}@${TEMPORAL_CLI_VERSION}`;
  // The same flags as the official release build (.goreleaser.yml): static binary, stripped, real version string.
  const ldflags = `-s -w -X github.com/temporalio/cli/temporalcli.Version=${TEMPORAL_CLI_VERSION.replace(/^v/, '')}`;
  const args = ['install', `-ldflags=${ldflags}`, pkg];
  log(`Building Temporal CLI ${TEMPORAL_CLI_VERSION} with Go ${goVersion}: go ${args.join(' ')}`);
  log(
    `This takes several minutes the first time (it compiles the whole Temporal server); ` +
      `later runs reuse ${cachedCliPath()}.`,
  );
  const started = Date.now();
  const child = spawn(go, args, {
    env: { ...process.env, GOBIN: gobin, CGO_ENABLED: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const tail: string[] = [];
  let downloads = 0;
  let partial = '';
  const onData = (chunk: Buffer): void => {
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.trim()) continue;
      tail.push(line);
      if (tail.length > 60) tail.shift();
      if (line.startsWith('go: downloading ')) downloads++;
      else log(`  go: ${line}`);
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const heartbeat = setInterval(() => {
    log(
      `  ... still building the Temporal CLI (${formatDuration(Date.now() - started)} so far` +
        (downloads ? `, ${downloads} modules downloaded` : '') +
        ')',
    );
  }, 30_000);
  try {
    const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
      (resolve, reject) => {
        child.once('error', reject);
        child.once('close', (c, s) => resolve({ code: c, signal: s }));
      },
    );
    if (partial.trim()) tail.push(partial);
    if (code !== 0) {
      throw new Error(
        `\`go ${args.join(' ')}\` failed (${signal ? `signal ${signal}` : `exit code ${code}`}) after ` +
          `${formatDuration(Date.now() - started)}. Last output:\n${tail.join('\n')}`,
      );
    }
  } finally {
    clearInterval(heartbeat);
  }
  log(`Built the Temporal CLI in ${formatDuration(Date.now() - started)}.`);
}

// ---------------------------------------------------------------------------------------------------------------
// @temporalio/testing download (no Go)

/** @temporalio/testing is an optional peer dependency of the package (a devDependency here). */
function hasTestingSdk(): boolean {
  try {
    require.resolve('@temporalio/testing/package.json');
    return true;
  } catch {
    return false;
  }
}

function testingSdkVersion(): string {
  const pkgJson = require.resolve('@temporalio/testing/package.json');
  return (JSON.parse(fs.readFileSync(pkgJson, 'utf8')) as { version: string }).version;
}

/** The file sdk-core's cached download writes for the default ("best for this SDK") CLI version. */
export function sdkDownloadPath(dir = sdkDownloadDir()): string {
  return path.join(dir, exeName(`temporal-sdk-typescript-${testingSdkVersion()}`));
}

export async function downloadWithTestingSdk(log: Log = () => {}, dir = sdkDownloadDir()): Promise<string> {
  const expected = sdkDownloadPath(dir);
  if (await isUsableCli(expected)) return expected;
  await fsp.mkdir(dir, { recursive: true });
  log(`Downloading the Temporal CLI with @temporalio/testing into ${dir} ...`);
  const { TestWorkflowEnvironment } = await import('@temporalio/testing');
  // There is no download-only API: createLocal downloads (or reuses) the CLI, then starts a server with it.
  const env = await TestWorkflowEnvironment.createLocal({
    server: { executable: { type: 'cached-download', downloadDir: dir, ttl: '3650d' }, ui: false },
  });
  await env.teardown();
  if (await isUsableCli(expected)) return expected;
  // Should sdk-core ever change its naming, take whatever CLI it left in our (otherwise empty) folder.
  for (const entry of await fsp.readdir(dir)) {
    const candidate = path.join(dir, entry);
    if (entry.startsWith('temporal') && !entry.endsWith('.downloading') && (await isUsableCli(candidate))) {
      return candidate;
    }
  }
  throw new Error(`@temporalio/testing started a server but left no usable CLI in ${dir}.`);
}

if (require.main === module) {
  ensureTemporalCli((line) => process.stderr.write(`${line}\n`)).then(
    (file) => process.stdout.write(`${file}\n`),
    (error: unknown) => {
      process.stderr.write(`${errorMessage(error)}\n`);
      process.exitCode = 1;
    },
  );
}
