// One soak run against a Temporal server that something else brought up (main.ts: a dev server; prod-check: the
// production topology): N conversations of the mixed load, worker processes SIGKILLed and restarted at random, the
// server SIGKILLed and restarted on the same data when the environment can, then the verdict.
import fs from 'node:fs';
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { ConversationClient } from '../../client/conversation-client';
import { ConversationError } from '../../client/errors';
import type { WorkerProcess } from '../worker-process';
import type { MessagesApi } from '../../testing/messages-api/types';
import type { SoakArgs } from './args';
import { every } from './chaos';
import { faultScript, prng } from './faults';
import {
  completionTime,
  conversationEvents,
  describeHistory,
  hasFailedWorkflowTask,
  type HistoryEvent,
  stuckBecause,
  toolCallsScheduledTwice,
} from './histories';
import { type Histogram, mergeHistograms, parseHistogram, quantileUpperBound } from './prometheus-histogram';
import {
  CAUSES,
  describeExit,
  describeVerdict,
  figureRows,
  isWorkerCrash,
  printFailures,
  printTable,
  type SoakFigures,
  soakVerdict,
  type WorkerExit,
} from './report';
import { newReaderStats, scenarioPicker, type Scenario, type Verdict } from './scenarios';
import { type ExecutionLine, judgeToolCall, type RerunCause, type ToolCallVerdict } from './tool-executions';

export interface SoakWorker {
  process: WorkerProcess;
  /** Its Prometheus endpoint, if it serves one (read before it is killed, and at the end). */
  metricsUrl?: string;
}

export interface SoakEnvironment {
  address: string;
  namespace: string;
  taskQueue: string;
  mock: MessagesApi;
  /** Starts one worker process; `args.workerEnv` is passed in. */
  startWorker(env: Record<string, string>): Promise<SoakWorker>;
  /** SIGKILLs the Temporal server and starts it again on the same data (resolves once it answers). */
  killServer?: () => Promise<void>;
  /** The tools' execution log, when the workers write one (the rig worker does, the production entry point not). */
  executionLog?: string;
  /** Everything the workers printed (for completions the server refused). */
  workerLog?: string;
  dataConverter?: DataConverter;
  log(line: string): void;
}

export interface SoakResult {
  figures: SoakFigures;
  ok: boolean;
}

/** Client errors that are answers, not the server being away. */
const FINAL_CODES = new Set(['invalid_options', 'invalid_message', 'rejected', 'turn_failed', 'conversation_failed']);

async function inBatches<T>(items: readonly T[], size: number, each: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(size, items.length) }, async () => {
      while (next < items.length) await each(items[next++]!);
    }),
  );
}

function readExecutionLog(file: string | undefined): ExecutionLine[] {
  if (!file || !fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ExecutionLine);
}

