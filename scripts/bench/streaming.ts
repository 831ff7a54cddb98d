// Item 6: what streaming replies cost and how fast they arrive. The local Messages API emits tokens slowly (a word
// every TOKEN_DELAY_MS after MODEL_LATENCY_MS) and records when it wrote each one; a subscribed client (the
// conversation's event stream) notes when each arrives.
//   - token → client latency, p50/p95, at 1 and at 50 concurrent streaming conversations;
//   - history bytes per model call, streaming on (with one reader per conversation) vs off (sendMessage);
//   - throughput (chain steps per second) at 100 concurrent conversations, streaming vs not.
import { randomUUID } from 'node:crypto';
import type { ConversationClient } from '../../client/conversation-client';
import { withDefaults } from '../../common/options';
import type { MessagesApi, ScriptStep } from '../../testing/messages-api/types';
import { CHAIN_TOOLS, requestsOf } from './chain-script';
import { type BenchContext, startConversationWorker, terminateAll } from './context';
import { cpuTimeMs } from './process-sampler';
import { summarize, type Summary } from './stats';

const TOKEN_DELAY_MS = 25;
const MODEL_LATENCY_MS = 300;
const STEPS = 3;
const WORDS_PER_REPLY = 24;

export interface StreamingLatency {
  conversations: number;
  tokens: number;
  latencyMs: Summary;
}

export interface HistoryCost {
  conversations: number;
  modelCalls: number;
  bytesPerModelCall: number;
  eventsPerModelCall: number;
  signalsPerModelCall: number;
  updatesPerModelCall: number;
}

export interface StreamingThroughput {
  conversations: number;
  stepsPerSecond: number;
  wallMs: number;
  failed: number;
  /** CPU time per chain step: the worker, the Temporal server (when the bench started it), this process. */
  cpuMsPerStep: { worker: number; server: number; bench: number };
}

export interface StreamingResult {
  tokenDelayMs: number;
  modelLatencyMs: number;
  flushIntervalMs: number;
  steps: number;
  latency: StreamingLatency[];
  history: { streaming: HistoryCost; plain: HistoryCost; ratio: number };
  throughput: { streaming: StreamingThroughput; plain: StreamingThroughput; ratio: number };
}

/** The conversations' default (common/options.ts). */
const FLUSH_INTERVAL_MS = withDefaults().streaming.intervalMs;

/** A chain of `steps` tool calls and a final answer, each reply WORDS_PER_REPLY words of text, unique to `tag`. */
function streamingChain(mock: MessagesApi, tag: string): string {
  const words = (step: number) =>
    Array.from({ length: WORDS_PER_REPLY }, (_, i) => `w${step}x${i}`).join(' ') + (step < STEPS ? ' ' : '.');
  const steps: ScriptStep[] = [];
  for (let i = 0; i < STEPS; i++) {
    steps.push({
      reply: {
        content: [
          { type: 'text', text: words(i) },
          { type: 'tool_use', name: 'get_weather', input: { location: 'Paris' } },
        ],
        stop_reason: 'tool_use',
      },
    });
  }
  steps.push({ reply: { content: [{ type: 'text', text: words(STEPS) }], stop_reason: 'end_turn' } });
  const key = `[${tag}-${randomUUID()}]`;
  mock.script(key, steps);
  return `${key} Check the weather a few times.`;
}

/** Streams one turn and returns, per model call, when each character count of its text had arrived. */
async function streamOne(
  conversations: ConversationClient,
  id: string,
  prompt: string,
): Promise<Map<number, { chars: number; at: number }[]>> {
  const arrivals = new Map<number, { chars: number; at: number }[]>();
  const length = new Map<number, number>();
  for await (const { event } of conversations.streamMessage(id, prompt, { tools: CHAIN_TOOLS })) {
    if (event.type !== 'text') continue;
    const at = Date.now();
    const chars = (length.get(event.call) ?? 0) + event.text.length;
    length.set(event.call, chars);
    let list = arrivals.get(event.call);
    if (!list) arrivals.set(event.call, (list = []));
    list.push({ chars, at });
  }
  return arrivals;
}

