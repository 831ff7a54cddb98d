// `npm run bench:tracing`: what tracing costs per chain step. One worker in this process runs a conversation of N
// model → tool steps (the built-in `echo` tool, the local Messages API with no latency), first without tracing (the
// plain workflow bundle, no interceptors), then with it (the traced bundle, Temporal's interceptors, the GenAI spans,
// a batching processor into an in-memory exporter: all the SDK's work but the network). Rounds alternate off/on so a
// drift of the machine hits both. A step is one activity (a model call or a tool call); ms/step is the conversation's
// wall time over its activities. Prints medians over the rounds; `--json FILE` writes every sample (`-- --help`).
import fsp from 'node:fs/promises';
import path from 'node:path';
import { BatchSpanProcessor, InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { Client } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, Runtime } from '@temporalio/worker';
import { startTracing } from '../../tracing/tracing-sdk';
import { OTEL_WORKFLOW_INTERCEPTORS } from '../../tracing/workflow-interceptors';
import { WORKFLOWS_PATH } from '../../workers/workflow-bundles';
import { runMain } from '../script-main';
import { Flags } from './args';
import { echoCalls, echoTool } from './chain-script';
import { progressLog, withBench } from './context';
import { printTables } from './table';
import { runOne } from './load';
import { summarize } from './measure';
import { startOursInProcess } from './systems';

const HELP = `npm run bench:tracing -- [options]

  --calls N    tool calls per conversation, 1 to 1000 (default 50)
  --rounds N   rounds, tracing off and on each, 1 to 20 (default 3)
  --json FILE  write every sample there`;

async function main(): Promise<number> {
  const flags = Flags.read(process.argv.slice(2), HELP);
  if (!flags) return 0;
  const calls = flags.int('calls', 50, { max: 1000 });
  const rounds = flags.int('rounds', 3, { max: 20 });
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const log = progressLog('bench:tracing');
  const samples: Record<'off' | 'on', number[]> = { off: [], on: [] };
  let spans = 0;
  await withBench({ log, bundles: 'none' }, async (ctx) => {
    log('bundling the workflows, plain and traced…');
    const bundle = async (traced: boolean) => {
      const { code } = await bundleWorkflowCode({
        workflowsPath: WORKFLOWS_PATH,
        ...(traced && { workflowInterceptorModules: [OTEL_WORKFLOW_INTERCEPTORS] }),
        logger: new DefaultLogger('WARN'),
      });
      const file = path.join(ctx.bundles.dir, traced ? 'default-traced.js' : 'default.js');
      await fsp.writeFile(file, code);
      return file;
    };
    const bundles = { off: await bundle(false), on: await bundle(true) };
    for (let round = 0; round < rounds; round++) {
      for (const mode of ['off', 'on'] as const) {
        const exporter = new InMemorySpanExporter();
        const tracing =
          mode === 'on'
            ? startTracing({ serviceName: 'bench', spanProcessor: new BatchSpanProcessor(exporter) })
            : undefined;
        const ours = await startOursInProcess(
          ctx,
          { tools: [echoTool], workflowBundlePath: bundles[mode], ...(tracing && { tracing }) },
          new Client({
            connection: ctx.client.connection,
            namespace: ctx.server.namespace,
            ...(tracing && { interceptors: tracing.clientInterceptors() }),
          }),
        );
        ours.send = { tools: ['echo'], closeAfterFirstReply: true };
        const spec = {
          steps: calls,
          label: `bench-tracing-${mode}`,
          script: echoCalls('echo', calls),
          historySample: 0,
        };
        const { run } = await runOne(ctx, ours, spec).finally(() => ours.stop());
        const perStep = run.wallMs / (2 * calls + 1);
        samples[mode].push(perStep);
        if (tracing) {
          await tracing.flush();
          spans = exporter.getFinishedSpans().length; // before shutdown, which empties the exporter
          await tracing.shutdown();
        }
        log(`round ${round + 1}, tracing ${mode}: ${perStep.toFixed(2)} ms/step`);
      }
    }
  });

  const off = summarize(samples.off).p50;
  const on = summarize(samples.on).p50;
  const fmt = (values: number[]) => values.map((value) => value.toFixed(2)).join(', ');
  printTables([
    {
      title:
        `Tracing overhead, ${calls} model → tool steps (${2 * calls + 1} activities) per conversation, ${rounds} rounds` +
        ` — ${process.platform} ${process.arch}, node ${process.version}`,
      headers: ['tracing', 'ms/step (median)', 'rounds', 'spans per conversation'],
      rows: [
        ['off', off.toFixed(2), fmt(samples.off), ''],
        ['on', on.toFixed(2), fmt(samples.on), String(spans)],
        ['overhead', (on - off).toFixed(2), `${(((on - off) / off) * 100).toFixed(1)} %`, ''],
      ],
    },
  ]);
  const json = flags.string('json');
  if (json) await fsp.writeFile(json, JSON.stringify({ calls, rounds, samples, spans }, null, 2));
  return 0;
}

runMain(main);
