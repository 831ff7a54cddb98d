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
// and for each what the table shows, runs against Temporal's continue-as-new suggestion (4 MB or 4,096 events).
// Writes results/long-chain-<time>.json. Not part of `npm test`.
import type { ConversationOptionsInput } from '../../common/options';
import type { TurnResult } from '../../common/conversation-types';
import type { MessagesApi } from '../../testing/messages-api/types';
import { runMain } from '../script-main';
import { Flags } from './args';
import { type BenchContext, progressLog, terminateAll, withBench, writeResults } from './context';
import { firstUserText } from '../../testing/messages-api/demo-model';
import { modelCallResults, runsOf } from './history';
import { scriptChain } from './chain-script';
import { runOne } from './load';
import { startOurs } from './systems';
import { printTables, type Table } from './table';

export const VARIANTS = ['off', 'compaction', 'clear-tool-uses', 'orchestrator'] as const;
export type Variant = (typeof VARIANTS)[number];

/** Temporal suggests continue-as-new past either (its defaults). */
const SUGGESTED_HISTORY_BYTES = 4 * 1024 * 1024;
export const SUGGESTED_HISTORY_EVENTS = 4_096;

interface LongChainOptions {
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
  return {
    mode: variant === 'orchestrator' ? 'compaction' : variant,
    compaction: { by: variant === 'orchestrator' ? 'orchestrator' : 'api', triggerTokens: trigger },
    clearToolUses: { triggerTokens: trigger },
  };
}

/** Runs each variant's chain to its end on a worker process of ours whose tool outputs are padded. */
async function runLongChain(ctx: BenchContext, options: LongChainOptions): Promise<VariantResult[]> {
  const { client, mock, log } = ctx;
  const env = { TOOL_OUTPUT_CHARS: String(options.outputChars) };
  const ours = await startOurs(ctx, 'long-chain', { env, turnTimeoutMs: 3_600_000 });
  const results: VariantResult[] = [];
  try {
    for (const variant of options.variants) {
      log(`${variant}: ${options.steps} steps, outputs of ${options.outputChars} characters`);
      ours.send = {
        continueAsNewAfterModelCalls: options.continueAsNewAfter,
        contextManagement: contextManagementOf(variant, options.triggerTokens),
      };
      let tally: RequestTally | undefined;
      const { run, conversation, reply } = await runOne(ctx, ours, {
        steps: options.steps,
        label: `long-${variant}`,
        deadlineMs: 3_600_000,
        historySample: 0,
        endOpen: false,
        script: (_, label) => (tally = new RequestTally(mock, scriptChain(mock, options.steps, label))).prompt,
      }).finally(() => tally?.stop());
      const { id } = conversation;
      const { status, text } = reply as TurnResult;
      const state = await ours.conversations.getState(id);
      const runs = await runsOf(client, id, 10_000);
      // What the model read on each call: the calls' own accounts, in the histories.
      const peakRead = Math.max(0, ...modelCallResults(client, runs).map((r) => r.context?.inputTokens ?? 0));
      results.push({
        variant,
        status,
        text,
        toolCalls: state.toolCalls,
        modelCalls: state.modelCalls,
        requests: tally!.requests,
        summaryCalls: tally!.summaryCalls,
        compactions: state.context.compactions,
        clearedToolUses: state.context.clearedToolUses,
        peakInputTokensSent: state.context.peakInputTokens,
        peakInputTokensRead: peakRead,
        largestRequestBytes: tally!.largestBytes,
        runs: runs.length,
        historyBytes: runs.reduce((sum, r) => sum + r.historySize, 0),
        historyEvents: runs.reduce((sum, r) => sum + r.historyLength, 0),
        largestRunBytes: Math.max(...runs.map((r) => r.historySize)),
        largestRunEvents: Math.max(...runs.map((r) => r.historyLength)),
        wallMs: run.wallMs,
      });
      await terminateAll(client, [id]);
      log(`${variant}: ${status} after ${state.toolCalls} tool calls in ${(run.wallMs / 1000).toFixed(1)} s`);
    }
  } finally {
    await ours.stop();
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
    readonly prompt: string,
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

export function longChainTable(options: LongChainOptions, results: readonly VariantResult[]): Table {
  const underSuggestion = results.every(
    (r) => r.largestRunBytes < SUGGESTED_HISTORY_BYTES && r.largestRunEvents < SUGGESTED_HISTORY_EVENTS,
  );
  return {
    title:
      `A ${options.steps}-step chain, tool outputs of ${options.outputChars} characters, context window ` +
      `${options.windowTokens} tokens, trigger ${options.triggerTokens}, continue-as-new every ${options.continueAsNewAfter} calls`,
    headers: [
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
    rows: results.map((r) => [
      r.variant,
      r.status,
      String(r.toolCalls),
      `${r.modelCalls}${r.summaryCalls ? ` + ${r.summaryCalls}` : ''}`,
      ...[r.compactions, r.clearedToolUses, r.peakInputTokensSent, r.peakInputTokensRead].map(String),
      kib(r.largestRequestBytes),
      String(r.runs),
      kib(r.historyBytes),
      String(r.historyEvents),
      kib(r.largestRunBytes),
      String(r.largestRunEvents),
      `${(r.wallMs / 1000).toFixed(1)} s`,
    ]),
    notes: [
      `Every run under Temporal's continue-as-new suggestion (4 MB, 4,096 events): ${underSuggestion ? 'yes' : 'NO'}`,
    ],
  };
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
  const flags = Flags.read(argv, HELP);
  if (!flags) return undefined;
  return {
    steps: flags.int('steps', DEFAULT_OPTIONS.steps),
    outputChars: flags.int('output-chars', DEFAULT_OPTIONS.outputChars),
    windowTokens: flags.int('window', DEFAULT_OPTIONS.windowTokens),
    triggerTokens: flags.int('trigger', DEFAULT_OPTIONS.triggerTokens),
    continueAsNewAfter: flags.int('continue-as-new', DEFAULT_OPTIONS.continueAsNewAfter),
    variants: flags.names('variants', VARIANTS),
    outDir: flags.string('out', 'results'),
  };
}

async function main(): Promise<number> {
  const options = parseLongChainArgs(process.argv.slice(2));
  if (!options) return 0;
  const started = new Date();
  const log = progressLog('long-chain', started.getTime());
  const messagesApi = { contextWindowTokens: options.windowTokens };
  const results = await withBench({ log, messagesApi }, (ctx) => runLongChain(ctx, options));
  printTables([longChainTable(options, results)]);
  const { outDir, ...ran } = options;
  const json = JSON.stringify({ startedAt: started.toISOString(), options: ran, results }, null, 1);
  process.stdout.write(`\nWrote ${await writeResults(outDir, 'long-chain', started, { json })}.\n`);
  return 0;
}

if (require.main === module) runMain(main);
