// Item 6: what streaming replies cost and how fast they arrive. The local Messages API emits tokens slowly (a word
// every TOKEN_DELAY_MS after MODEL_LATENCY_MS) and records when it wrote each one; a subscribed client (the
// conversation's event stream) notes when each arrives.
//   - token → client latency, p50/p95, at 1 and at 50 concurrent streaming conversations;
//   - history bytes per model call, streaming on (with one reader per conversation) vs off (sendMessage);
//   - throughput (chain steps per second) at 100 concurrent conversations, streaming vs not.
import type { ConversationClient } from '../../client/conversation-client';
import { readerCalls } from '../../streaming/client/conversation-sources';
import { withDefaults } from '../../common/options';
import type { MessagesApi, ScriptStep } from '../../testing/messages-api/types';
import { CHAIN_TOOLS, requestsOf, scriptTagged } from './chain-script';
import type { BenchContext } from './context';
import { type LoadRun, type LoadSpec, type RunningSystem, runLoad } from './load';
import { mean, summarize, type Summary } from './measure';
import { startOurs } from './systems';
import { fmtMs, type Table } from './table';

const TOKEN_DELAY_MS = 25;
const MODEL_LATENCY_MS = 300;
const STEPS = 3;
const WORDS_PER_REPLY = 24;

interface StreamingLatency {
  conversations: number;
  tokens: number;
  latencyMs: Summary;
}

interface HistoryCost {
  conversations: number;
  modelCalls: number;
  bytesPerModelCall: number;
  eventsPerModelCall: number;
  signalsPerModelCall: number;
  updatesPerModelCall: number;
}

type StreamingThroughput = Pick<LoadRun, 'conversations' | 'stepsPerSecond' | 'wallMs' | 'failed' | 'cpuMsPerStep'>;

/** What the readers asked Temporal for, per model call, by kind and reason (streaming/client/conversation-sources.ts). */
interface ReaderCalls {
  modelCalls: number;
  describes: number;
  queries: number;
  byReason: Record<string, number>;
}

export interface StreamingResult {
  tokenDelayMs: number;
  modelLatencyMs: number;
  flushIntervalMs: number;
  steps: number;
  latency: StreamingLatency[];
  history: { streaming: HistoryCost; plain: HistoryCost; ratio: number };
  throughput: { streaming: StreamingThroughput; plain: StreamingThroughput; ratio: number };
  /** During the 100-conversation streaming runs. */
  readerCalls: ReaderCalls;
}

/** The readers' calls made while `run` ran, per model call. */
async function countingReaderCalls<T>(modelCalls: number, run: () => Promise<T>) {
  const before = new Map(readerCalls);
  const result = await run();
  const byReason: Record<string, number> = {};
  for (const [reason, count] of readerCalls)
    if (count > (before.get(reason) ?? 0)) byReason[reason] = (count - (before.get(reason) ?? 0)) / modelCalls;
  const sum = (kind: string) =>
    Object.entries(byReason).reduce((total, [reason, n]) => total + (reason.startsWith(kind) ? n : 0), 0);
  return { result, calls: { modelCalls, describes: sum('describe:'), queries: sum('query:'), byReason } };
}

/** The conversations' default (common/options.ts). */
const FLUSH_INTERVAL_MS = withDefaults().streaming.intervalMs;

/** A chain of STEPS tool calls and a final answer, each reply WORDS_PER_REPLY words of text, unique to `label`. */
const STREAMING_CHAIN: ScriptStep[] = Array.from({ length: STEPS + 1 }, (_, step) => {
  const text = Array.from({ length: WORDS_PER_REPLY }, (_, i) => `w${step}x${i}`).join(' ');
  if (step === STEPS) return { reply: { content: [{ type: 'text', text: `${text}.` }], stop_reason: 'end_turn' } };
  const call = { type: 'tool_use' as const, name: 'get_weather', input: { location: 'Paris' } };
  return { reply: { content: [{ type: 'text', text: `${text} ` }, call], stop_reason: 'tool_use' } };
});
const streamingChain = (mock: MessagesApi, label: string): string =>
  scriptTagged(mock, label, STREAMING_CHAIN, 'Check the weather a few times.');

/** Per model call, when each character count of its text had arrived. */
type Arrivals = Map<number, { chars: number; at: number }[]>;

