// `npm run bench:relay-memory`: what a worker's live relay holds for readers that never read. A worker process (the
// rigs' worker, its relay on loopback) streams a 3 MB reply in each of 4 conversations; 64 readers per call (the most a
// call takes) open its relay address and then read nothing, 256 in all. Prints the worker's RSS before the replies,
// its peak while they stream, and while the readers stay connected afterwards (5 s, and past the relay's stall time);
// writes results/relay-memory-<time>.json. Not part of `npm test`.
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConversationClient } from '../../client/conversation-client';
import { modelHeartbeatOf } from '../../test/support/model-heartbeat';
import { runMain } from '../script-main';
import { Flags } from './args';
import { type BenchContext, progressLog, startBenchWorker, withBench, writeResults } from './context';
import { ProcessSampler, quiesce } from './measure';
import { fmtBytes, printTables } from './table';

const HELP = `npm run bench:relay-memory -- [options]

  --conversations N   conversations streaming at once (default 4)
  --readers N         stalled readers per conversation (default 64, the most one call takes)
  --reply-mb N        the reply's size in MB (default 3)
  --hold S            seconds the readers stay connected after the replies (default 20)`;

async function main(): Promise<number> {
  const flags = Flags.read(process.argv.slice(2), HELP);
  if (!flags) return 0;
  const conversations = flags.int('conversations', 4);
  const readersPer = flags.int('readers', 64, { zero: true, max: 64 });
  const replyBytes = flags.int('reply-mb', 3) * 1_000_000;
  const holdMs = flags.int('hold', 20) * 1000;
  const started = new Date();
  const log = progressLog('bench:relay-memory', started.getTime());
  const result = await withBench({ log }, (ctx) => measure(ctx, { conversations, readersPer, replyBytes, holdMs }));
  printTables([
    {
      title: `Worker RSS with ${conversations * readersPer} readers that never read a ${replyBytes / 1e6} MB reply`,
      headers: ['before the replies', 'peak while they stream', '5 s after', `${holdMs / 1000} s after`, 'readers'],
      rows: [
        [
          fmtBytes(result.beforeBytes),
          fmtBytes(result.peakBytes),
          fmtBytes(result.after5sBytes),
          fmtBytes(result.afterHoldBytes),
          `${result.subscribed}/${conversations * readersPer}`,
        ],
      ],
      notes: ['readers: how many the relay took (200) before the reply streamed'],
    },
  ]);
  const written = await writeResults('results', 'relay-memory', started, { json: JSON.stringify(result, null, 1) });
  process.stdout.write(`\nWrote ${written}.\n`);
  return 0;
}

async function measure(
  ctx: BenchContext,
  options: { conversations: number; readersPer: number; replyBytes: number; holdMs: number },
) {
  const taskQueue = `relay-memory-${randomUUID().slice(0, 8)}`;
  const worker = await startBenchWorker(ctx, 'scripts/rig-worker.ts', taskQueue, {
    ANTHROPIC_BASE_URL: ctx.mock.url,
    WORKFLOW_BUNDLE_PATH: ctx.bundles.conversation,
    TOOL_LATENCY_MS: '0',
  });
  const sockets: net.Socket[] = [];
  try {
    const client = new ConversationClient({ client: ctx.client, taskQueue, tools: [] });
    await client.sendMessage(`relay-memory-warm-${randomUUID().slice(0, 8)}`, 'Say hello.', { start: {} });
    await quiesce(worker.pid);
    const sampler = new ProcessSampler(worker.pid);
    const beforeBytes = sampler.stop().peakRssBytes;
    const during = new ProcessSampler(worker.pid);
    // A reply of short words, as a model writes it; it comes after a 6 s wait, while the readers connect.
    const text = 'word '.repeat(options.replyBytes / 5);
    const ids = Array.from({ length: options.conversations }, () => `relay-memory-${randomUUID().slice(0, 8)}`);
    let subscribed = 0;
    await Promise.all(
      ids.map(async (id) => {
        const prompt = `Write it out (${id}).`;
        ctx.mock.script(prompt, [
          { reply: { content: [{ type: 'text', text }], stop_reason: 'end_turn' }, delayMs: 6_000 },
        ]);
        await client.submitMessage(id, prompt, { start: {} });
        const relay = await relayOf(ctx, id);
        const readers = await Promise.all(Array.from({ length: options.readersPer }, () => stalledReader(relay)));
        sockets.push(...readers.map((r) => r.socket));
        subscribed += readers.filter((r) => r.status === 200).length;
      }),
    );
    ctx.log(`${subscribed} readers took; waiting for the replies`);
    await Promise.all(ids.map((id) => client.awaitTurn(id, 1).catch(() => undefined)));
    const peakBytes = during.stop().peakRssBytes;
    await sleep(5_000);
    const after5sBytes = new ProcessSampler(worker.pid).stop().peakRssBytes;
    await sleep(Math.max(0, options.holdMs - 5_000));
    const afterHoldBytes = new ProcessSampler(worker.pid).stop().peakRssBytes;
    return { ...options, beforeBytes, peakBytes, after5sBytes, afterHoldBytes, subscribed };
  } finally {
    for (const socket of sockets) socket.destroy();
    await worker.stop(10_000);
  }
}

/** The relay address the conversation's running model call names in its heartbeat. */
async function relayOf(ctx: BenchContext, id: string): Promise<string> {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(100)) {
    const beat = await modelHeartbeatOf(ctx.client, id);
    if (beat?.relay) return beat.relay;
  }
  throw new Error(`${id}: no heartbeat named a relay within 60 s`);
}

/** A reader that asks for `url`, reads the response's head, and then nothing. */
async function stalledReader(url: string): Promise<{ socket: net.Socket; status: number }> {
  const { hostname, port, pathname } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  socket.on('error', () => undefined);
  socket.write(`GET ${pathname} HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`);
  const head = await new Promise<string>((resolve) => {
    let got = '';
    const onData = (chunk: Buffer): void => {
      got += chunk.toString('latin1');
      if (!got.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      socket.pause();
      resolve(got);
    };
    socket.on('data', onData);
    socket.once('close', () => resolve(got));
  });
  return { socket, status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0) };
}

runMain(main);
