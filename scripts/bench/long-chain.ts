// `npm run bench:long-chain`: a chain of tool calls far longer than the model's context window (the bench's scripted
// chain, 1,000 steps by default, every tool output padded to a few KB), against a real Temporal dev server
// (TEMPORAL_ADDRESS is reused when it answers) and the local Messages API server with a small context window. Once
// per way of managing the context:
//
//   off              nothing: the chain must end with context_window_exceeded
//   compaction       the API's compaction (compact_20260112)
//   clear-tool-uses  the API's context editing (clear_tool_uses_20250919)
//   orchestrator     the orchestrator's own summaries (a model call of its own, for an endpoint without compaction)
//
// and for each: how it ended, model calls (and summary calls), compactions, cleared tool uses, peak input tokens sent
// and read, runs (continue-as-new), history bytes and events in total and per run (against Temporal's continue-as-new
// suggestion: 4 MB or 4,096 events), the largest request, and wall time. Prints a table; writes
// results/long-chain-<time>.json. Not part of `npm test`.
//
//   npm run bench:long-chain -- --steps 1000 --output-chars 3000 --window 100000 --trigger 60000
import fsp from 'node:fs/promises';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { parseArgs as parseNodeArgs } from 'node:util';
import type { Client } from '@temporalio/client';
import { ConversationClient } from '../../client/conversation-client';
import type { ContextManagementOptions } from '../../common/context-options';
import type { ConversationOptionsInput } from '../../common/options';
import type { MessagesApi } from '../../testing/messages-api/types';
import { runMain, UsageError } from '../script-main';
import type { WorkerProcess } from '../worker-process';
import { parseArgs } from './args';
import { openBench, startBenchWorker, terminateAll } from './context';
import { firstUserText } from '../../testing/messages-api/demo-model';
import { CHAIN_TOOLS, scriptChain } from './chain-script';
import { modelCallResults, runsOf } from './history';
import { textTable } from './table';

const ROOT = path.resolve(__dirname, '..', '..');

export const VARIANTS = ['off', 'compaction', 'clear-tool-uses', 'orchestrator'] as const;
export type Variant = (typeof VARIANTS)[number];

/** Temporal suggests continue-as-new past either (its defaults). */
export const SUGGESTED_HISTORY_BYTES = 4 * 1024 * 1024;
export const SUGGESTED_HISTORY_EVENTS = 4_096;

export interface LongChainOptions {
  steps: number;
  outputChars: number;
  windowTokens: number;
  /** Where compaction, clearing and summaries start, in input tokens. */
  triggerTokens: number;
  variants: Variant[];
  /** Continue-as-new after this many model calls in a run (runs then stay under Temporal's suggestion). */
  continueAsNewAfter: number;
}

export interface VariantResult {
  variant: Variant;
  status: string;
  text: string;
  toolCalls: number;
  modelCalls: number;
  /** Requests the Messages API received (model calls, retries and summary calls). */
  requests: number;
  summaryCalls: number;
  compactions: number;
  clearedToolUses: number;
  /** The largest prompt sent (before the API's edits) and read (after them), in input tokens. */
  peakInputTokensSent: number;
  peakInputTokensRead: number;
  largestRequestBytes: number;
  runs: number;
  historyBytes: number;
  historyEvents: number;
  largestRunBytes: number;
  largestRunEvents: number;
  wallMs: number;
}

export const DEFAULT_OPTIONS: LongChainOptions = {
  steps: 1_000,
  outputChars: 3_000,
  windowTokens: 100_000,
  triggerTokens: 60_000,
  variants: [...VARIANTS],
  continueAsNewAfter: 300,
};

function contextManagementOf(variant: Variant, trigger: number): ConversationOptionsInput['contextManagement'] {
  const modes: Record<Variant, ContextManagementOptions['mode']> = {
    off: 'off',
    compaction: 'compaction',
    'clear-tool-uses': 'clear-tool-uses',
    orchestrator: 'compaction',
  };
  return {
    mode: modes[variant],
    compaction: { by: variant === 'orchestrator' ? 'orchestrator' : 'api', triggerTokens: trigger },
    clearToolUses: { triggerTokens: trigger },
  };
}

