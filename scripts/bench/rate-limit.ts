// `npm run bench:ratelimit`: the fleet's rate limiter (issue #35) against the local Messages API's per-minute limits
// (testing/messages-api/rate-limits.ts). N conversations × S tool steps (the chain of npm run bench,
// chain-script.ts; its first message can be padded) started together on
// W worker processes (scripts/rig-worker.ts) polling one task queue, twice: the worker's limiter off, then on
// (ANTHROPIC_RATE_LIMITER=off|on, read by the worker). Per mode: conversations answered and failed, model requests,
// 429s (from the statuses of the API's recorded requests), input tokens per minute the API accepted against the
// limit, wall time, p50/p95 conversation duration. Prints a table; writes results/rate-limit-<time>.json. Not part
// of `npm test` nor of `npm run bench`: the default size is ~24 minutes of a 40,000 ITPM limit per mode (the chain's
// requests average ~530 input tokens: its tools, the lookups so far), so it is run on its own, on a quiet machine.
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import { ConversationClient } from '../../client/conversation-client';
import { countInputTokens } from '../../testing/messages-api/prompt-cache';
import type { RateLimits } from '../../testing/messages-api/rate-limits';
import type { RecordedRequest } from '../../testing/messages-api/types';
import { rateLimiterId, rateLimitStateQuery } from '../../common/rate-limiter-messages';
import type { RateLimitTotals } from '../../common/rate-limits';
import type { WorkerProcess } from '../worker-process';
import { runMain } from '../script-main';
import { Flags } from './args';
import { CHAIN_TOOLS, chainSteps } from './chain-script';
import {
  type BenchContext,
  inLanes,
  progressLog,
  startBenchWorker,
  terminateAll,
  withBench,
  writeResults,
} from './context';
import { percentile } from './measure';
import { printTables } from './table';

const HELP = `npm run bench:ratelimit -- [options]

  --conversations N   conversations started together (default 200; --quick 20)
  --steps N           tool steps per conversation, then an answer: N + 1 model calls (default 8; --quick 4)
  --itpm N            the local API's input tokens per minute (default 40000; --quick 12000)
  --rpm N             its requests per minute (default: no limit)
  --otpm N            its output tokens per minute (default: no limit)
  --workers N         worker processes on the one task queue (default 2)
  --prompt-tokens N   padding of each conversation's first message, in tokens (default 0): every request of the
                      conversation carries it. Unpadded, the chain's requests average ~530 input tokens at 8 steps
                      (~400 at 4): 200 × 8 is ~24 minutes of a 40,000 ITPM limit per mode, --quick ~3.3 minutes
                      of its 12,000 (the bucket starts full: a minute's worth passes at once, so a run must be
                      several minutes of the limit for the limit to bite)
  --modes LIST        off,on (default both, in that order)
  --timeout S         give up on a conversation after S seconds (default 3600: the default size runs ~22 minutes)
  --quick             the small size, to try it (~2.5 minutes per mode)`;

const MODES = ['off', 'on'] as const;
type Mode = (typeof MODES)[number];

interface ModeRun {
  mode: Mode;
  conversations: number;
  answered: number;
  failed: number;
  /** Why conversations failed: error name or code → count. */
  failures: Record<string, number>;
  /** Requests to POST /v1/messages (batches' own requests excluded), by status. */
  modelRequests: number;
  statuses: Record<string, number>;
  rateLimited: number;
  rateLimitedShare: number;
  /** Input tokens of the requests the API answered 200, as it counts them. */
  acceptedInputTokens: number;
  /** The chain's size: input tokens per accepted request, on average. */
  inputTokensPerRequest: number;
  acceptedInputTokensPerMinute: number;
  /** acceptedInputTokensPerMinute over the limit; a run of T minutes can reach (T + 1) / T of it (a full bucket at the start). */
  shareOfLimit: number | null;
  /** Accepted input tokens over the most a run of this wall time could get: a full bucket, then T minutes of refill. */
  shareOfAttainable: number | null;
  wallMs: number;
  durationMs: { p50: number; p95: number };
  /** When the 429s came: seconds after the run's first request. */
  refusedAtS: number[];
  /** What the limiter workflow handled (limiter on): reservations, waits, reports, 429s reported; its input ratio. */
  limiter?: RateLimitTotals & { inputRatio: number | null };
}

