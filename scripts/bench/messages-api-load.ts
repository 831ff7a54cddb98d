// Load check: N concurrent streamed conversations through the real SDK. The server runs on the main thread and the
// clients on a worker thread, so the server's own event-loop utilisation can be told apart from the client's.
//   tsx scripts/bench/messages-api-load.ts [streams=1000] [rounds=3]
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { startMessagesApi } from '../../testing/messages-api/server';

// Plain JavaScript, so the worker needs no TypeScript loader.
const CLIENT = `
const { parentPort } = require('node:worker_threads');
const Anthropic = require('@anthropic-ai/sdk').default;
parentPort.on('message', async ({ url, streams }) => {
  const client = new Anthropic({ apiKey: 'bench-key', baseURL: url, maxRetries: 0 });
  const started = performance.now();
  await Promise.all(Array.from({ length: streams }, (_, i) => client.messages.stream({
    model: 'claude-sonnet-4-6',
    max_tokens: 1024,
    messages: [{ role: 'user', content: '[bench ' + i + '] What is the current stock price of General Motors?' }],
  }).finalMessage()));
  parentPort.postMessage(performance.now() - started);
});
`;

async function main(): Promise<void> {
  const streams = Number(process.argv[2] ?? 1000);
  const rounds = Number(process.argv[3] ?? 3);
  const server = await startMessagesApi();
  const worker = new Worker(CLIENT, { eval: true });
  const run = (): Promise<number> =>
    new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.postMessage({ url: server.url, streams });
    });
  for (let round = 1; round <= rounds; round++) {
    server.reset();
    const before = performance.eventLoopUtilization();
    const wallMs = await run();
    const elu = performance.eventLoopUtilization(before);
    const answered = server.requests.filter((r) => r.status === 200).length;
    console.log(
      `round ${round}: ${streams} streams in ${wallMs.toFixed(0)} ms; server busy ${elu.active.toFixed(0)} ms ` +
        `(${(elu.utilization * 100).toFixed(0)}% of the time, ${((elu.active / streams) * 1000).toFixed(0)} µs per stream); ` +
        `answered ${answered}/${streams}`,
    );
  }
  await worker.terminate();
  await server.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
