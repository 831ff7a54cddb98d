// `npm run bench:tracing`: what tracing costs per chain step. One worker in this process runs a conversation of N
// model → tool steps (the built-in `echo` tool, the local Messages API with no latency), first without tracing (the
// plain workflow bundle, no interceptors), then with it (the traced bundle, Temporal's interceptors, the GenAI spans,
// a batching processor into an in-memory exporter: all the SDK's work but the network). Rounds alternate off/on so a
// drift of the machine hits both. A step is one activity (a model call or a tool call); ms/step is the conversation's
// wall time over its activities. Prints medians over the rounds; `--json FILE` writes every sample.
//
//   npm run bench:tracing                       3 rounds of 50 tool calls (101 activities) each way
//   npm run bench:tracing -- --calls 100 --rounds 5
import fsp from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { BatchSpanProcessor, InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { Client } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, Runtime } from '@temporalio/worker';
import { ConversationClient } from '../../client/conversation-client';
import { startTracing } from '../../tracing/tracing-sdk';
import { OTEL_WORKFLOW_INTERCEPTORS, WORKFLOWS_PATH } from '../../workers/workflow-bundles';
import { runMain, UsageError } from '../script-main';
import { parseArgs as benchArgs } from './args';
import { echoChain, echoTool } from './chain-script';
import { inProcessWorker, openBench } from './context';
import { summarize } from './measure';

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      calls: { type: 'string', default: '50' },
      rounds: { type: 'string', default: '3' },
      json: { type: 'string' },
    },
  });
  const calls = Number(values.calls);
  const rounds = Number(values.rounds);
  if (!Number.isInteger(calls) || calls < 1 || calls > 1000) throw new UsageError('--calls: a whole number, 1 to 1000');
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20) throw new UsageError('--rounds: 1 to 20');
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const log = (line: string) => void process.stderr.write(`[bench:tracing] ${line}\n`);
  const { ctx, close } = await openBench(benchArgs([])!, { log, bundles: 'none' });
  const samples: Record<'off' | 'on', number[]> = { off: [], on: [] };
  let spans = 0;
  try {
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
        const worker = await inProcessWorker(ctx, {
          tools: [echoTool],
          workflowBundlePath: bundles[mode],
          ...(tracing && { tracing }),
        });
        const client = new Client({
          connection: ctx.client.connection,
          namespace: ctx.server.namespace,
          ...(tracing && { interceptors: tracing.clientInterceptors() }),
        });
        const conversations = new ConversationClient({ client, taskQueue: worker.taskQueue, tools: ['echo'] });
        const started = performance.now();
        await echoChain(ctx.mock, conversations, `bench-tracing-${mode}`, 'echo', calls, { tools: ['echo'] });
        const perStep = (performance.now() - started) / (2 * calls + 1);
        samples[mode].push(perStep);
        await worker.stop();
        if (tracing) {
          await tracing.flush();
          spans = exporter.getFinishedSpans().length; // before shutdown, which empties the exporter
          await tracing.shutdown();
        }
        log(`round ${round + 1}, tracing ${mode}: ${perStep.toFixed(2)} ms/step`);
      }
    }
  } finally {
    await close();
  }

  const off = summarize(samples.off).p50;
  const on = summarize(samples.on).p50;
  const fmt = (values: number[]) => values.map((value) => value.toFixed(2)).join(', ');
  console.log(
    `\nTracing overhead, ${calls} model → tool steps (${2 * calls + 1} activities) per conversation, ${rounds} rounds` +
      ` — ${process.platform} ${process.arch}, node ${process.version}`,
  );
  console.log(`tracing off: ${off.toFixed(2)} ms/step (median; rounds ${fmt(samples.off)})`);
  console.log(
    `tracing on:  ${on.toFixed(2)} ms/step (median; rounds ${fmt(samples.on)}), ${spans} spans per conversation`,
  );
  console.log(`overhead:    ${(on - off).toFixed(2)} ms/step (${(((on - off) / off) * 100).toFixed(1)} %)`);
  if (values.json) await fsp.writeFile(values.json, JSON.stringify({ calls, rounds, samples, spans }, null, 2));
  return 0;
}

runMain(main);
