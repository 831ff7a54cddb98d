// `npm run soak`: many conversations at once, while things break. N concurrent ticker → price conversations run against
// a Temporal dev server (TEMPORAL_ADDRESS is reused when it answers) and the local Messages API server (in this
// process), with transient API faults scripted into a share of the model calls, and two worker PROCESSES
// (`workers/main.ts`) that are SIGKILLed at random moments and started again. At the end it prints
//
//   started     conversations started
//   completed   finished with the right answer ($38.50)
//   failed      finished otherwise (a typed failure, a wrong answer)
//   lost        started, but neither completed nor failed before the deadline
//   duplicates  executions of COMPLETED tool calls: a tool that ran again after the server had recorded its result
//   elapsed     from the first start to the last result
//
// then what happened: kills, faults, model requests, and every tool call that ran more than once, each re-run with its
// cause. A call in flight when its worker died runs again (same idempotency key): at-least-once execution, as Temporal
// promises, and allowed ("the one in flight runs again at most once more"). If the worker died after the tool finished
// but before the server recorded it, that tool FINISHED twice: the report counts those apart, since that is the case the
// idempotency key is for. How wide that window is shows in "completion acknowledged": the round trip of the workers'
// RespondActivityTaskCompleted calls, read from each worker's Prometheus metrics (WORKER_METRICS_ADDRESS) just before
// it is killed and at the end. A re-run with no cause (no kill, no error, no timeout) fails the run like a duplicate.
// It exits 1 if anything was lost, duplicated or re-run without cause, 2 on a usage error.
//
//   npm run soak                                      200 conversations, 10% faults, a kill every ~20 s
//   npm run soak -- --conversations 1000 --fault-rate 0.1 --kill-every 20s
//   npm run soak -- --kill-every off                  no kills (faults only)
//   npm run soak -- --help
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs as parseCommandLine } from 'node:util';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { ConversationClient } from '../client/conversation-client';
import { ConversationError } from '../client/errors';
import { startWorkerProcess, type WorkerProcess } from '../test/support/worker-process';
import { connectOrStartDevServer, type DevServer } from './dev-server';
import { freePort } from './free-port';
import { STOCK_QUESTION, STOCK_TOOLS } from './mock-anthropic/fixtures';
import { startMockAnthropic } from './mock-anthropic/server';
import type { MockAnthropic, ScriptStep } from './mock-anthropic/types';
import { cleanUpOnSignal, runMain, UsageError } from './script-main';
import { type Histogram, mergeHistograms, parseHistogram, quantileUpperBound } from './soak/prometheus-histogram';
import { type ExecutionLine, judgeToolCall, type RerunCause, type ToolCallVerdict } from './soak/tool-executions';

const ROOT = path.resolve(__dirname, '..');
const MODEL_CALLS_PER_CHAIN = 3;

interface Args {
  conversations: number;
  faultRate: number;
  /** Mean interval between kills, ms; 0 = never. */
  killEveryMs: number;
  deadlineMs: number;
  workers: number;
  /** How many conversations are being started at any one time. */
  startConcurrency: number;
  toolLatencyMs: number;
  seed: number;
  keepLogs: boolean;
}

const USAGE = `npm run soak -- [options]
  --conversations N     concurrent conversations (default 200)
  --fault-rate F        chance that a model call meets a transient fault first (default 0.1); several in a row possible
  --kill-every D        mean time between SIGKILLs of a worker process, e.g. 20s, 1m, 500ms; "off" for none (default 20s)
  --deadline D          how long to wait for results before counting the rest as lost (default 10m)
  --workers N           worker processes (default 2)
  --start-concurrency N conversations being started at once (default 50)
  --tool-latency-ms MS  simulated latency of every tool call, so kills also land inside tools (default 250)
  --seed N              seed for the fault scripts (default: random, printed)
  --keep-logs           keep the execution log and worker output (their folder is printed)`;