export async function runSoak(args: SoakArgs, env: SoakEnvironment): Promise<SoakResult> {
  const { log, mock } = env;
  const connection = await Connection.connect({ address: env.address });
  const client = new Client({
    connection,
    namespace: env.namespace,
    ...(env.dataConverter && { dataConverter: env.dataConverter }),
  });
  const conversations = new ConversationClient({ client, taskQueue: env.taskQueue });
  const workers: (SoakWorker | undefined)[] = [];
  const killedAt = new Map<number, number>();
  const completionLatencies: Histogram[] = [];
  let workerStarts = 0;
  let serverDown = false;
  /** Pids the soak itself kills or stops: any other exit of a worker is a crash. */
  const askedToExit = new Set<number>();
  const crashes: (WorkerExit & { at: number; tail: string })[] = [];
  let stopping = false;
  const t0 = Date.now();

  const readCompletionLatency = async (worker: SoakWorker): Promise<void> => {
    const text =
      worker.metricsUrl &&
      (await fetch(worker.metricsUrl, { signal: AbortSignal.timeout(2000) }).then(
        (r) => r.text(),
        () => undefined,
      ));
    if (text)
      completionLatencies.push(
        parseHistogram(text, 'temporal_request_latency', { operation: 'RespondActivityTaskCompleted' }),
      );
  };
  const startWorker = async (): Promise<SoakWorker> => {
    for (;;) {
      try {
        workerStarts++;
        return await env.startWorker(args.workerEnv);
      } catch (error) {
        log(`a worker did not start (${String(error).split('\n')[0]}); trying again`);
        await sleep(1000);
      }
    }
  };
  /** Starts the worker of slot `index`, and watches it: one that exits unasked is a crash, replaced at once. */
  const startWorkerIn = async (index: number): Promise<SoakWorker> => {
    const worker = await startWorker();
    workers[index] = worker;
    void worker.process.exited.then(async ({ code, signal }) => {
      const exit: WorkerExit = { pid: worker.process.pid, code, signal, asked: askedToExit.has(worker.process.pid) };
      if (!isWorkerCrash(exit)) return;
      crashes.push({ ...exit, at: Date.now(), tail: worker.process.tail() });
      log(`worker ${exit.pid} exited unasked (${describeExit(exit)}): a crash; starting another`);
      if (stopping || workers[index] !== worker) return;
      workers[index] = undefined;
      await startWorkerIn(index);
    });
    return worker;
  };
  const killWorker = async (worker: SoakWorker): Promise<void> => {
    askedToExit.add(worker.process.pid);
    await worker.process.kill();
  };

  try {
    await Promise.all(Array.from({ length: args.workers }, (_, index) => startWorkerIn(index)));
    log(`workers ${workers.map((w) => w!.process.pid).join(', ')} on ${env.address}, task queue ${env.taskQueue}`);

    const random = prng(args.seed);
    const chaosRandom = prng(args.seed ^ 0x5bd1e995);
    const workerChaos = every(args.killEveryMs, chaosRandom, async () => {
      const index = Math.floor(chaosRandom() * workers.length);
      const victim = workers[index];
      if (!victim) return; // a crashed worker's replacement is starting
      workers[index] = undefined;
      await readCompletionLatency(victim);
      killedAt.set(victim.process.pid, Date.now());
      await killWorker(victim);
      log(`SIGKILLed worker ${victim.process.pid} (kill ${killedAt.size}); starting another`);
      await startWorkerIn(index);
    });
    const serverRandom = prng(args.seed ^ 0x27d4eb2d);
    const serverChaos = every(env.killServer ? args.serverKillEveryMs : 0, serverRandom, async () => {
      const at = Date.now();
      serverDown = true;
      try {
        await env.killServer!();
      } finally {
        serverDown = false;
      }
      log(
        `SIGKILLed the Temporal server and started it again on the same data (down ${((Date.now() - at) / 1000).toFixed(1)} s)`,
      );
    });

    const pick = scenarioPicker(args.mix, random);
    const scenarioRandom = prng(args.seed ^ 0x1b873593);
    const readers = newReaderStats();
    const faultCounts = new Map<string, number>();
    const outcomes = new Map<string, Verdict>();
    const scenarioOf = new Map<string, Scenario>();
    const ids: string[] = [];
    let startFailures = 0;
    const runStart = Date.now();
    let lastResultAt = runStart;
    const deadline = runStart + args.deadlineMs;
    const retrying = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
      for (;;) {
        try {
          return await call();
        } catch (error) {
          if (error instanceof ConversationError && FINAL_CODES.has(error.code)) throw error;
          if (Date.now() > deadline) throw error;
          await sleep(serverDown ? 2000 : 1000);
        }
      }
    };
    const drive = async (n: number): Promise<void> => {
      const scenario = pick(n);
      const id = `soak-${n}-${randomUUID().slice(0, 8)}`;
      const prompt = `${scenario.question} [soak ${n} ${randomUUID().slice(0, 8)}]`;
      mock.script(prompt, faultScript(random, args.faultRate, scenario.modelCalls, faultCounts));
      ids.push(id);
      scenarioOf.set(id, scenario);
      try {
        const verdict = await scenario.run({
          conversations,
          id,
          prompt,
          deadline,
          retrying,
          random: scenarioRandom,
          readers,
        });
        outcomes.set(id, verdict);
        lastResultAt = Date.now();
      } catch (error) {
        if (Date.now() > deadline) return; // neither completed nor failed in time: lost (or stuck, see below)
        const why =
          error instanceof ConversationError
            ? `${error.failureType ?? error.code}: ${error.message.slice(0, 120)}`
            : String(error).slice(0, 160);
        if (/could not start|start:/.test(why)) startFailures++;
        outcomes.set(id, { ok: false, why });
        lastResultAt = Date.now();
      }
    };

    const progress = setInterval(() => {
      const done = [...outcomes.values()];
      log(
        `started ${ids.length}/${args.conversations}, completed ${done.filter((o) => o.ok).length}, ` +
          `failed ${done.filter((o) => !o.ok).length}, worker kills ${killedAt.size}, worker crashes ${crashes.length}, ` +
          `server kills ${serverChaos.count}, ` +
          `model requests ${mock.requests.length}, load ${os.loadavg()[0]!.toFixed(2)}`,
      );
    }, 10_000);
    // Conversations are started `startConcurrency` at a time; each is then driven to its end in the background.
    const running: Promise<void>[] = [];
    let next = 0;
    let startedSoFar = 0;
    await Promise.all(
      Array.from({ length: Math.min(args.startConcurrency, args.conversations) }, async () => {
        while (next < args.conversations) {
          const n = next++;
          const driving = drive(n);
          running.push(driving);
          // Wait until it is started (its first state is readable) before starting another from this slot.
          await Promise.race([driving, waitUntilStarted(conversations, ids, n, deadline)]);
          startedSoFar++;
        }
      }),
    );
    log(`all ${startedSoFar} started in ${((Date.now() - runStart) / 1000).toFixed(1)} s`);
    await Promise.race([Promise.all(running), sleep(Math.max(0, deadline - Date.now()))]);
    clearInterval(progress);
    await Promise.all([workerChaos.stop(), serverChaos.stop()]);
    const elapsedMs = lastResultAt - runStart;

    // Open at the end: stuck unless it still moves.
    const unsettled = ids.filter((id) => !outcomes.has(id));
    const stuck = new Map<string, string>();
    await inBatches(unsettled, 20, async (id) => {
      const why = await stuckBecause(client, id, 15_000);
      if (why) stuck.set(id, why);
    });

    await Promise.all(workers.map((w) => w && readCompletionLatency(w)));
    stopping = true;
    await Promise.all(workers.map((w) => w && killWorker(w)));

    // What the server recorded, for every conversation: tool calls made twice, failed workflow tasks.
    const events = new Map<string, HistoryEvent[]>();
    await inBatches(ids, 16, async (id) => void events.set(id, await conversationEvents(client, id)));
    const madeTwice = ids.flatMap((id) => toolCallsScheduledTwice(events.get(id) ?? []).map((call) => `${id}/${call}`));
    const withFailedTask = ids.filter((id) => hasFailedWorkflowTask(events.get(id) ?? []));

    // What the tools' own log says (rig workers): runs after the server recorded the result.
    const lines = readExecutionLog(env.executionLog);
    const byKey = new Map<string, ExecutionLine[]>();
    for (const line of lines) byKey.set(line.idempotencyKey, [...(byKey.get(line.idempotencyKey) ?? []), line]);
    const verdicts: ToolCallVerdict[] = [];
    for (const [key, entries] of byKey) {
      if (entries.filter((e) => e.event === 'start').length < 2) continue;
      // `<workflowId>/<firstRunId>/<callId>`; the activity id is `tool-<callId>`.
      const [workflowId, , callId] = key.split('/');
      verdicts.push(
        judgeToolCall(key, entries, killedAt, completionTime(events.get(workflowId!) ?? [], `tool-${callId}`)),
      );
    }
    // A rejected approval must never have run its tool.
    for (const id of ids) {
      if (scenarioOf.get(id)?.name !== 'approval rejected') continue;
      if (lines.some((l) => l.idempotencyKey.startsWith(`${id}/`) && l.tool === 'buy_stock'))
        outcomes.set(id, { ok: false, why: 'buy_stock ran although its approval was rejected' });
    }
    const duplicates = verdicts.filter((v) => v.duplicates.length > 0);
    const causes = new Map<RerunCause, number>();
    for (const cause of verdicts.flatMap((v) => v.reruns)) causes.set(cause, (causes.get(cause) ?? 0) + 1);
    const unexplained = verdicts.filter((v) => v.reruns.includes('unexplained'));
    const finishedTwice = verdicts.filter((v) => v.reruns.includes('result-lost-with-worker'));

    const failures = ids
      .map((id) => ({ id, outcome: outcomes.get(id) }))
      .filter((o): o is { id: string; outcome: Extract<Verdict, { ok: false }> } => o.outcome?.ok === false)
      .map(({ id, outcome }) => ({ id, scenario: scenarioOf.get(id)!.name, why: outcome.why }));
    const lost = ids.filter((id) => !outcomes.has(id) && !stuck.has(id));
    const expected: Record<string, number> = {};
    for (const outcome of outcomes.values())
      if (outcome.ok) expected[outcome.expected] = (expected[outcome.expected] ?? 0) + 1;
    const figures: SoakFigures = {
      started: ids.length,
      completed: ids.filter((id) => outcomes.get(id)?.ok === true).length,
      expected,
      failed: failures.length,
      lost: lost.length,
      duplicates: duplicates.length + madeTwice.length,
      stuck: stuck.size,
      workerCrashes: crashes.length,
      unexplainedReruns: unexplained.length,
      streamGaps: readers.gaps,
      streamRepeats: readers.repeats,
      elapsedMs,
    };
    const completionLatency = mergeHistograms(completionLatencies);
    const bound = (q: number): string => {
      const ms = quantileUpperBound(completionLatency, q);
      return ms === undefined ? 'n/a' : ms === Infinity ? '> 10 s' : `≤ ${ms} ms`;
    };
    const refusedTokens =
      env.workerLog && fs.existsSync(env.workerLog)
        ? [
            ...fs
              .readFileSync(env.workerLog, 'utf8')
              .matchAll(/not found on completion[^\n]*?TaskToken\(([A-Za-z0-9+/=_-]+)\)/g),
          ]
        : [];
    const byScenario = new Map<string, { n: number; ok: number }>();
    for (const id of ids) {
      const name = scenarioOf.get(id)!.name;
      const entry = byScenario.get(name) ?? { n: 0, ok: 0 };
      entry.n++;
      if (outcomes.get(id)?.ok) entry.ok++;
      byScenario.set(name, entry);
    }
    const modelRequests = mock.requests.filter((r) => r.path === '/v1/messages').length;
    printTable(
      `Soak: ${args.conversations} conversations (${args.mix} load), fault rate ${args.faultRate}, worker kill every ` +
        `${args.killEveryMs ? `~${args.killEveryMs / 1000} s` : 'never'}, server kill every ` +
        `${env.killServer && args.serverKillEveryMs ? `~${args.serverKillEveryMs / 1000} s` : 'never'}, seed ${args.seed}` +
        (Object.keys(args.workerEnv).length
          ? `, workers with ${Object.entries(args.workerEnv)
              .map(([k, v]) => `${k}=${v}`)
              .join(' ')}`
          : ''),
      [
        ...figureRows(figures),
        ['', ''],
        ['by kind (completed/started)', [...byScenario].map(([name, { n, ok }]) => `${name} ${ok}/${n}`).join(', ')],
        ['not started (start failed)', startFailures],
        [
          'stream readers',
          `${readers.readers} readers, ${readers.events} events read, ${readers.disconnects} disconnects on purpose ` +
            `and ${readers.errors} errors, each followed by a re-attach from the last offset`,
        ],
        ['worker kills', killedAt.size],
        ['worker starts', workerStarts],
        ['server kills', serverChaos.count],
        ['faults scripted', [...faultCounts.entries()].map(([name, n]) => `${name} ×${n}`).join(', ') || 'none'],
        [
          'model requests',
          `${modelRequests} (${(modelRequests / Math.max(1, ids.length)).toFixed(2)} per conversation)`,
        ],
        ['conversations with a failed workflow task', withFailedTask.length],
        ['tool calls (execution log)', env.executionLog ? byKey.size : 'no log (production entry point)'],
        [
          'tool calls run more than once',
          `${verdicts.length} (same idempotency key each time; at most ${Math.max(0, ...verdicts.map((v) => v.executions.length))} runs of one call)`,
        ],
        ...[...causes.entries()].map(([cause, n]): [string, string] => [`  re-runs: ${CAUSES[cause]}`, String(n)]),
        [
          'completion acknowledged',
          `p50 ${bound(0.5)}, p90 ${bound(0.9)}, p99 ${bound(0.99)} (RespondActivityTaskCompleted round trip, ${completionLatency.count} completions)`,
        ],
        ['completions refused', `${refusedTokens.length} (a live worker finished an attempt the server had timed out)`],
      ],
    );
    printFailures(failures);
    for (const { id } of failures.slice(0, 3)) {
      console.log(`  ${id}:`);
      for (const line of describeHistory(events.get(id) ?? []).slice(-25)) console.log(`    ${line}`);
    }
    if (lost.length > 0)
      console.log(`\nLost (not finished by the deadline, still moving; first 10): ${lost.slice(0, 10).join(', ')}`);
    for (const [id, why] of [...stuck].slice(0, 5)) {
      console.log(`\nStuck: ${id} (${scenarioOf.get(id)!.name}): ${why}`);
      for (const line of describeHistory(events.get(id) ?? [])) console.log(`    ${line}`);
    }
    if (withFailedTask.length > 0) {
      const id = withFailedTask[0]!;
      console.log(`\nA failed workflow task (${withFailedTask.length} conversations; first ${id}):`);
      for (const line of describeHistory(events.get(id) ?? [])
        .filter((l) => /WORKFLOW_TASK_FAILED/.test(l))
        .slice(0, 5))
        console.log(`    ${line}`);
    }
    if (madeTwice.length > 0)
      console.log(`\nTool calls scheduled twice (first 10): ${madeTwice.slice(0, 10).join(', ')}`);
    if (duplicates.length > 0)
      console.log(
        `\nDuplicates (first 10):\n${duplicates
          .slice(0, 10)
          .map((v) => describeVerdict(v, killedAt))
          .join('\n')}`,
      );
    if (unexplained.length > 0)
      console.log(
        `\nRe-runs without a cause (first 10):\n${unexplained
          .slice(0, 10)
          .map((v) => describeVerdict(v, killedAt))
          .join('\n')}`,
      );
    if (finishedTwice.length > 0)
      console.log(
        `\nFinished twice, at-least-once (first 5):\n${finishedTwice
          .slice(0, 5)
          .map((v) => describeVerdict(v, killedAt))
          .join('\n')}`,
      );
    for (const crash of crashes.slice(0, 3)) {
      console.log(
        `\nWorker crash: ${crash.pid} at +${((crash.at - t0) / 1000).toFixed(0)} s, ${describeExit(crash)}; its last lines:`,
      );
      for (const line of crash.tail.split('\n').slice(-15)) console.log(`    ${line}`);
    }
    const { ok, problems } = soakVerdict(figures);
    console.log(
      `\n${ok ? 'PASS' : `FAIL (${problems.join(', ')})`}: ${figures.lost} lost, ${figures.duplicates} duplicates, ` +
        `${figures.stuck} stuck, ${figures.workerCrashes} worker crashes, ` +
        `${unexplained.length} re-runs without a cause, ${figures.failed} failed ` +
        `(${verdicts.length} tool calls in flight at a kill or timeout ran again, ${finishedTwice.length} of them had finished)`,
    );
    return { figures, ok };
  } finally {
    stopping = true;
    await Promise.all(workers.map((w) => w && killWorker(w)));
    await connection.close().catch(() => undefined);
  }
}

/** Resolves once conversation `n` was handed to the server (its id is known and describe answers), or at the deadline. */
async function waitUntilStarted(conversations: ConversationClient, ids: string[], n: number, deadline: number) {
  const id = ids.find((x) => x.startsWith(`soak-${n}-`));
  while (id && Date.now() < deadline) {
    try {
      await conversations.handle(id).describe();
      return;
    } catch {
      await sleep(500);
    }
  }
}
