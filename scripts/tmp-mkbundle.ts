import fs from 'node:fs';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { conversationBundleOptions } from '../workers/workflow-bundles';
(async () => {
  const { code } = await bundleWorkflowCode({ ...conversationBundleOptions(), logger: new DefaultLogger('WARN') });
  fs.writeFileSync(process.argv[2]!, code);
})();