/** Streams one turn and returns, per model call, when each character count of its text had arrived. */
async function streamOne(conversations: ConversationClient, id: string, prompt: string): Promise<Arrivals> {
  const arrivals: Arrivals = new Map();
  const length = new Map<number, number>();
  for await (const { event } of conversations.streamMessage(id, prompt, { start: { tools: CHAIN_TOOLS } })) {
    if (event.type !== 'text') continue;
    const at = Date.now();
    const chars = (length.get(event.call) ?? 0) + event.text.length;
    length.set(event.call, chars);
    arrivals.set(event.call, [...(arrivals.get(event.call) ?? []), { chars, at }]);
  }
  return arrivals;
}

/** Per token the server wrote: the time from writing it to the reader having it. */
function tokenLatencies(mock: MessagesApi, prompt: string, arrivals: Arrivals) {
  const latencies: number[] = [];
  requestsOf(mock, prompt).forEach((request, index) => {
    const received = arrivals.get(index + 1) ?? [];
    let chars = 0;
    for (const token of request.emitted ?? []) {
      chars += token.text.length;
      const arrival = received.find((r) => r.chars >= chars);
      if (arrival) latencies.push(arrival.at - token.at);
    }
  });
  return latencies;
}

export async function runStreaming(ctx: BenchContext): Promise<StreamingResult> {
  ctx.mock.reset();
  const ours = await startOurs(ctx, 'streaming');
  // Ours with one reader per conversation (streamMessage: the live reply is on by default), and without streaming.
  const streamed: RunningSystem = {
    ...ours,
    launch: ({ id, prompt }) => ({
      run: () => streamOne(ours.conversations, id, prompt),
      again: () => ours.conversations.awaitTurn(id, 1),
    }),
  };
  const load = (system: RunningSystem, conversations: number, label: string, onReply?: LoadSpec['onReply']) =>
    runLoad(ctx, system, {
      conversations,
      steps: STEPS,
      label,
      latencyMs: MODEL_LATENCY_MS,
      tokenDelayMs: TOKEN_DELAY_MS,
      script: streamingChain,
      ...(onReply && { onReply }),
    });
  const modelCalls = STEPS + 1;
  const historyCost = (run: LoadRun): HistoryCost => ({
    conversations: run.conversations,
    modelCalls: run.conversations * modelCalls,
    bytesPerModelCall: (run.history?.serverBytes ?? Number.NaN) / modelCalls,
    eventsPerModelCall: (run.history?.events ?? Number.NaN) / modelCalls,
    signalsPerModelCall: (run.history?.eventTypes.workflowExecutionSignaled ?? 0) / modelCalls,
    updatesPerModelCall: (run.history?.eventTypes.workflowExecutionUpdateAccepted ?? 0) / modelCalls,
  });
  /** A system's runs as one: steps per second, wall time and CPU per step are means; failures add up. */
  const pooled = (runs: LoadRun[]): StreamingThroughput => {
    const meanOf = (value: (run: LoadRun) => number) => mean(runs.map(value));
    return {
      conversations: runs[0]!.conversations,
      stepsPerSecond: meanOf((run) => run.stepsPerSecond),
      wallMs: meanOf((run) => run.wallMs),
      failed: runs.reduce((sum, run) => sum + run.failed, 0),
      cpuMsPerStep: {
        worker: meanOf((run) => run.cpuMsPerStep.worker),
        server: meanOf((run) => run.cpuMsPerStep.server),
        bench: meanOf((run) => run.cpuMsPerStep.bench),
      },
    };
  };
  try {
    ours.send = { streaming: { enabled: false } };
    const latency: StreamingLatency[] = [];
    for (const count of [1, 50]) {
      ctx.log(`streaming: token → client latency, ${count} concurrent conversation(s)`);
      const latencies: number[] = [];
      await load(streamed, count, `latency-${count}`, ({ prompt }, arrivals) =>
        latencies.push(...tokenLatencies(ctx.mock, prompt, arrivals as Arrivals)),
      );
      latency.push({ conversations: count, tokens: latencies.length, latencyMs: summarize(latencies) });
    }
    ctx.log('streaming: history bytes per model call, streaming on vs off (10 conversations each)');
    const streaming = historyCost(await load(streamed, 10, 'history-on'));
    const plain = historyCost(await load(ours, 10, 'history-off'));
    // Off, on, on, off: of two runs in a row, the second measured 5-10% slower (on ÷ off 0.72-0.79 with off first,
    // 0.83-0.87 with on first), so each side gets an early and a late run.
    ctx.log('streaming: throughput, 100 concurrent conversations, streaming off, on, on, off');
    const firstOff = await load(ours, 100, 'throughput-off-1');
    const counted = await countingReaderCalls(200 * modelCalls, async () => [
      await load(streamed, 100, 'throughput-on-1'),
      await load(streamed, 100, 'throughput-on-2'),
    ]);
    const plainThroughput = pooled([firstOff, await load(ours, 100, 'throughput-off-2')]);
    const streamingThroughput = pooled(counted.result);
    return {
      tokenDelayMs: TOKEN_DELAY_MS,
      modelLatencyMs: MODEL_LATENCY_MS,
      flushIntervalMs: FLUSH_INTERVAL_MS,
      steps: STEPS,
      latency,
      history: { streaming, plain, ratio: streaming.bytesPerModelCall / plain.bytesPerModelCall },
      throughput: {
        streaming: streamingThroughput,
        plain: plainThroughput,
        ratio: streamingThroughput.stepsPerSecond / plainThroughput.stepsPerSecond,
      },
      readerCalls: counted.calls,
    };
  } finally {
    await ours.stop();
  }
}

