// `@modelcontextprotocol/server-everything` over Streamable HTTP, as its own process on a free port: what the MCP
// tests and the bench call over HTTP. `restart()` brings it back on the same port (a new process, no old sessions).
import { type ChildProcess, spawn } from 'node:child_process';
import { freePort } from '../testing/free-port';

const ENTRY = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const READY = /MCP Streamable HTTP Server listening on port/;

export interface EverythingHttpServer {
  /** `http://127.0.0.1:<port>/mcp` */
  url: string;
  readonly pid: number;
  /** SIGKILL, and wait until the process is gone. */
  kill(): Promise<void>;
  /** A new process on the same port. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function startEverythingHttpServer(): Promise<EverythingHttpServer> {
  const port = await freePort();
  let child = await spawnServer(port);
  const kill = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    get pid() {
      return child.pid!;
    },
    kill,
    async restart() {
      await kill();
      child = await spawnServer(port);
    },
    close: kill,
  };
}

async function spawnServer(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [ENTRY, 'streamableHttp'], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  process.once('exit', () => child.kill('SIGKILL'));
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`server-everything did not listen within 20 s:\n${output}`)),
      20_000,
    );
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (READY.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`server-everything exited (${signal ?? code}) before it listened:\n${output}`));
    });
  });
  return child;
}
