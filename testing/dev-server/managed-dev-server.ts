// One `temporal server start-dev` process: spawned, watched until it answers (namespace described, search attributes
// registered), its last output kept for error messages, and stopped (SIGTERM, then SIGKILL), killed (as in a crash)
// or restarted on the same SQLite file and ports. startDevServer (start-dev-server.ts) builds its command line.
import { setTimeout as sleep } from 'node:timers/promises';
import { type ChildProcess, spawn } from 'node:child_process';
import fsp from 'node:fs/promises';
import { Connection } from '@temporalio/client';
import { registeredSearchAttributes } from '../../common/search-attributes';
import { isPortOpen } from '../free-port';
import { errorMessage } from './grpc-errors';
import { ensureSearchAttributes } from './search-attributes';
import type { DevServer, DevServerOptions, SearchAttributeKeyAny } from './types';

const OUTPUT_TAIL_LINES = 80;

export class ManagedDevServer implements DevServer {
  process?: ChildProcess;
  private exited?: Promise<void>;
  private readonly tail: string[] = [];
  /** The server's own word that a port was taken: a Go panic's stack can push it out of the tail. */
  private bindFailure: string | undefined;
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
    return this.options.searchAttributes ?? registeredSearchAttributes;
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
    this.bindFailure = undefined;
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
    if (!this.bindFailure && /bind: address already in use/i.test(line)) this.bindFailure = line.trim();
    this.tail.push(line);
    if (this.tail.length > OUTPUT_TAIL_LINES) this.tail.shift();
    this.options.serverOutput?.(line);
  }

  private failure(why: string): Error {
    const output = this.tail.length ? `\n--- last server output ---\n${this.tail.join('\n')}` : ' (no server output)';
    const bind = this.bindFailure && !this.tail.includes(this.bindFailure) ? `\n${this.bindFailure}` : '';
    return new Error(`Temporal dev server (${this.cliPath} ${this.args.join(' ')}) ${why}${bind}${output}`);
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
