// HTTP requests sent exactly as written, for the hostile-input tests of the project's HTTP servers (the gateway, the
// codec server): fetch would normalise the path, refuse odd headers and always read the whole body first.
import { type ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

export interface RawRequest {
  headers?: Record<string, string | string[]>;
  /** Sent with its Content-Length, unless `chunks` stream a body of unknown length instead. */
  body?: string | Buffer;
  /** Written one after another with `Transfer-Encoding: chunked`: a body whose length nobody declared. */
  chunks?: Buffer[];
  localAddress?: string;
}

/** One request to 127.0.0.1:`port`, sent as written; resolves with the answer, however the server ends it. */
export function sendRaw(port: number, method: string, target: string, request: RawRequest = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let answered = false;
    // A body always goes with its length: node sends GET, DELETE and OPTIONS bodies without one otherwise.
    const length = request.body === undefined ? {} : { 'Content-Length': String(Buffer.byteLength(request.body)) };
    const chunked = request.chunks ? { 'Transfer-Encoding': 'chunked' } : {};
    const headers = { ...length, ...chunked, ...request.headers };
    const options = { host: '127.0.0.1', port, method, path: target, headers, localAddress: request.localAddress };
    const req = http.request(options, (res) => {
      answered = true;
      const received: Buffer[] = [];
      res.on('data', (chunk: Buffer) => received.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(received).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      // A kept-alive connection the server closed as the request went out on it: the server never saw the request,
      // so it is sent again on a new one (node's documented answer to this race, `request.reusedSocket`).
      if (!answered && req.reusedSocket && error.code === 'ECONNRESET') {
        sendRaw(port, method, target, request).then(resolve, reject);
        return;
      }
      // A server that answers before it read the whole body may close while the body is still being written.
      if (!answered) reject(error);
    });
    for (const chunk of request.chunks ?? []) req.write(chunk);
    req.end(request.body);
  });
}

/** A server run as its own process from a TypeScript entry point, with the lines it has logged so far. */
export interface ServerProcess {
  child: ChildProcess;
  port: number;
  /** Every line it printed, stdout and stderr, in order. */
  log: string[];
  /** SIGTERM, and wait for it to exit. */
  stop(): Promise<void>;
}

/** Starts `script` (tsx) with `env` and resolves once a line matches `listening`, whose first group is the port. */
export async function startServerScript(
  script: string,
  env: NodeJS.ProcessEnv,
  listening: RegExp,
): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log: string[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    let partial = '';
    const onData = (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        log.push(line);
        const found = listening.exec(line);
        if (found) resolve(Number(found[1]));
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${script} exited (${code}):\n${log.join('\n')}`)));
  });
  return {
    child,
    port,
    log,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
