// `npm run bench:worker-start [-- --runs 5]`: how long a worker of a service that installed the package takes from
// `node worker.js` to "Worker ready", with the workflow bundle shipped in the package and with the workflow code
// bundled from node_modules at start (the shipped bundles moved away). Uses the example service installed from the
// packed tarball (scripts/packed-example.ts) and a Temporal server (TEMPORAL_ADDRESS, else a dev server).
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { connectOrStartDevServer, type DevServer } from '../../testing/dev-server';
import { type PackedExample, packAndInstallExample, startExampleWorker } from '../packed-example';
import { cleanUpOnSignal, runMain, UsageError } from '../script-main';
import { summarize } from './measure';

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1) throw new UsageError('--runs must be a positive integer');
  const log = (line: string): void => void process.stderr.write(`[worker-start] ${line}\n`);

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

    const tarball = fs.statSync(example.tarball).size;
    const row = (name: string, times: number[]): string => {
      const s = summarize(times);
      return `${name.padEnd(34)} p50 ${Math.round(s.p50)} ms   min ${Math.round(s.min)} ms   max ${Math.round(s.max)} ms   (n=${s.n})`;
    };
    process.stdout.write(
      [
        `package: ${(tarball / 1024 / 1024).toFixed(2)} MiB packed; npm pack (with the build) ${example.packMs} ms; ` +
          `npm install of the example ${example.installMs} ms; its tsc ${example.compileMs} ms`,
        'worker start, `node dist/src/worker.js` → "Worker ready":',
        row('  pre-built bundle (shipped)', prebuilt),
        row('  workflow code bundled at start', atStart),
      ].join('\n') + '\n',
    );
    return 0;
  } finally {
    await cleanup();
  }
}

if (require.main === module) runMain(main);
