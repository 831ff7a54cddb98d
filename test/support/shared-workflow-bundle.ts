// Workflow bundles built once per test run and shared by every test process. A webpack bundle of the conversation
// workflow costs 6–15 s of CPU; the files that need a variant other than the run's default (encrypted failures,
// tracing interceptors) used to build it each for itself. scripts/run-tests.ts names a folder in
// WORKFLOW_BUNDLES_DIR; the first process that needs a variant builds it there (holding `<file>.lock`), the others
// wait for the file. Without that folder (a file run with `node --test` directly) a variant is built once per process.
// The first builds in a child process (build-workflow-bundle.ts), so that no test process's workers stall meanwhile.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { type BundleVariant, conversationBundleOptions } from '../../workers/workflow-bundles';

const inProcess = new Map<string, Promise<string>>();
let processDir: string | undefined;

/** The conversation workflow bundled as `variant` (workers/workflow-bundles.ts), as a file path. */
export function sharedWorkflowBundle(variant: BundleVariant, dir = process.env.WORKFLOW_BUNDLES_DIR): Promise<string> {
  const target = dir || (processDir ??= fs.mkdtempSync(path.join(os.tmpdir(), 'workflow-bundles-')));
  const file = path.join(target, variant.file);
  let bundle = inProcess.get(file);
  if (!bundle) {
    bundle = dir ? buildOnceAcrossProcesses(variant, file) : writeBundle(variant, file);
    inProcess.set(file, bundle);
  }
  return bundle;
}

/** Bundles `variant` into `file`, written whole or not at all (a reader never sees half a file). */
export async function writeBundle(variant: BundleVariant, file: string): Promise<string> {
  const { code } = await bundleWorkflowCode({
    ...conversationBundleOptions(variant),
    logger: new DefaultLogger('WARN'),
  });
  const partial = `${file}.${process.pid}.partial`;
  await fs.promises.writeFile(partial, code);
  await fs.promises.rename(partial, file);
  return file;
}

/** How long a process waits for another one's bundle before giving up. */
const WAIT_MS = 10 * 60_000;

async function buildOnceAcrossProcesses(variant: BundleVariant, file: string): Promise<string> {
  const lock = `${file}.lock`;
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    if (fs.existsSync(file)) return file;
    try {
      fs.writeFileSync(lock, String(process.pid), { flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // Another process builds it. If that process died half-way, its lock is stale: take it over.
      const holder = Number(fs.readFileSync(lock, 'utf8').trim());
      if (holder && !isAlive(holder)) fs.rmSync(lock, { force: true });
      else if (Date.now() > deadline) throw new Error(`${file}: not built by process ${holder} within ${WAIT_MS} ms`);
      else await new Promise((resolve) => setTimeout(resolve, 200));
      continue;
    }
    try {
      return await buildInChildProcess(variant, file);
    } finally {
      fs.rmSync(lock, { force: true });
    }
  }
}

function buildInChildProcess(variant: BundleVariant, file: string): Promise<string> {
  const args = ['--require', require.resolve('tsx/cjs'), require.resolve('./build-workflow-bundle')];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [...args, JSON.stringify(variant), file], (error, _stdout, stderr) => {
      if (error) reject(new Error(`building the workflow bundle ${variant.file} failed: ${stderr || error.message}`));
      else resolve(file);
    });
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
