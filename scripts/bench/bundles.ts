// Both workflow bundles, built once per bench run with bundleWorkflowCode, so each worker process starts in a second
// or two (WORKFLOW_BUNDLE_PATH) instead of bundling on its own: the conversation workflow and the bare chain (the
// peer's worker bundles its own, with its own SDK, into the same folder).
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { conversationBundleOptions } from '../../workers/workflow-bundles';

export interface Bundles {
  dir: string;
  conversation: string;
  bare: string;
}

async function bundle(options: { workflowsPath: string }, file: string): Promise<string> {
  const { code } = await bundleWorkflowCode({ ...options, logger: new DefaultLogger('WARN') });
  await fsp.writeFile(file, code);
  return file;
}

/** `conversation`: a bundle of the conversation workflow built already (the test runner's), used as it is. */
export async function buildBundles(needBare: boolean, conversationBundle?: string): Promise<Bundles> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'cto-bench-'));
  const [conversation, bare] = await Promise.all([
    conversationBundle ?? bundle(conversationBundleOptions(), path.join(dir, 'conversation-bundle.js')),
    needBare
      ? bundle({ workflowsPath: require.resolve('./bare-workflow.ts') }, path.join(dir, 'bare-bundle.js'))
      : Promise.resolve(''),
  ]);
  return { dir, conversation, bare };
}
