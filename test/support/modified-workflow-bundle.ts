// A second build for tests of mixed fleets (a rolling deploy, a rollback, replay-check): a copy of this checkout's
// source with a few edits applied, its workflow code bundled like the default bundle (workers/workflow-bundles.ts),
// and its worker (scripts/rig-worker.ts of the copy: workflow code and activities of that build) for
// startWorkerProcess. The copy is real source, so the edit is a real difference between two builds, not a renamed
// copy. Bundled in a child process: webpack holds its process's thread for seconds, which would stall the workers of
// the test files beside it.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** One edit of the copy: `from` must occur in `file` (a path from the repository's root), and is replaced by `to`. */
export interface SourceEdit {
  file: string;
  from: string;
  to: string;
}

const ROOT = path.join(__dirname, '..', '..');
/** What the workflow code and its converters import: everything else of the checkout stays out of the copy. */
const SOURCE_DIRS = [
  'common',
  'workflows',
  'streaming',
  'workers',
  'codec',
  'tracing',
  'activities',
  'client',
  'testing',
  'scripts',
];

/** Another build: its source root, its workflow bundle, and its worker's entry file (scripts/rig-worker.ts). */
export interface ModifiedBuild {
  root: string;
  workflowBundlePath: string;
  workerEntry: string;
}

/** Copies the source, applies `edits`, and returns the copy's root (node_modules linked to this checkout's). */
export function modifiedSourceCopy(edits: readonly SourceEdit[]): string {
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'workflow-build-'));
  for (const dir of SOURCE_DIRS) {
    // scripts/bench/peer holds an npm install of its own: not source.
    const filter = (from: string) => !from.includes(`${path.sep}node_modules`) && !from.endsWith(`${path.sep}peer`);
    fs.cpSync(path.join(ROOT, dir), path.join(copy, dir), { recursive: true, filter });
  }
  for (const file of ['package.json', 'tsconfig.json']) fs.copyFileSync(path.join(ROOT, file), path.join(copy, file));
  fs.symlinkSync(fs.realpathSync(path.join(ROOT, 'node_modules')), path.join(copy, 'node_modules'), 'dir');
  for (const edit of edits) {
    const target = path.join(copy, edit.file);
    const text = fs.readFileSync(target, 'utf8');
    if (!text.includes(edit.from)) throw new Error(`${edit.file} does not contain ${JSON.stringify(edit.from)}`);
    fs.writeFileSync(target, text.replace(edit.from, edit.to));
  }
  return copy;
}

/** A source copy with `edits`, its conversation workflow bundled (the default variant). */
export function modifiedBuild(edits: readonly SourceEdit[]): Promise<ModifiedBuild> {
  const copy = modifiedSourceCopy(edits);
  const file = path.join(copy, 'workflow-bundle.js');
  const script = path.join(copy, 'workers', 'bundle-copy.ts');
  fs.writeFileSync(
    script,
    [
      "import fs from 'node:fs';",
      "import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';",
      "import { conversationBundleOptions } from './workflow-bundles';",
      'bundleWorkflowCode({ ...conversationBundleOptions(), logger: new DefaultLogger("WARN") })',
      `  .then(({ code }) => fs.writeFileSync(${JSON.stringify(file)}, code))`,
      '  .catch((error: unknown) => { console.error(error); process.exit(1); });',
    ].join('\n'),
  );
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--require', require.resolve('tsx/cjs'), script], (error, _stdout, stderr) => {
      if (error) reject(new Error(`building a modified workflow bundle failed: ${stderr || error.message}`));
      else resolve({ root: copy, workflowBundlePath: file, workerEntry: path.join(copy, 'scripts', 'rig-worker.ts') });
    });
  });
}

/** Removes a build's copy (its source, bundle and node_modules link), once its workers have stopped. */
export async function removeBuild(build: Promise<ModifiedBuild> | undefined): Promise<void> {
  const built = await build?.catch(() => undefined);
  if (built) fs.rmSync(built.root, { recursive: true, force: true });
}
