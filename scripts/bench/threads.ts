// `npm run bench:threads`: what message threads (the option `threads`, docs/threads.md) save on a long chain — the
// JSON bytes of each request the local Messages API received over a chain of N tool calls (100 by default) with the
// bench's realistic system prompt, threads off and on, alternated over rounds; plus the history bytes per model call
// (threads add a little to each call's input and result) and the chain's wall time. Prints a table; writes
// results/threads-<time>.json. Not part of `npm test`.
//
//   npm run bench:threads -- --steps 100 --rounds 2
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs as parseNodeArgs } from 'node:util';
import { ConversationClient } from '../../client/conversation-client';
import { runMain } from '../script-main';
import { parseArgs } from './args';
import { echoChain, echoTool } from './chain-script';
import { inProcessWorker, openBench } from './context';
import { runsOf } from './history';
import { REALISTIC_SYSTEM_PROMPT } from './system-prompt';
import { textTable } from './table';

const ROOT = path.resolve(__dirname, '..', '..');

interface ChainRun {
  threads: boolean;
  requests: number;
  /** JSON bytes of each request body, in order. */
  bytes: number[];
  totalBytes: number;
  historyBytes: number;
  wallMs: number;
}

async function main(): Promise<number> {
  const { values } = parseNodeArgs({
    args: process.argv.slice(2),
    options: { steps: { type: 'string', default: '100' }, rounds: { type: 'string', default: '2' } },
  });
  const steps = Number(values.steps);
  const rounds = Number(values.rounds);
  const log = (line: string): void => void process.stderr.write(`[bench:threads] ${line}\n`);
  const { ctx, close } = await openBench(parseArgs([])!, { log });
  const worker = await inProcessWorker(ctx, { tools: [echoTool] });
  const conversations = new ConversationClient({ client: ctx.client, taskQueue: worker.taskQueue, tools: ['echo'] });
  const runs: ChainRun[] = [];
  try {
    for (let round = 0; round < rounds; round++) {
      for (const threads of round % 2 === 0 ? [false, true] : [true, false]) {
        ctx.mock.reset();
        const started = performance.now();
        const start = { tools: ['echo'], system: REALISTIC_SYSTEM_PROMPT, ...(threads && { threads }) };
        const label = `threads-${threads ? 'on' : 'off'}`;
        const id = await echoChain(ctx.mock, conversations, label, 'echo', steps, start);
        const wallMs = performance.now() - started;
        // The server was reset before the chain: every Messages request since is one of its calls.
        const requests = ctx.mock.requests.filter((r) => r.path === '/v1/messages');
        const bytes = requests.map((r) => Buffer.byteLength(JSON.stringify(r.body), 'utf8'));
        const history = await runsOf(ctx.client, id);
        runs.push({
          threads,
          requests: requests.length,
          bytes,
          totalBytes: bytes.reduce((a, b) => a + b, 0),
          historyBytes: history.reduce((sum, run) => sum + run.historySize, 0),
          wallMs,
        });
        log(`${label}: ${requests.length} requests, ${wallMs.toFixed(0)} ms`);
      }
    }
  } finally {
    await worker.stop();
    await close();
  }

  const kb = (n: number) => (n / 1024).toFixed(1);
  const rows = runs.map((run) => [
    run.threads ? 'on' : 'off',
    String(run.requests),
    kb(run.bytes[0] ?? 0),
    kb(run.bytes[Math.floor(run.bytes.length / 2)] ?? 0),
    kb(run.bytes.at(-1) ?? 0),
    kb(run.totalBytes / run.requests),
    (run.totalBytes / 2 ** 20).toFixed(2),
    kb(run.historyBytes / run.requests),
    (run.wallMs / 1000).toFixed(1),
  ]);
  const header = [
    'threads',
    'requests',
    'first KB',
    'middle KB',
    'last KB',
    'mean KB/call',
    'total MB',
    'history KB/call',
    'wall s',
  ];
  process.stdout.write(`${textTable(header, rows)}\n`);
  const load = os.loadavg().map((l) => l.toFixed(2));
  process.stdout.write(
    `steps ${steps}, rounds ${rounds}; load average ${load.join(' ')} on ${os.cpus().length} cores\n`,
  );
  const outDir = path.join(ROOT, 'results');
  await fsp.mkdir(outDir, { recursive: true });
  const file = path.join(outDir, `threads-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  await fsp.writeFile(file, JSON.stringify({ steps, rounds, loadAverage: os.loadavg(), runs }, null, 2));
  process.stdout.write(`${path.relative(ROOT, file)}\n`);
  return 0;
}

runMain(main);