export function parseDuration(text: string): number {
  if (text === 'off' || text === '0') return 0;
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/.exec(text.trim());
  if (!match) throw new UsageError(`not a duration: "${text}" (e.g. 500ms, 20s, 2m)`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  return Math.round(Number(match[1]) * unit);
}

export function parseArgs(argv: string[]): Args | undefined {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseCommandLine({
      args: argv,
      strict: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        'keep-logs': { type: 'boolean' },
        ...Object.fromEntries(['conversations', 'fault-rate', 'kill-every', 'deadline', 'workers', 'start-concurrency', 'tool-latency-ms', 'seed']
          .map((name) => [name, { type: 'string' as const }])),
      },
    }));
  } catch (error) {
    throw new UsageError(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
  }
  if (values.help) {
    console.log(USAGE);
    return undefined;
  }
  const text = (name: string): string | undefined => values[name] as string | undefined;
  const integer = (name: string, fallback: number, min: number): number => {
    const value = text(name);
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be an integer of at least ${min}, got "${value}"`);
    return n;
  };
  const faultRate = Number(text('fault-rate') ?? 0.1);
  if (!(faultRate >= 0 && faultRate < 1)) throw new UsageError(`--fault-rate must be in [0, 1), got "${text('fault-rate')}"`);
  return {
    conversations: integer('conversations', 200, 1),
    faultRate,
    killEveryMs: parseDuration(text('kill-every') ?? '20s'),
    deadlineMs: parseDuration(text('deadline') ?? '10m'),
    workers: integer('workers', 2, 1),
    startConcurrency: integer('start-concurrency', 50, 1),
    toolLatencyMs: integer('tool-latency-ms', 250, 0),
    seed: integer('seed', Math.floor(Math.random() * 2 ** 31), 1),
    keepLogs: values['keep-logs'] === true,
  };
}

/** mulberry32: a small seeded PRNG, so a run's fault scripts can be reproduced with --seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FAULTS: { name: string; step: ScriptStep }[] = [
  { name: '429', step: { fault: 'status', status: 429, headers: { 'retry-after': '1' } } },
  { name: '529', step: { fault: 'status', status: 529 } },
  { name: '500', step: { fault: 'status', status: 500 } },
  { name: 'connection-reset', step: { fault: 'connection-reset' } },
  { name: 'stream-error', step: { fault: 'stream-error', afterBlocks: 1 } },
];

/** Before each of the chain's model calls: faults while a coin with P(fault) = rate says so (at most 3), then the demo. */
function faultScript(random: () => number, rate: number, counts: Map<string, number>): ScriptStep[] {
  const steps: ScriptStep[] = [];
  for (let call = 0; call < MODEL_CALLS_PER_CHAIN; call++) {
    for (let n = 0; n < 3 && random() < rate; n++) {
      const fault = FAULTS[Math.floor(random() * FAULTS.length)]!;
      counts.set(fault.name, (counts.get(fault.name) ?? 0) + 1);
      steps.push(fault.step);
    }
    steps.push({ demo: true });
  }
  return steps;
}

type Outcome = { kind: 'completed' } | { kind: 'failed'; why: string; id: string };

function readExecutionLog(file: string): ExecutionLine[] {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as ExecutionLine);
}

type HistoryEvents = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>;

const eventsOf = (handle: WorkflowHandle): Promise<HistoryEvents> =>
  handle.fetchHistory().then((history) => history.events ?? [], () => []);

/** `workflowId/tool-toolu_…` → [workflowId, activityId]: the tools' idempotency key is built that way. */
const splitKey = (key: string): [string, string] => [key.slice(0, key.lastIndexOf('/')), key.slice(key.lastIndexOf('/') + 1)];

const timeOf = (event: HistoryEvents[number]): string =>
  event.eventTime ? new Date(Number(event.eventTime.seconds) * 1000 + Math.floor((event.eventTime.nanos ?? 0) / 1e6)).toISOString() : '?';

/** When the server recorded the activity's result (its ActivityTaskCompleted event), in ms; undefined if it never did. */
function completionTime(events: HistoryEvents, activityId: string): number | undefined {
  const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityId === activityId);
  const completed = scheduled && events.find((e) => String(e.activityTaskCompletedEventAttributes?.scheduledEventId ?? '') === String(scheduled.eventId));
  const time = completed?.eventTime;
  return time ? Number(time.seconds) * 1000 + Math.floor((time.nanos ?? 0) / 1e6) : undefined;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  if (!args) return 0;
  const t0 = Date.now();
  const log = (line: string): void => void process.stderr.write(`[soak ${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);
  log(`${args.conversations} conversations, fault rate ${args.faultRate}, ` +
    `${args.killEveryMs ? `a worker SIGKILLed every ~${args.killEveryMs / 1000} s` : 'no kills'}, ${args.workers} worker processes, ` +
    `seed ${args.seed}; ${os.cpus().length} cores, load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);

  const workDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'soak-'));
  const executionLog = path.join(workDir, 'executions.jsonl');
  const workerLog = path.join(workDir, 'workers.log');
  const workerOutput = fs.createWriteStream(workerLog);
  let workerOutputClosed: Promise<void> | undefined;
  const closeWorkerOutput = (): Promise<void> => (workerOutputClosed ??= new Promise<void>((resolve) => workerOutput.end(() => resolve())));
  let server: DevServer | undefined;
  let mock: MockAnthropic | undefined;
  let connection: Connection | undefined;
  const workers: (WorkerProcess | undefined)[] = [];
  let stopKilling = false;
  let cleanedUp: Promise<void> | undefined;
  const cleanup = (): Promise<void> =>
    (cleanedUp ??= (async () => {
      stopKilling = true;
      await Promise.all(workers.map((w) => w?.kill()));
      await connection?.close().catch(() => undefined);
      await mock?.close().catch(() => undefined);
      await server?.stop().catch((err: unknown) => log(`could not stop the dev server: ${String(err)}`));
      await closeWorkerOutput();
      if (!args.keepLogs) await fsp.rm(workDir, { recursive: true, force: true });
    })());
  cleanUpOnSignal(cleanup, log);

  try {
    // The server, the local Messages API, and one workflow bundle for every worker (so a restart takes a second or two).
    const bundleFile = process.env.WORKFLOW_BUNDLE_PATH || path.join(workDir, 'workflow-bundle.js');
    const [devServer] = await Promise.all([
      connectOrStartDevServer({ log }),
      process.env.WORKFLOW_BUNDLE_PATH
        ? Promise.resolve()
        : bundleWorkflowCode({ workflowsPath: path.join(ROOT, 'workflows', 'index.ts'), logger: new DefaultLogger('WARN') })
          .then(({ code }) => fsp.writeFile(bundleFile, code)),
    ]);
    server = devServer;
    mock = await startMockAnthropic();
    connection = await Connection.connect({ address: server.address });
    const taskQueue = `soak-${randomUUID()}`;
    const conversations = new ConversationClient({ client: new Client({ connection, namespace: server.namespace }), taskQueue });

    let workerStarts = 0;
    // Each worker serves its SDK metrics; they are read just before it is killed, and from the survivors at the end.
    const metricsUrls = new Map<number, string>();
    const completionLatencies: Histogram[] = [];
    const readCompletionLatency = async (worker: WorkerProcess): Promise<void> => {
      const url = metricsUrls.get(worker.pid);
      const text = url && (await fetch(url, { signal: AbortSignal.timeout(2000) }).then((r) => r.text(), () => undefined));
      if (text) completionLatencies.push(parseHistogram(text, 'temporal_request_latency', { operation: 'RespondActivityTaskCompleted' }));
    };
    const startWorker = async (): Promise<WorkerProcess> => {
      workerStarts++;
      const metricsAddress = `127.0.0.1:${await freePort()}`;
      const worker = await startWorkerProcess({
        temporalAddress: server!.address,
        namespace: server!.namespace,
        taskQueue,
        anthropicBaseUrl: mock!.url,
        executionLog,
        toolLatencyMs: args.toolLatencyMs,
        workflowBundlePath: bundleFile,
        readyTimeoutMs: 120_000,
        env: { WORKER_METRICS_ADDRESS: metricsAddress },
        output: (line) => void (workerOutputClosed === undefined && workerOutput.write(`${line}\n`)),
      });
      metricsUrls.set(worker.pid, `http://${metricsAddress}/metrics`);
      return worker;
    };
    workers.push(...(await Promise.all(Array.from({ length: args.workers }, () => startWorker()))));
    log(`dev server ${server.address}, local Messages API ${mock.url}, workers ${workers.map((w) => w!.pid).join(', ')}; logs in ${workDir}`);

    // The chaos: at random intervals (uniform between 0.5 and 1.5 times the mean), SIGKILL a random worker, start a new one.
    const random = prng(args.seed);
    const chaosRandom = prng(args.seed ^ 0x5bd1e995);
    const killedAt = new Map<number, number>();
    const chaos = (async () => {
      if (!args.killEveryMs) return;
      while (!stopKilling) {
        const wait = args.killEveryMs * (0.5 + chaosRandom());
        for (const until = Date.now() + wait; Date.now() < until && !stopKilling;) await sleep(Math.min(250, until - Date.now()));
        if (stopKilling) return;
        const index = Math.floor(chaosRandom() * workers.length);
        const victim = workers[index]!;
        workers[index] = undefined;
        await readCompletionLatency(victim);
        killedAt.set(victim.pid, Date.now());
        await victim.kill();
        log(`SIGKILLed worker ${victim.pid} at ${new Date(killedAt.get(victim.pid)!).toISOString()} (kill ${killedAt.size}); starting another`);
        for (;;) {
          try {
            workers[index] = await startWorker();
            break;
          } catch (error) {
            log(`a worker did not start (${String(error).split('\n')[0]}); trying again`);
            await sleep(1000);
          }
        }
      }
    })();

    // The conversations: each its own prompt, so each its own fault script.
    const faultCounts = new Map<string, number>();
    const outcomes = new Map<string, Outcome>();
    const ids: string[] = [];
    let started = 0;
    let startFailures = 0;
    let lastResultAt = t0;
    const deadline = Date.now() + args.deadlineMs;
    const runStart = Date.now();
    const settle = async (id: string): Promise<void> => {
      for (;;) {
        try {
          const result = await conversations.waitForResult(id);
          outcomes.set(id, result.status === 'completed' && /38\.50/.test(result.text)
            ? { kind: 'completed' }
            : { kind: 'failed', id, why: `ended ${result.status}: ${result.text.slice(0, 100)}` });
          lastResultAt = Date.now();
          return;
        } catch (error) {
          if (error instanceof ConversationError && (error.code === 'conversation_failed' || error.code === 'not_found')) {
            outcomes.set(id, { kind: 'failed', id, why: `${error.failureType ?? error.code}: ${error.message.slice(0, 120)}` });
            lastResultAt = Date.now();
            return;
          }
          // The server being busy (or a long poll cut short): wait again.
          if (Date.now() > deadline) return;
          await sleep(1000);
        }
      }
    };
    const waits: Promise<void>[] = [];
    let next = 0;
    const starter = async (): Promise<void> => {
      while (next < args.conversations) {
        const n = next++;
        const prompt = `${STOCK_QUESTION} [soak ${n} ${randomUUID().slice(0, 8)}]`;
        const id = `soak-${n}-${randomUUID().slice(0, 8)}`;
        mock!.script(prompt, faultScript(random, args.faultRate, faultCounts));
        for (let attempt = 1; ; attempt++) {
          try {
            await conversations.startConversation({
              id,
              firstMessage: prompt,
              tools: STOCK_TOOLS,
              closeAfterFirstReply: true,
              timeouts: { modelHeartbeat: '5 seconds' },
            });
            break;
          } catch (error) {
            if (attempt >= 5 || Date.now() > deadline) {
              startFailures++;
              log(`could not start ${id}: ${String(error)}`);
              return;
            }
            await sleep(1000 * attempt);
          }
        }
        started++;
        ids.push(id);
        waits.push(settle(id));
      }
    };
    const progress = setInterval(() => {
      const done = [...outcomes.values()];
      log(`started ${started}/${args.conversations}, completed ${done.filter((o) => o.kind === 'completed').length}, ` +
        `failed ${done.filter((o) => o.kind === 'failed').length}, kills ${killedAt.size}, model requests ${mock!.requests.length}, ` +
        `rss ${Math.round(process.memoryUsage().rss / 2 ** 20)} MiB, load ${os.loadavg()[0]!.toFixed(2)}`);
    }, 10_000);
    await Promise.all(Array.from({ length: Math.min(args.startConcurrency, args.conversations) }, () => starter()));
    log(`all ${started} started in ${((Date.now() - runStart) / 1000).toFixed(1)} s`);
    await Promise.race([Promise.all(waits), sleep(Math.max(0, deadline - Date.now()))]);
    clearInterval(progress);
    stopKilling = true;
    await chaos;
    const elapsedMs = lastResultAt - runStart;

    // The verdict. The execution log is written by the workers, read here, after they are all stopped.
    await Promise.all(workers.map((w) => w && readCompletionLatency(w)));
    await Promise.all(workers.map((w) => w?.kill()));
    const lines = readExecutionLog(executionLog);
    const completionLatency = mergeHistograms(completionLatencies);
    const bound = (q: number): string => {
      const ms = quantileUpperBound(completionLatency, q);
      return ms === undefined ? 'n/a' : ms === Infinity ? '> 10 s' : `≤ ${ms} ms`;
    };
    await closeWorkerOutput();
    // Completions the server refused because it had already given the attempt up (the worker was alive but late):
    // the SDK logs "Activity not found on completion" with the task token, which holds the workflow and activity ids.
    const refusedTokens = [...fs.readFileSync(workerLog, 'utf8').matchAll(/not found on completion[^\n]*?TaskToken\(([A-Za-z0-9+/=_-]+)\)/g)]
      .map((match) => Buffer.from(match[1]!, 'base64').toString('latin1'));
    const byKey = new Map<string, ExecutionLine[]>();
    for (const line of lines) byKey.set(line.idempotencyKey, [...(byKey.get(line.idempotencyKey) ?? []), line]);
    const done = ids.map((id) => outcomes.get(id));
    const completed = done.filter((o) => o?.kind === 'completed').length;
    const failures = done.filter((o): o is Extract<Outcome, { kind: 'failed' }> => o?.kind === 'failed');
    const lost = ids.filter((id) => !outcomes.has(id));
    const modelRequests = mock.requests.filter((r) => r.path === '/v1/messages').length;

    // Every tool call that ran more than once, judged against the time the server recorded its result. Only those can
    // hold a duplicate, so only their histories are read.
    const historyClient = new Client({ connection, namespace: server.namespace });
    const histories = new Map<string, Promise<HistoryEvents>>();
    const historyOf = (workflowId: string): Promise<HistoryEvents> => {
      if (!histories.has(workflowId)) histories.set(workflowId, eventsOf(historyClient.workflow.getHandle(workflowId)));
      return histories.get(workflowId)!;
    };
    const verdicts: ToolCallVerdict[] = [];
    for (const [key, entries] of byKey) {
      if (entries.filter((e) => e.event === 'start').length < 2) continue;
      const [workflowId, activityId] = splitKey(key);
      verdicts.push(judgeToolCall(key, entries, killedAt, completionTime(await historyOf(workflowId), activityId)));
    }
    const duplicates = verdicts.filter((v) => v.duplicates.length > 0);
    const causes = new Map<RerunCause, number>();
    for (const cause of verdicts.flatMap((v) => v.reruns)) causes.set(cause, (causes.get(cause) ?? 0) + 1);
    const unexplained = verdicts.filter((v) => v.reruns.includes('unexplained'));

    const CAUSES: Record<RerunCause, string> = {
      'in-flight-at-kill': 'in flight at a kill',
      'result-lost-with-worker': 'finished, result died with its worker',
      'timed-out-while-alive': 'timed out on a live worker',
      'retried-after-error': 'retried after an error',
      unexplained: 'NO CAUSE',
    };
    const rows: [string, string | number][] = [
      ['started', started],
      ['completed', completed],
      ['failed', failures.length],
      ['lost', lost.length],
      ['duplicates', `${duplicates.length} (executions of tool calls whose result the server had recorded)`],
      ['elapsed', `${(elapsedMs / 1000).toFixed(1)} s`],
      ['', ''],
      ['not started (start failed)', startFailures],
      ['worker kills', killedAt.size],
      ['worker starts', workerStarts],
      ['faults scripted', [...faultCounts.entries()].map(([name, n]) => `${name} ×${n}`).join(', ') || 'none'],
      ['model requests', `${modelRequests} (${(modelRequests / Math.max(1, started)).toFixed(2)} per conversation; a clean chain makes ${MODEL_CALLS_PER_CHAIN})`],
      ['tool calls', byKey.size],
      ['tool calls run more than once', `${verdicts.length} (same idempotency key each time; at most ` +
        `${Math.max(0, ...verdicts.map((v) => v.executions.length))} runs of one call)`],
      ...[...causes.entries()].map(([cause, n]): [string, string] => [`  re-runs: ${CAUSES[cause]}`, String(n)]),
      ['completion acknowledged', `p50 ${bound(0.5)}, p90 ${bound(0.9)}, p99 ${bound(0.99)} (RespondActivityTaskCompleted round trip, ` +
        `${completionLatency.count} activity completions, from the workers' metrics: a SIGKILL inside it loses a finished result)`],
      ['completions refused', `${refusedTokens.length} (${refusedTokens.filter((t) => t.includes('tool-')).length} tool calls, the rest model ` +
        'calls: a live worker finished an attempt the server had already timed out)'],
    ];
    const width = Math.max(...rows.map(([name]) => name.length));
    console.log(`\nSoak: ${args.conversations} conversations, fault rate ${args.faultRate}, kill every ${args.killEveryMs ? `~${args.killEveryMs / 1000} s` : 'never'}, seed ${args.seed}`);
    for (const [name, value] of rows) console.log(name ? `  ${name.padEnd(width)}  ${value}` : '');
    if (failures.length > 0) {
      const reasons = new Map<string, string[]>();
      for (const { why, id } of failures) {
        const reason = why.replace(/req_\w+/g, 'req_…');
        reasons.set(reason, [...(reasons.get(reason) ?? []), id]);
      }
      console.log('\nFailures:');
      for (const [why, failedIds] of reasons) console.log(`  ${String(failedIds.length).padStart(5)}  ${why} (e.g. ${failedIds.slice(0, 3).join(', ')})`);
      // What the server saw of the first few: each activity attempt it started and how the attempt before it ended.
      for (const { id } of failures.slice(0, 3)) {
        const events = await historyOf(id);
        console.log(`  ${id}:`);
        for (const event of events) {
          const attempt = event.activityTaskStartedEventAttributes;
          if (!attempt) continue;
          const scheduled = events.find((e) => String(e.eventId) === String(attempt.scheduledEventId))?.activityTaskScheduledEventAttributes;
          console.log(`    ${timeOf(event)} ${scheduled?.activityType?.name} ${scheduled?.activityId} attempt ${attempt.attempt} by ${attempt.identity}` +
            (attempt.lastFailure ? ` (after: ${attempt.lastFailure.message})` : ''));
        }
        for (const [key, entries] of byKey) {
          if (key.startsWith(`${id}/`)) console.log(`    log ${key.slice(id.length + 1)}: ${entries.map((e) => `${e.event}#${e.attempt}@${e.pid} ${new Date(e.at).toISOString()}`).join(', ')}`);
        }
      }
      for (const [pid, at] of killedAt) console.log(`  SIGKILL ${pid} at ${new Date(at).toISOString()}`);
    }
    if (lost.length > 0) console.log(`\nLost (first 10): ${lost.slice(0, 10).join(', ')}`);
    const describe = (v: ToolCallVerdict): string => {
      const runs = v.executions.map((e) => {
        const kill = killedAt.get(e.pid);
        const end = e.endedAt === undefined ? 'never ended' : `${e.ended} at +${e.endedAt - e.startedAt} ms`;
        return `attempt ${e.attempt} in ${e.pid} (${end}${kill !== undefined && kill >= e.startedAt ? `, SIGKILL at +${kill - e.startedAt} ms` : ''})`;
      });
      return `  ${v.key}: ${runs.join(', ')}; re-run: ${v.reruns.map((cause) => CAUSES[cause]).join('; ')}`;
    };
    if (duplicates.length > 0) console.log(`\nDuplicates (first 10):\n${duplicates.slice(0, 10).map(describe).join('\n')}`);
    if (unexplained.length > 0) console.log(`\nRe-runs without a cause (first 10):\n${unexplained.slice(0, 10).map(describe).join('\n')}`);
    const finishedTwice = verdicts.filter((v) => v.reruns.includes('result-lost-with-worker'));
    if (finishedTwice.length > 0) console.log(`\nFinished twice, at-least-once (first 5):\n${finishedTwice.slice(0, 5).map(describe).join('\n')}`);
    const ok = lost.length === 0 && duplicates.length === 0 && unexplained.length === 0;
    console.log(`\n${ok ? 'PASS' : 'FAIL'}: ${lost.length} lost, ${duplicates.length} duplicates, ${unexplained.length} re-runs without a cause ` +
      `(${verdicts.length} tool calls in flight at a kill or timeout ran again, ${finishedTwice.length} of them had finished)`);
    return ok ? 0 : 1;
  } finally {
    await cleanup();
  }
}

if (require.main === module) runMain(main);