/** Runs each variant's chain to its end on a conversation worker that is already polling `conversations`' queue. */
export async function runLongChain(
  options: LongChainOptions,
  deps: { client: Client; conversations: ConversationClient; mock: MessagesApi; log: (line: string) => void },
): Promise<VariantResult[]> {
  const { client, conversations, mock, log } = deps;
  const results: VariantResult[] = [];
  const ids: string[] = [];
  try {
    for (const variant of options.variants) {
      log(`${variant}: ${options.steps} steps, outputs of ${options.outputChars} characters`);
      const prompt = scriptChain(mock, options.steps, `long-${variant}`);
      const id = `long-chain-${variant}-${randomUUID().slice(0, 8)}`;
      ids.push(id);
      const tally = new RequestTally(mock, prompt);
      const started = performance.now();
      const reply = await conversations
        .sendMessage(id, prompt, {
          start: {
            tools: CHAIN_TOOLS,
            limits: { maxModelCallsPerTurn: options.steps + 10, maxToolCallsPerTurn: options.steps + 10 },
            continueAsNewAfterModelCalls: options.continueAsNewAfter,
            contextManagement: contextManagementOf(variant, options.triggerTokens),
          },
          timeoutMs: 3_600_000,
        })
        .finally(() => tally.stop());
      const wallMs = performance.now() - started;
      const state = await conversations.getState(id);
      const runs = await runsOf(client, id, 10_000);
      // What the model read on each call: the calls' own accounts, in the histories.
      const peakRead = Math.max(0, ...modelCallResults(client, runs).map((r) => r.context?.inputTokens ?? 0));
      const result: VariantResult = {
        variant,
        status: reply.status,
        text: reply.text,
        toolCalls: state.toolCalls,
        modelCalls: state.modelCalls,
        requests: tally.requests,
        summaryCalls: tally.summaryCalls,
        compactions: state.context.compactions,
        clearedToolUses: state.context.clearedToolUses,
        peakInputTokensSent: state.context.peakInputTokens,
        peakInputTokensRead: peakRead,
        largestRequestBytes: tally.largestBytes,
        runs: runs.length,
        historyBytes: runs.reduce((sum, run) => sum + run.historySize, 0),
        historyEvents: runs.reduce((sum, run) => sum + run.historyLength, 0),
        largestRunBytes: Math.max(...runs.map((run) => run.historySize)),
        largestRunEvents: Math.max(...runs.map((run) => run.historyLength)),
        wallMs,
      };
      results.push(result);
      log(`${variant}: ${result.status} after ${result.toolCalls} tool calls in ${(wallMs / 1000).toFixed(1)} s`);
    }
  } finally {
    await terminateAll(client, ids);
  }
  return results;
}

/**
 * The requests of one conversation, counted as they are answered and then dropped from the server's record: a chain
 * that sends its whole history every call would otherwise keep gigabytes of request bodies alive.
 */
class RequestTally {
  requests = 0;
  summaryCalls = 0;
  largestBytes = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly mock: MessagesApi,
    private readonly prompt: string,
  ) {
    this.timer = setInterval(() => this.drain(), 250);
  }

  stop(): void {
    clearInterval(this.timer);
    this.drain();
  }

  private drain(): void {
    const pending = this.mock.requests.filter((request) => request.status === 0);
    for (const request of this.mock.requests) {
      if (request.status === 0 || request.path !== '/v1/messages') continue;
      if (!firstUserText(request.body).includes(this.prompt)) continue;
      this.requests++;
      this.largestBytes = Math.max(this.largestBytes, Number(request.headers['content-length'] ?? 0));
      if (JSON.stringify(request.body.messages.at(-1)).includes('Summarise the conversation above'))
        this.summaryCalls++;
    }
    this.mock.requests.length = 0;
    this.mock.requests.push(...pending);
  }
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;

export function longChainReport(options: LongChainOptions, results: readonly VariantResult[]): string {
  const rows = results.map((r) => [
    r.variant,
    r.status,
    String(r.toolCalls),
    `${r.modelCalls}${r.summaryCalls ? ` + ${r.summaryCalls}` : ''}`,
    String(r.compactions),
    String(r.clearedToolUses),
    String(r.peakInputTokensSent),
    String(r.peakInputTokensRead),
    kib(r.largestRequestBytes),
    String(r.runs),
    kib(r.historyBytes),
    String(r.historyEvents),
    kib(r.largestRunBytes),
    String(r.largestRunEvents),
    `${(r.wallMs / 1000).toFixed(1)} s`,
  ]);
  const underSuggestion = results.every(
    (r) => r.largestRunBytes < SUGGESTED_HISTORY_BYTES && r.largestRunEvents < SUGGESTED_HISTORY_EVENTS,
  );
  return [
    `A ${options.steps}-step chain, tool outputs of ${options.outputChars} characters, context window ` +
      `${options.windowTokens} tokens, trigger ${options.triggerTokens}, continue-as-new every ${options.continueAsNewAfter} calls`,
    '',
    textTable(
      [
        'context',
        'ended',
        'tools',
        'model calls',
        'compactions',
        'cleared',
        'peak sent',
        'peak read',
        'max request',
        'runs',
        'history',
        'events',
        'max run',
        'max run events',
        'wall',
      ],
      rows,
    ),
    '',
    `Every run under Temporal's continue-as-new suggestion (4 MB, 4,096 events): ${underSuggestion ? 'yes' : 'NO'}`,
  ].join('\n');
}

