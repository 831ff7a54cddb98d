// `npm run bench:worker-start [-- --runs 5]`: how long a worker of a service that installed the package takes from
// `node worker.js` to "Worker ready", with the workflow bundle shipped in the package and with the workflow code
// bundled from node_modules at start (the shipped bundles moved away). Uses the example service installed from the
// packed tarball (scripts/packed-example.ts) and a Temporal server (TEMPORAL_ADDRESS, else a dev server).
import fs from 'node:fs';
import path from 'node:path';
import { connectOrStartDevServer, type DevServer } from '../../testing/dev-server';
import { type PackedExample, packAndInstallExample, startExampleWorker } from '../packed-example';
import { cleanUpOnSignal, runMain } from '../script-main';
import { Flags } from './args';
import { progressLog } from './context';
import { summarize } from './measure';
import { printTables, fmtMs } from './table';

const HELP = `npm run bench:worker-start -- [options]

  --runs N   worker starts per way (default 5)`;

async function main(): Promise<number> {
  const flags = Flags.read(process.argv.slice(2), HELP);
  if (!flags) return 0;
  const runs = flags.int('runs', 5);
  const log = progressLog('bench:worker-start');

  let server: DevServer | undefined;
  let example: PackedExample | undefined;
  const cleanup = async (): Promise<void> => {
    example?.remove();
    await server?.stop();
  };
  cleanUpOnSignal(cleanup, log);
  try {
    server = await connectOrStartDevServer({ log });
    example = await packAndInstallExample(log);
    const env = {
      PATH: process.env.PATH,
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_NAMESPACE: server.namespace,
      TEMPORAL_TASK_QUEUE: 'worker-start-bench',
      // Never called: the worker only needs a model endpoint configured to start.
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
    };
    const bundles = path.join(example.installedPackage, 'dist', 'workflow-bundles');
    const measure = async (mode: string): Promise<number[]> => {
      const times: number[] = [];
      for (let i = 0; i < runs; i++) {
        const worker = await startExampleWorker(example!.app, env);
        times.push(worker.readyMs);
        await worker.stop();
        log(`${mode}: run ${i + 1}/${runs} ready in ${Math.round(worker.readyMs)} ms`);
      }
      return times;
    };
    const prebuilt = await measure('pre-built bundle');
    fs.renameSync(bundles, `${bundles}.hidden`);
    let atStart: number[];
    try {
      atStart = await measure('bundled at start');
    } finally {
      fs.renameSync(`${bundles}.hidden`, bundles);
    }

    const row = (name: string, times: number[]): string[] => {
      const s = summarize(times);
      return [name, ...[s.p50, s.min, s.max].map((ms) => fmtMs(Math.round(ms))), String(s.n)];
    };
    printTables([
      {
        title: 'Worker start, `node dist/src/worker.js` → "Worker ready"',
        headers: ['workflow code', 'p50', 'min', 'max', 'n'],
        rows: [row('pre-built bundle (shipped)', prebuilt), row('bundled at start', atStart)],
        notes: [
          `package: ${(fs.statSync(example.tarball).size / 1024 / 1024).toFixed(2)} MiB packed; npm pack (with the build) ` +
            `${example.packMs} ms; npm install of the example ${example.installMs} ms; its tsc ${example.compileMs} ms`,
        ],
      },
    ]);
    return 0;
  } finally {
    await cleanup();
  }
}

if (require.main === module) runMain(main);
