// Runs one of the project's scripts as a person would (`npm start`, `npm run demo:mcp`): a child process on the test
// run's dev server, without an API key; resolves with everything it printed once it exits 0.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

export async function runScript(script: string, ...args: string[]): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS,
      TEMPORAL_UI_URL: process.env.TEMPORAL_UI_URL,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  assert.equal(code, 0, output);
  return output;
}

/** Runs a command to its end with `input` on its stdin; its exit code and what it printed, never a throw. */
export async function runWithInput(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; input?: string; timeoutMs?: number },
): Promise<{ code: number | null; stdout: string; stderr: string; output: string }> {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdin.end(options.input ?? '');
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  clearTimeout(timer);
  return { code, stdout, stderr, output: `${stdout}\n${stderr}` };
}

/** A long-running command (a server): wait for a line of its output, stop it with SIGTERM, read what it printed. */
export function startWithOutput(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): { waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>; stop(): Promise<number | null>; output(): string } {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const closed = new Promise<number | null>((resolve) => child.once('close', resolve));
  return {
    async waitFor(pattern, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = pattern.exec(output);
        if (match) return match[1] ?? match[0];
        assert.ok(child.exitCode === null, `the command exited before printing ${pattern}:\n${output}`);
        assert.ok(Date.now() < deadline, `no ${pattern} within ${timeoutMs} ms:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return closed;
    },
    output: () => output,
  };
}
