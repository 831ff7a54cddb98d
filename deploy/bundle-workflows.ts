// Pre-bundles the workflow code at image build time (Dockerfile), so a worker starts in a second instead of running
// webpack on every start: `node --import tsx deploy/bundle-workflows.ts dist/workflow-bundle.js`, then run the worker
// with WORKFLOW_BUNDLE_PATH pointing at the file.
//
// The bundle includes codec/failure-converter.ts (failure messages and stack traces moved into an encoded payload),
// which is what the worker uses when PAYLOAD_ENCRYPTION_KEYS is set. Without keys it is harmless: the encoded
// attributes are plain JSON then, and SDK clients and the Web UI read them the same way.
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { FAILURE_CONVERTER_PATH } from '../codec/data-converter';

async function main(): Promise<void> {
  const out = path.resolve(process.argv[2] ?? 'dist/workflow-bundle.js');
  const started = Date.now();
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../workflows'),
    failureConverterPath: FAILURE_CONVERTER_PATH,
    logger: new DefaultLogger('WARN'),
  });
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, code);
  console.log(`Bundled the workflows in ${Date.now() - started} ms: ${out} (${Math.round(code.length / 1024)} KiB)`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