export function streamingTables(streaming: StreamingResult): Table[] {
  const { history: h, throughput: t } = streaming;
  const cpu = (x: StreamingThroughput): string =>
    `worker ${x.cpuMsPerStep.worker.toFixed(1)}, server ${x.cpuMsPerStep.server.toFixed(1)}, bench ${x.cpuMsPerStep.bench.toFixed(1)}`;
  const perCall = (x: HistoryCost): string =>
    `${Math.round(x.bytesPerModelCall)} B, ${x.eventsPerModelCall.toFixed(1)} events (${x.signalsPerModelCall.toFixed(1)} signals, ${x.updatesPerModelCall.toFixed(1)} updates)`;
  const steps = (x: StreamingThroughput): string =>
    `${x.stepsPerSecond.toFixed(1)} steps/s (${x.conversations} in ${fmtMs(x.wallMs)}${x.failed ? `, ${x.failed} failed` : ''})`;
  return [
    {
      title: `6. Streaming replies — tokens every ${streaming.tokenDelayMs} ms after ${streaming.modelLatencyMs} ms, live reply heartbeated at most every ${streaming.flushIntervalMs} ms, ${streaming.steps}-step chains`,
      headers: ['measure', 'streaming on', 'streaming off', 'on ÷ off'],
      rows: [
        ...streaming.latency.map((l) => [
          `token → client, ${l.conversations} conversation(s)`,
          `p50 ${fmtMs(l.latencyMs.p50)}, p95 ${fmtMs(l.latencyMs.p95)}, max ${fmtMs(l.latencyMs.max)} (${l.tokens} tokens)`,
          '',
          '',
        ]),
        ['history per model call', perCall(h.streaming), perCall(h.plain), `${h.ratio.toFixed(2)}×`],
        [
          `throughput, ${t.plain.conversations} conversations (mean of 2 runs: off, on, on, off)`,
          steps(t.streaming),
          steps(t.plain),
          `${t.ratio.toFixed(2)}×`,
        ],
        ['CPU ms per chain step', cpu(t.streaming), cpu(t.plain), ''],
        [
          `readers' Temporal calls per model call, ${t.streaming.conversations} conversations`,
          readerCallsText(streaming.readerCalls),
          '',
          '',
        ],
      ],
      notes: [
        'CPU: the worker, the Temporal server (when the bench started it), this process (readers and the Messages API).',
      ],
    },
  ];
}

function readerCallsText(calls: ReaderCalls): string {
  const reasons = Object.entries(calls.byReason)
    .sort(([, a], [, b]) => b - a)
    .map(([reason, n]) => `${reason} ${n.toFixed(2)}`)
    .join(', ');
  return `${calls.describes.toFixed(2)} describes, ${calls.queries.toFixed(2)} queries (${reasons})`;
}