const HELP = `npm run bench:long-chain -- [options]

  --steps N              chain steps (default ${DEFAULT_OPTIONS.steps})
  --output-chars N       every tool output padded to N characters (default ${DEFAULT_OPTIONS.outputChars})
  --window N             the local Messages API's context window, in tokens (default ${DEFAULT_OPTIONS.windowTokens})
  --trigger N            compaction / clearing / summary trigger, in input tokens (default ${DEFAULT_OPTIONS.triggerTokens})
  --variants LIST        ${VARIANTS.join(',')} (default: all)
  --continue-as-new N    continue-as-new every N model calls (default ${DEFAULT_OPTIONS.continueAsNewAfter})
  --out DIR              where the JSON goes (default results)`;

export function parseLongChainArgs(argv: readonly string[]): (LongChainOptions & { outDir: string }) | undefined {
  const names = ['steps', 'output-chars', 'window', 'trigger', 'continue-as-new', 'variants', 'out'] as const;
  let values: Partial<Record<(typeof names)[number] | 'help', string | boolean>>;
  try {
    const options = Object.fromEntries(names.map((name) => [name, { type: 'string' as const }]));
    values = parseNodeArgs({ args: [...argv], options: { ...options, help: { type: 'boolean', short: 'h' } } }).values;
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n\n${HELP}`);
  }
  if (values.help) {
    console.log(HELP);
    return undefined;
  }
  const count = (flag: (typeof names)[number], fallback: number): number => {
    if (typeof values[flag] !== 'string') return fallback;
    const n = Number(values[flag]);
    if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${flag} takes a positive integer`);
    return n;
  };
  const variants =
    typeof values.variants === 'string' ? values.variants.split(',').map((name) => name.trim()) : VARIANTS;
  const unknown = variants.filter((name) => !(VARIANTS as readonly string[]).includes(name));
  if (unknown.length > 0)
    throw new UsageError(`--variants: unknown ${unknown.join(', ')}; choose from ${VARIANTS.join(', ')}`);
  return {
    steps: count('steps', DEFAULT_OPTIONS.steps),
    outputChars: count('output-chars', DEFAULT_OPTIONS.outputChars),
    windowTokens: count('window', DEFAULT_OPTIONS.windowTokens),
    triggerTokens: count('trigger', DEFAULT_OPTIONS.triggerTokens),
    continueAsNewAfter: count('continue-as-new', DEFAULT_OPTIONS.continueAsNewAfter),
    variants: [...variants] as Variant[],
    outDir: typeof values.out === 'string' ? values.out : 'results',
  };
}

async function main(): Promise<number> {
  const options = parseLongChainArgs(process.argv.slice(2));
  if (!options) return 0;
  const started = new Date();
  const log = (line: string): void =>
    void process.stderr.write(
      `[long-chain ${((Date.now() - started.getTime()) / 1000).toFixed(0).padStart(4)} s] ${line}\n`,
    );
  const { ctx, close } = await openBench(parseArgs([])!, {
    log,
    messagesApi: { contextWindowTokens: options.windowTokens },
  });
  let worker: WorkerProcess | undefined;
  try {
    const taskQueue = `long-chain-${randomUUID().slice(0, 8)}`;
    worker = await startBenchWorker(ctx, 'scripts/rig-worker.ts', taskQueue, {
      ANTHROPIC_BASE_URL: ctx.mock.url,
      WORKFLOW_BUNDLE_PATH: ctx.bundles.conversation,
      TOOL_OUTPUT_CHARS: String(options.outputChars),
    });
    const { client, mock } = ctx;
    const conversations = new ConversationClient({ client, taskQueue, turnTimeoutMs: 3_600_000 });
    const results = await runLongChain(options, { client, conversations, mock, log });
    const report = longChainReport(options, results);
    process.stdout.write(`${report}\n`);
    const outDir = path.resolve(ROOT, options.outDir);
    await fsp.mkdir(outDir, { recursive: true });
    const file = path.join(outDir, `long-chain-${started.toISOString().replace(/[:.]/g, '-')}.json`);
    const { outDir: _out, ...ran } = options;
    await fsp.writeFile(file, JSON.stringify({ startedAt: started.toISOString(), options: ran, results }, null, 1));
    process.stdout.write(`\nWrote ${path.relative(process.cwd(), file)}.\n`);
    return 0;
  } finally {
    await worker?.stop().catch(() => undefined);
    await close();
  }
}

if (require.main === module) runMain(main);
