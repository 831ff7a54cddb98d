// `npm run bench:threads`: what message threads (the option `threads`, docs/threads.md) save on a long chain — the
// JSON bytes of each request the local Messages API received over a chain of N tool calls (100 by default) with the
// bench's realistic system prompt, threads off and on, alternated over rounds; plus the history bytes per model call
// (threads add a little to each call's input and result) and the chain's wall time. Prints a table; writes
// results/threads-<time>.json. Not part of `npm test`.
import os from 'node:os';
import { runMain } from '../script-main';
import { Flags } from './args';
import { echoCalls, echoTool, requestsOf } from './chain-script';
import { progressLog, withBench, writeResults } from './context';
import { printTables } from './table';
import { runOne } from './load';
import { startOursInProcess } from './systems';
import { REALISTIC_SYSTEM_PROMPT } from './system-prompt';

const HELP = `npm run bench:threads -- [options]

  --steps N    tool calls in the chain (default 100)
  --rounds N   rounds, threads off and on alternated (default 2)`;

async function main(): Promise<number> {
  const flags = Flags.read(process.argv.slice(2), HELP);
  if (!flags) return 0;
  const steps = flags.int('steps', 100);
  const rounds = flags.int('rounds', 2);
  const started = new Date();
  const log = progressLog('bench:threads', started.getTime());
  const runs = await withBench({ log, bundles: 'none' }, async (ctx) => {
    const ours = await startOursInProcess(ctx, { tools: [echoTool] });
    const runs: { threads: boolean; bytes: number[]; historyBytes: number; wallMs: number }[] = [];
    try {
      for (let round = 0; round < rounds; round++) {
        for (const threads of round % 2 === 0 ? [false, true] : [true, false]) {
          ctx.mock.reset(); // an empty prompt cache for every chain
          ours.send = { tools: ['echo'], system: REALISTIC_SYSTEM_PROMPT, closeAfterFirstReply: true, threads };
          const label = `threads-${threads ? 'on' : 'off'}`;
          const { run, conversation } = await runOne(ctx, ours, { steps, label, script: echoCalls('echo', steps) });
          const requests = requestsOf(ctx.mock, conversation.prompt);
          const bytes = requests.map((r) => Buffer.byteLength(JSON.stringify(r.body), 'utf8'));
          runs.push({ threads, bytes, historyBytes: run.history?.serverBytes ?? Number.NaN, wallMs: run.wallMs });
          log(`${label}: ${bytes.length} requests, ${run.wallMs.toFixed(0)} ms`);
        }
      }
    } finally {
      await ours.stop();
    }
    return runs;
  });

  const kb = (n: number) => (n / 1024).toFixed(1);
  const total = (bytes: number[]) => bytes.reduce((a, b) => a + b, 0);
  const load = os.loadavg().map((l) => l.toFixed(2));
  printTables([
    {
      title: `Threads off and on — a chain of ${steps} echo calls with the realistic system prompt, ${rounds} round(s)`,
      headers: [
        'threads',
        'requests',
        'first KB',
        'middle KB',
        'last KB',
        'mean KB/call',
        'total MB',
        'history KB/call',
        'wall s',
      ],
      rows: runs.map((run) => [
        run.threads ? 'on' : 'off',
        String(run.bytes.length),
        ...[run.bytes[0], run.bytes[Math.floor(run.bytes.length / 2)], run.bytes.at(-1)].map((b) => kb(b ?? 0)),
        kb(total(run.bytes) / run.bytes.length),
        (total(run.bytes) / 2 ** 20).toFixed(2),
        kb(run.historyBytes / run.bytes.length),
        (run.wallMs / 1000).toFixed(1),
      ]),
      notes: [`steps ${steps}, rounds ${rounds}; load average ${load.join(' ')} on ${os.cpus().length} cores`],
    },
  ]);
  const perRun = runs.map((run) => ({ ...run, requests: run.bytes.length, totalBytes: total(run.bytes) }));
  const json = JSON.stringify({ steps, rounds, loadAverage: os.loadavg(), runs: perRun }, null, 2);
  process.stdout.write(`Wrote ${await writeResults('results', 'threads', started, { json })}.\n`);
  return 0;
}

runMain(main);
