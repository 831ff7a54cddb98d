// Runs the project's CLI (client/cli.ts) as a person would, against the test run's dev server and a harness's task
// queue: its exit code and what it printed, never a throw.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { temporalAddress } from './harness';

const run = promisify(execFile);
export const CLI = join(__dirname, '..', '..', 'client', 'cli.ts');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCli(taskQueue: string, args: string[]): Promise<CliRun> {
  return run(process.execPath, ['--import', 'tsx', CLI, ...args], {
    env: { ...process.env, TEMPORAL_ADDRESS: temporalAddress, TEMPORAL_TASK_QUEUE: taskQueue },
  }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (err: { code: number; stdout: string; stderr: string }) => ({
      code: err.code,
      stdout: err.stdout,
      stderr: err.stderr,
    }),
  );
}
