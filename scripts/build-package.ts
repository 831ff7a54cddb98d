// `npm run build` (and `prepack`): the package as users install it, in dist/ —
//   1. tsc -p tsconfig.build.json: the product's JavaScript and .d.ts (common, workflows, streaming, activities, workers,
//      client, codec, testing, tracing, gateway, with the gateway's chat page), from a clean dist/ so no file of a
//      deleted source is ever packed;
//   2. the workflow code bundled from that JavaScript, with the worker's payload converter, into dist/workflow-bundles/:
//      a worker then starts without webpack. The package ships the `default` bundle only (each is ~5.7 MB, most of it
//      its source map); `--all-bundles` adds the encrypted-failures and traced variants (workers/workflow-bundles.ts),
//      as the Dockerfile does. A worker that needs a variant the package lacks bundles the workflow code at start.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import type * as WorkflowBundles from '../workers/workflow-bundles';
import { runMain } from './script-main';

const ROOT = path.resolve(__dirname, '..');
const DIST = path.join(ROOT, 'dist');

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { 'all-bundles': { type: 'boolean', default: false } } });
  const started = Date.now();
  fs.rmSync(DIST, { recursive: true, force: true });
  await promisify(execFile)(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: ROOT,
  }).catch((error: { stdout?: string; message: string }) => {
    throw new Error(`tsc failed:\n${error.stdout || error.message}`);
  });
  // The gateway's chat page is served from beside its compiled code (static-pages.ts: PUBLIC_DIR).
  fs.cpSync(path.join(ROOT, 'gateway', 'public'), path.join(DIST, 'gateway', 'public'), { recursive: true });
  console.log(`Compiled to ${path.relative(ROOT, DIST)}/ in ${Date.now() - started} ms`);

  // Loaded from dist/, so the bundles are made of the JavaScript that ships, in the folder the worker looks in.
  const bundles = (await import(path.join(DIST, 'workers', 'workflow-bundles.js'))) as typeof WorkflowBundles;
  fs.mkdirSync(bundles.PREBUILT_BUNDLES_DIR, { recursive: true });
  const variants = Object.entries(bundles.PREBUILT_BUNDLES).filter(
    ([name]) => values['all-bundles'] || name === 'default',
  );
  for (const [name, variant] of variants) {
    const bundleStarted = Date.now();
    const { code } = await bundleWorkflowCode({
      ...bundles.conversationBundleOptions(variant),
      logger: new DefaultLogger('WARN'),
    });
    const file = path.join(bundles.PREBUILT_BUNDLES_DIR, variant.file);
    fs.writeFileSync(file, code);
    console.log(
      `Bundled the workflows (${name}) in ${Date.now() - bundleStarted} ms: ${path.relative(ROOT, file)} ` +
        `(${Math.round(code.length / 1024)} KiB)`,
    );
  }
  return 0;
}

if (require.main === module) runMain(main);