/** A deterministic filler of about `tokens` tokens (4 characters each, the local API's count). */
function padding(tokens: number): string {
  const words = 'the quick brown fox jumps over a lazy dog near the river bank ';
  return words.repeat(Math.ceil((tokens * 4) / words.length)).slice(0, tokens * 4);
}

/** Scripts the chain for a fresh tag and returns the conversation's first message. */
function chainPrompt(ctx: BenchContext, steps: number, paddingTokens: number): string {
  const tag = `[ratelimit-${randomUUID()}]`;
  ctx.mock.script(tag, chainSteps(steps));
  const context = paddingTokens > 0 ? `\n\nNotes to keep in mind: ${padding(paddingTokens)}` : '';
  return `${tag} Check the weather and some ticker symbols for me, one lookup at a time.${context}`;
}

function failureName(err: unknown): string {
  if (err && typeof err === 'object') {
    const code = (err as { code?: unknown }).code;
    const name = (err as { name?: unknown }).name;
    return [name, code].filter((part) => typeof part === 'string').join(':') || 'Error';
  }
  return String(err);
}

async function runMode(
  ctx: BenchContext,
  mode: Mode,
  options: { n: number; steps: number; workers: number; paddingTokens: number; limits: RateLimits; timeoutMs: number },
): Promise<ModeRun> {
  const { n, steps, limits } = options;
  const taskQueue = `bench-ratelimit-${mode}-${randomUUID().slice(0, 8)}`;
  // A limiter of its own for each run: its totals are this run's alone.
  const scope = taskQueue;
  const workers: WorkerProcess[] = [];
  try {
    for (let i = 0; i < options.workers; i++) {
      workers.push(
        await startBenchWorker(
          ctx,
          'scripts/rig-worker.ts',
          taskQueue,
          {
            ANTHROPIC_BASE_URL: ctx.mock.url,
            WORKFLOW_BUNDLE_PATH: ctx.bundles.conversation,
            TOOL_LATENCY_MS: '0',
            ANTHROPIC_RATE_LIMITER: mode,
            ANTHROPIC_RATE_LIMIT_SCOPE: scope,
          },
          limiterLines(ctx),
        ),
      );
    }
    ctx.log(`${mode}: ${workers.length} workers ready (pids ${workers.map((w) => w.pid).join(', ')})`);
    const conversations = new ConversationClient({ client: ctx.client, taskQueue, tools: CHAIN_TOOLS });
    // Fresh buckets, no requests recorded: each mode starts from the same state.
    ctx.mock.reset();
    ctx.mock.setRateLimits(limits);
    const ids = Array.from({ length: n }, (_, i) => `bench-ratelimit-${mode}-${i}-${randomUUID().slice(0, 8)}`);
    const prompts = ids.map(() => chainPrompt(ctx, steps, options.paddingTokens));
    const durations: number[] = [];
    const failures: Record<string, number> = {};
    let done = 0;
    const t0 = performance.now();
    const progress = setInterval(() => {
      const rateLimited = ctx.mock.requests.filter((r) => r.status === 429).length;
      ctx.log(`${mode}: ${done}/${n} conversations done, ${ctx.mock.requests.length} requests, ${rateLimited} 429s`);
    }, 15_000);
    try {
      await Promise.all(
        ids.map(async (id, i) => {
          const started = performance.now();
          try {
            await conversations.sendMessage(id, prompts[i]!, {
              start: {
                tools: CHAIN_TOOLS,
                closeAfterFirstReply: true,
                promptCaching: false,
                limits: { maxModelCallsPerTurn: steps + 10, maxToolCallsPerTurn: steps + 10 },
              },
              timeoutMs: options.timeoutMs,
            });
            durations.push(performance.now() - started);
          } catch (err) {
            const name = failureName(err);
            failures[name] = (failures[name] ?? 0) + 1;
          } finally {
            done++;
          }
        }),
      );
    } finally {
      clearInterval(progress);
    }
    const wallMs = performance.now() - t0;
    // Conversations that failed or timed out may still be open: leave nothing running into the next mode.
    await terminateAll(ctx.client, ids);
    const limiter = mode === 'on' ? await limiterTotals(ctx, scope) : undefined;
    const requests = ctx.mock.requests.filter(isModelRequest);
    const statuses: Record<string, number> = {};
    for (const r of requests) statuses[String(r.status)] = (statuses[String(r.status)] ?? 0) + 1;
    const rateLimited = statuses['429'] ?? 0;
    const firstAt = requests[0]?.at ?? 0;
    const refusedAtS = requests.filter((r) => r.status === 429).map((r) => Math.round((r.at - firstAt) / 100) / 10);
    let acceptedInputTokens = 0;
    for (const r of requests) if (r.status === 200) acceptedInputTokens += countInputTokens(r.body);
    const perMinute = acceptedInputTokens / (wallMs / 60_000);
    const failed = Object.values(failures).reduce((a, b) => a + b, 0);
    return {
      mode,
      conversations: n,
      answered: durations.length,
      failed,
      failures,
      modelRequests: requests.length,
      statuses,
      rateLimited,
      rateLimitedShare: requests.length > 0 ? rateLimited / requests.length : 0,
      acceptedInputTokens,
      inputTokensPerRequest: acceptedInputTokens / Math.max(1, requests.length - rateLimited),
      acceptedInputTokensPerMinute: perMinute,
      shareOfLimit: limits.inputTokensPerMinute ? perMinute / limits.inputTokensPerMinute : null,
      shareOfAttainable: limits.inputTokensPerMinute
        ? acceptedInputTokens / (limits.inputTokensPerMinute * (1 + wallMs / 60_000))
        : null,
      wallMs,
      durationMs: { p50: percentile(durations, 50), p95: percentile(durations, 95) },
      refusedAtS,
      ...(limiter && { limiter }),
    };
  } finally {
    await inLanes(workers, workers.length, (worker) => worker.stop(10_000));
  }
}

