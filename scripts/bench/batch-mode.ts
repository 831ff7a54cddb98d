// `npm run bench:batch`: what batch mode (the option `batch`, docs/batches.md) costs and saves on the stock chain
// (3 model calls, 2 tools) — N conversations started together, batch mode off and on: Message Batch submissions per
// step, requests per submission, history bytes and events per model call (the server's own historySize), cost and
// wall time. Against the local Messages API with a batch delay (default 2 s). Prints a table; writes
// results/batch-mode-<time>.json. Not part of `npm test`.
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import { runMain } from '../script-main';
import { Flags } from './args';
import { progressLog, withBench, writeResults } from './context';
import { printTables } from './table';
import { startOursInProcess } from './systems';
import { runsOf } from './history';
import { demoTools } from '../../testing/demo-tools';
import { STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import { CHAIN_TOOLS, scriptChain } from './chain-script';

const HELP = `npm run bench:batch -- [options]

  --conversations N   conversations started together (default 50)
  --delay-ms N        the local API's batch delay (default 2000)
  --window-ms N       the worker's batch window (default 2000)
  --steps N           instead of the stock chain, N lookups then an answer (N + 1 model calls; the chain of npm
                      run bench, scripts/bench/chain-script.ts)`;

const QUESTION = 'What is the current stock price of General Motors?';
/** Model calls of the stock chain: ticker, price, answer. */
const STOCK_CHAIN_CALLS = 3;

interface ModeRun {
  batch: boolean;
  conversations: number;
  submissions: number;
  requestsPerSubmission: number[];
  historyBytesPerCall: number;
  eventsPerCall: number;
  costUsd: number;
  wallMs: number;
}

async function main(): Promise<number> {
  const flags = Flags.read(process.argv.slice(2), HELP);
  if (!flags) return 0;
  const n = flags.int('conversations', 50);
  const delayMs = flags.int('delay-ms', 2_000);
  const windowMs = flags.int('window-ms', 2_000);
  const chainSteps = flags.int('steps', 0);
  const callsPerConversation = chainSteps > 0 ? chainSteps + 1 : STOCK_CHAIN_CALLS;
  const started = new Date();
  const log = progressLog('bench:batch', started.getTime());
  const runs = await withBench({ log, bundles: 'none' }, async (ctx) => {
    ctx.mock.setBatchDelay(delayMs);
    const ours = await startOursInProcess(ctx, {
      tools: demoTools,
      batchWindowMs: windowMs,
      tuning: { maxConcurrentActivityTaskExecutions: 2000 },
    });
    const runs: ModeRun[] = [];
    try {
      for (const batch of [false, true]) {
        ctx.mock.reset();
        ctx.mock.setBatchDelay(delayMs);
        const label = batch ? 'batch' : 'interactive';
        const ids = Array.from({ length: n }, (_, i) => `bench-${label}-${i}-${randomUUID().slice(0, 8)}`);
        const t0 = performance.now();
        const replies = await Promise.all(
          ids.map((id) =>
            ours.conversations.sendMessage(
              id,
              chainSteps > 0 ? scriptChain(ctx.mock, chainSteps) : `${QUESTION} [${id}]`,
              {
                start: {
                  tools: chainSteps > 0 ? CHAIN_TOOLS : STOCK_TOOLS,
                  closeAfterFirstReply: true,
                  promptCaching: false,
                  batch,
                },
                timeoutMs: 600_000,
              },
            ),
          ),
        );
        const wallMs = performance.now() - t0;
        const submissions = ctx.mock.requests.filter((r) => r.method === 'POST' && r.path === '/v1/messages/batches');
        let bytes = 0;
        let events = 0;
        for (const id of ids) {
          for (const run of await runsOf(ctx.client, id)) {
            bytes += run.historySize;
            events += run.historyLength;
          }
        }
        const calls = replies.reduce((sum, r) => sum + r.modelCalls, 0);
        runs.push({
          batch,
          conversations: n,
          submissions: submissions.length,
          requestsPerSubmission: submissions.map((r) => (r.body.requests as unknown[]).length),
          historyBytesPerCall: bytes / calls,
          eventsPerCall: events / calls,
          costUsd: replies.reduce((sum, r) => sum + (r.costUsd ?? 0), 0),
          wallMs,
        });
        log(`${label}: ${n} conversations in ${wallMs.toFixed(0)} ms, ${submissions.length} submissions`);
      }
    } finally {
      await ours.stop();
    }
    return runs;
  });

  const load = os.loadavg().map((l) => l.toFixed(2));
  printTables([
    {
      title: `Batch mode off and on — ${n} conversations × ${chainSteps > 0 ? `a chain of ${chainSteps} lookups` : 'the stock chain'} (${callsPerConversation} model calls), batch delay ${delayMs} ms, window ${windowMs} ms`,
      headers: [
        'mode',
        'submissions',
        'per step',
        'requests/submission',
        'history B/call',
        'events/call',
        'cost USD',
        'wall s',
      ],
      rows: runs.map((r) => [
        r.batch ? 'batch' : 'interactive',
        String(r.submissions),
        (r.submissions / callsPerConversation).toFixed(2),
        r.requestsPerSubmission.length > 0 ? r.requestsPerSubmission.join(' ') : '-',
        r.historyBytesPerCall.toFixed(0),
        r.eventsPerCall.toFixed(1),
        r.costUsd.toFixed(4),
        (r.wallMs / 1000).toFixed(1),
      ]),
    },
  ]);
  console.log(`load average ${load.join(' ')}`);
  const written = await writeResults('results', 'batch-mode', started, {
    json: JSON.stringify({ conversations: n, delayMs, windowMs, callsPerConversation, runs }, null, 2),
  });
  console.log(`results: ${written}`);
  return 0;
}

runMain(main);
