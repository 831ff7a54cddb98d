// Builds one workflow bundle variant in a process of its own, for shared-workflow-bundle.ts: webpack holds its
// process's main thread for seconds (30 s and more on a loaded machine), and in a test process that stalls the workers
// of every file beside it, whose workflow tasks then time out.
import { writeBundle } from './shared-workflow-bundle';

const [variant, file] = process.argv.slice(2);
if (!variant || !file) {
  console.error('usage: build-workflow-bundle <variant as JSON> <file>');
  process.exit(2);
}
writeBundle(JSON.parse(variant), file).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