/** Prints what a worker says of the limiter (a timeout, a failed reservation, a dropped report), its first 10 such lines. */
function limiterLines(ctx: BenchContext): (line: string) => void {
  let shown = 0;
  let following = 0;
  return (line) => {
    if (shown < 10 && /rate limiter (did|could)|rate-limit (state|reports)|malformed/i.test(line)) {
      shown++;
      following = 6; // the log line's attributes
    }
    if (following > 0) {
      following--;
      ctx.log(line.slice(0, 600));
    }
  };
}

/** The limiter's totals and learned input ratio, then the limiter ended (it would idle 15 minutes otherwise). */
async function limiterTotals(ctx: BenchContext, scope: string): Promise<ModeRun['limiter']> {
  const handle = ctx.client.workflow.getHandle(rateLimiterId(scope));
  try {
    const state = await handle.query(rateLimitStateQuery);
    const ratios = Object.values(state.models).map((m) => m.inputRatio ?? 1);
    const totals = state.totals ?? { reserved: 0, waited: 0, observed: 0, refused: 0 };
    return { ...totals, inputRatio: ratios[0] ?? null };
  } catch (err) {
    ctx.log(`the limiter could not be asked: ${String(err)}`);
    return undefined;
  } finally {
    await handle.terminate('bench over').catch(() => undefined);
  }
}

/** A request to the Messages API itself (not a Message Batch's own request, not a batch route). */
function isModelRequest(r: RecordedRequest): boolean {
  return r.method === 'POST' && r.path === '/v1/messages' && r.headers['x-local-batch'] === undefined;
}