/** Per token the server wrote: the time from writing it to the reader having it. */
function tokenLatencies(mock: MessagesApi, prompt: string, arrivals: Map<number, { chars: number; at: number }[]>) {
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

async function historyCost(ctx: BenchContext, ids: string[], modelCallsEach: number): Promise<HistoryCost> {
  let bytes = 0;
  let events = 0;
  let signals = 0;
  let updates = 0;
  for (const id of ids) {
    const handle = ctx.client.workflow.getHandle(id);
    const [description, history] = await Promise.all([handle.describe(), handle.fetchHistory()]);
    bytes += description.historySize ?? Number.NaN;
    events += description.historyLength;
    for (const event of history.events ?? []) {
      if (event.workflowExecutionSignaledEventAttributes) signals++;
      if (event.workflowExecutionUpdateAcceptedEventAttributes) updates++;
    }
  }
  const modelCalls = ids.length * modelCallsEach;
  return {
    conversations: ids.length,
    modelCalls,
    bytesPerModelCall: bytes / modelCalls,
    eventsPerModelCall: events / modelCalls,
    signalsPerModelCall: signals / modelCalls,
    updatesPerModelCall: updates / modelCalls,
  };
}

export async function runStreaming(ctx: BenchContext): Promise<StreamingResult> {
  const { mock } = ctx;
  mock.reset();
  const running = await startConversationWorker(ctx, 'streaming');
  const conversations = running.conversations;
  const ids: string[] = [];
  const newId = (label: string) => {
    const id = `bench-streaming-${label}-${randomUUID().slice(0, 8)}`;
    ids.push(id);
    return id;
  };
  const modelCallsEach = STEPS + 1;
  try {
    // Warm-up, not measured.
    await conversations.sendMessage(newId('warm-up'), streamingChain(mock, 'warm-up'), { tools: CHAIN_TOOLS });
    mock.setLatency(MODEL_LATENCY_MS);
    mock.setTokenDelay(TOKEN_DELAY_MS);

    const latency: StreamingLatency[] = [];
    for (const count of [1, 50]) {
      ctx.log(`streaming: token → client latency, ${count} concurrent conversation(s)`);
      const runs = Array.from({ length: count }, (_, i) => ({ id: newId(`latency-${count}-${i}`), prompt: '' }));
      for (const run of runs) run.prompt = streamingChain(mock, `latency-${count}`);
      const arrivals = await Promise.all(runs.map((run) => streamOne(conversations, run.id, run.prompt)));
      const latencies = runs.flatMap((run, i) => tokenLatencies(mock, run.prompt, arrivals[i]!));
      latency.push({ conversations: count, tokens: latencies.length, latencyMs: summarize(latencies) });
    }

    ctx.log('streaming: history bytes per model call, streaming on vs off (10 conversations each)');
    const streamedIds: string[] = [];
    const plainIds: string[] = [];
    await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const id = newId(`history-on-${i}`);
        streamedIds.push(id);
        for await (const item of conversations.streamMessage(id, streamingChain(mock, 'history-on'), {
          tools: CHAIN_TOOLS,
        }))
          void item;
      }),
    );
    await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const id = newId(`history-off-${i}`);
        plainIds.push(id);
        await conversations.sendMessage(id, streamingChain(mock, 'history-off'), {
          tools: CHAIN_TOOLS,
          streaming: { enabled: false },
        });
      }),
    );
    const streaming = await historyCost(ctx, streamedIds, modelCallsEach);
    const plain = await historyCost(ctx, plainIds, modelCallsEach);

    const throughputRun = async (stream: boolean): Promise<StreamingThroughput> => {
      const count = 100;
      ctx.log(`streaming: throughput, ${count} concurrent conversations, streaming ${stream ? 'on' : 'off'}`);
      const t0 = performance.now();
      const serverPid = ctx.server.process?.pid;
      const cpu0 = {
        worker: cpuTimeMs(running.worker.pid) ?? Number.NaN,
        server: serverPid ? (cpuTimeMs(serverPid) ?? Number.NaN) : Number.NaN,
        bench: process.cpuUsage(),
      };
      let failed = 0;
      await Promise.all(
        Array.from({ length: count }, async (_, i) => {
          const id = newId(`throughput-${stream ? 'on' : 'off'}-${i}`);
          const prompt = streamingChain(mock, `throughput-${stream}`);
          try {
            if (stream) {
              for await (const item of conversations.streamMessage(id, prompt, { tools: CHAIN_TOOLS })) void item;
            } else {
              await conversations.sendMessage(id, prompt, { tools: CHAIN_TOOLS, streaming: { enabled: false } });
            }
          } catch {
            failed++;
          }
        }),
      );
      const wallMs = performance.now() - t0;
      const steps = (count - failed) * STEPS;
      const bench = process.cpuUsage(cpu0.bench);
      return {
        conversations: count,
        wallMs,
        failed,
        stepsPerSecond: steps / (wallMs / 1000),
        cpuMsPerStep: {
          worker: ((cpuTimeMs(running.worker.pid) ?? Number.NaN) - cpu0.worker) / steps,
          server: ((serverPid ? cpuTimeMs(serverPid) : undefined) ?? Number.NaN) / steps - cpu0.server / steps,
          bench: (bench.user + bench.system) / 1000 / steps,
        },
      };
    };
    const plainThroughput = await throughputRun(false);
    const streamingThroughput = await throughputRun(true);
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
    };
  } finally {
    mock.setLatency(0);
    mock.setTokenDelay(0);
    await terminateAll(ctx.client, ids);
    await running.worker.stop(10_000);
  }
}