async function main(): Promise<number> {
  const flags = Flags.read(process.argv.slice(2), HELP);
  if (!flags) return 0;
  const quick = flags.on('quick');
  const n = flags.int('conversations', quick ? 20 : 200);
  const steps = flags.int('steps', quick ? 4 : 8);
  const workers = flags.int('workers', 2);
  const paddingTokens = flags.int('prompt-tokens', 0, { zero: true });
  const timeoutMs = flags.int('timeout', 3_600) * 1000;
  const modes = flags.names('modes', MODES);
  const limits: RateLimits = { inputTokensPerMinute: flags.int('itpm', quick ? 12_000 : 40_000) };
  const rpm = flags.int('rpm', 0, { zero: true });
  const otpm = flags.int('otpm', 0, { zero: true });
  if (rpm > 0) limits.requestsPerMinute = rpm;
  if (otpm > 0) limits.outputTokensPerMinute = otpm;

  const started = new Date();
  const log = progressLog('bench:ratelimit', started.getTime());
  log(
    `${n} conversations × ${steps} steps, ${workers} workers, limits ${JSON.stringify(limits)}, modes ${modes.join(',')}`,
  );
  const runs = await withBench({ log }, async (ctx) => {
    const runs: ModeRun[] = [];
    for (const mode of modes) {
      runs.push(await runMode(ctx, mode, { n, steps, workers, paddingTokens, limits, timeoutMs }));
      const run = runs.at(-1)!;
      log(
        `${mode}: ${run.answered} answered, ${run.failed} failed, ${run.rateLimited} 429s in ` +
          `${(run.wallMs / 1000).toFixed(0)} s; ${run.inputTokensPerRequest.toFixed(0)} input tokens per request`,
      );
    }
    return runs;
  });

  const itpm = limits.inputTokensPerMinute ?? 0;
  const minutesOfLimit = runs[0] ? runs[0].acceptedInputTokens / itpm : 0;
  printTables([
    {
      title:
        `Rate limits: limiter off and on — ${n} conversations × ${steps} steps (${steps + 1} model calls), ` +
        `${workers} worker processes, limits ${JSON.stringify(limits)}, ~${minutesOfLimit.toFixed(1)} min of ITPM`,
      headers: [
        'limiter',
        'answered',
        'failed',
        'requests',
        '429s',
        '429 %',
        'input tok/min',
        '% of limit',
        '% attainable',
        'wall s',
        'p50 s',
        'p95 s',
      ],
      rows: runs.map((r) => [
        r.mode,
        String(r.answered),
        String(r.failed),
        String(r.modelRequests),
        String(r.rateLimited),
        (r.rateLimitedShare * 100).toFixed(1),
        r.acceptedInputTokensPerMinute.toFixed(0),
        r.shareOfLimit === null ? '-' : (r.shareOfLimit * 100).toFixed(1),
        r.shareOfAttainable === null ? '-' : (r.shareOfAttainable * 100).toFixed(1),
        (r.wallMs / 1000).toFixed(1),
        (r.durationMs.p50 / 1000).toFixed(1),
        (r.durationMs.p95 / 1000).toFixed(1),
      ]),
    },
  ]);
  console.log(
    'input tok/min: input tokens the API accepted (answered 200) per wall minute; % attainable: those tokens over ' +
      'the most a run that long can get (a full bucket at the start, then a minute of limit per minute)',
  );
  for (const r of runs) if (r.failed > 0) console.log(`${r.mode}: failures ${JSON.stringify(r.failures)}`);
  for (const r of runs) {
    if (r.refusedAtS.length > 0 && r.refusedAtS.length <= 50)
      console.log(`${r.mode}: 429s at ${r.refusedAtS.map((s) => `${s} s`).join(', ')}`);
    if (!r.limiter) continue;
    const { reserved, waited, observed, refused, inputRatio } = r.limiter;
    // Fewer reservations than requests: calls went unreserved (each worker's first call of the model, reservations
    // that timed out). More: calls reserved and never sent (conversations given up), or reserved again after a 429.
    console.log(
      `limiter: ${reserved} reservations for ${r.modelRequests} requests, ${waited} told to wait, ${observed} ` +
        `reports, ${refused} 429s reported; input ratio ${inputRatio?.toFixed(3)}`,
    );
  }
  console.log(
    `load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const written = await writeResults('results', 'rate-limit', started, {
    json: JSON.stringify(
      { conversations: n, steps, workers, paddingTokens, limits, quick, command: process.argv.slice(2), runs },
      null,
      2,
    ),
  });
  console.log(`results: ${written}`);
  return 0;
}

runMain(main);
