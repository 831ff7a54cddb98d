// The bench's command line. Every size has a default that keeps `npm run bench` at about fifteen minutes on two cores.
//
//   npm run bench -- --only overhead,history --conversations 10,100 --steps 5 --latency 1000
import { parseArgs as parseNodeArgs } from 'node:util';
import { UsageError } from '../script-main';

export const SECTIONS = [
  'overhead',
  'throughput',
  'history',
  'memory',
  'cost',
  'streaming',
  'peer',
  'guard',
  'agents',
] as const;
export type Section = (typeof SECTIONS)[number];

export interface BenchArgs {
  only: Set<Section>;
  /** Throughput: concurrent conversations per run. */
  conversations: number[];
  /** Chain steps (one model call + one tool call) per conversation, for overhead and throughput. */
  steps: number;
  /** Model latency for throughput, ms. */
  latencyMs: number;
  /** Model latencies the overhead comparison runs at, ms. */
  overheadLatencies: number[];
  /** Measured chains per system and latency (after one warm-up); default: 10 below 100 ms, else 3. */
  overheadReps?: number;
  historySteps: number[];
  costSteps: number;
  /** Also run the bare Temporal chain: the floor of the overhead section, the ceiling of the throughput section. */
  ceiling: boolean;
  /** Give up on one throughput run after this long (steps done by then are counted from the histories). */
  runTimeoutMs: number;
  /** The whole bench should be done by then: throughput runs get what is left, shared equally. */
  budgetMs: number;
  outDir: string;
  /** Side by side (peer) and guard: concurrent conversations, chain lengths, rounds. */
  peerConversations: number;
  peerSteps: number[];
  rounds: number;
  /** Rewrite scripts/bench/baseline.json from this run's guard figures. */
  updateBaseline: boolean;
  /** Sub-agents: calls in the history-size conversation, runs of the timed comparisons, their model latency (ms). */
  agentsCalls: number;
  agentsRuns: number;
  agentsLatencyMs: number;
  /** Worker processes write V8 CPU profiles here (node --cpu-prof); summarize with scripts/bench/profile-summary.ts. */
  profileDir?: string;
}

const HELP = `npm run bench -- [options]

  --only LIST              sections to run: ${SECTIONS.join(',')} (default: all; memory is sampled during
                           throughput; peer: the side by side with @temporalio/ai-sdk and the floor; guard: fails the
                           bench when the cost per step grew past the baseline, from peer's runs or its own;
                           agents: what a sub-agent call costs the parent next to a plain tool call)
  --conversations LIST     concurrent conversations for throughput (default 10,100,1000)
  --steps N                chain steps per conversation, overhead and throughput (default 5)
  --latency MS             model latency for throughput (default 1000)
  --overhead-latencies L   model latencies for the overhead comparison (default 0,1000)
  --overhead-reps N        measured chains per system and latency (default 10 below 100 ms, 3 above)
  --history-steps LIST     chain lengths for history growth (default 10,100,500)
  --cost-steps N           chain length for the prompt-cache cost run (default 20)
  --peer-conversations N   concurrent conversations of the side by side and the guard (default 20)
  --peer-steps LIST        their chain lengths (default 1,8,32)
  --rounds N               their rounds, systems alternated (default 2)
  --agents-calls N         sub-agent calls in the agents section's history-size conversation (default 10)
  --agents-runs N          runs of its timed comparisons (default 5; the start overhead runs 2N+1)
  --agents-latency MS      model latency of its parallel vs sequential comparison (default 500)
  --update-baseline        rewrite scripts/bench/baseline.json from this run (the guard then passes)
  --no-ceiling             skip the bare-activity ceiling runs
  --run-timeout S          cut one throughput run after S seconds (default 240); steps done by then count
  --budget S               the whole bench should take about S seconds (default 900): throughput runs share
                           what the other sections left, so a loaded machine cuts them short rather than overrun
  --out DIR                where JSON and HTML go (default results)
  --profile DIR            worker processes write CPU profiles there (node --cpu-prof); then
                           npx tsx scripts/bench/profile-summary.ts DIR

Environment: TEMPORAL_ADDRESS (reuse a running server), WORKER_MAX_CONCURRENT_ACTIVITIES,
WORKER_MAX_CONCURRENT_WORKFLOW_TASKS, WORKER_MAX_CACHED_WORKFLOWS (passed to both worker processes).`;

/** A command's flags, read the way its help lists them: `  --name VALUE` takes a value, `  --name` alone is a switch. */
export class Flags {
  private constructor(private readonly values: Record<string, string | boolean | undefined>) {}

  /** undefined after printing the help (--help, -h); unknown flags are a UsageError that shows it. */
  static read(argv: readonly string[], help: string): Flags | undefined {
    const options = Object.fromEntries([
      ['help', { type: 'boolean' as const, short: 'h' }],
      ...[...help.matchAll(/^ {2}--([a-z-]+)( [A-Z])?/gm)].map((m) => [
        m[1]!,
        { type: m[2] ? ('string' as const) : ('boolean' as const) },
      ]),
    ]);
    let values: Flags['values'];
    try {
      values = parseNodeArgs({ args: [...argv], options, strict: true }).values as Flags['values'];
    } catch (err) {
      throw new UsageError(`${(err as Error).message}\n\n${help}`);
    }
    if (!values.help) return new Flags(values);
    console.log(help);
    return undefined;
  }

  /** Integers (≥ 1, or ≥ 0 with `zero`) separated by commas. */
  ints(flag: string, fallback: number[], { zero = false, single = false, max = Infinity } = {}): number[] {
    const value = this.values[flag];
    if (typeof value !== 'string') return fallback;
    const numbers = value
      .split(',')
      .filter((part) => part.trim())
      .map(Number);
    if (
      numbers.length === 0 ||
      numbers.some((n) => !Number.isInteger(n) || n < (zero ? 0 : 1) || n > max) ||
      (single && numbers.length !== 1)
    )
      throw new UsageError(
        `--${flag} takes ${single ? 'one' : ''} ${zero ? 'non-negative' : 'positive'} integer${single ? '' : 's separated by commas'}${max < Infinity ? ` up to ${max}` : ''}, got "${value}"`,
      );
    return numbers;
  }

  int(flag: string, fallback: number, options: { zero?: boolean; max?: number } = {}): number {
    return this.ints(flag, [fallback], { ...options, single: true })[0]!;
  }

  /** The flag's value; `fallback` when absent. */
  string(flag: string, fallback = ''): string {
    const value = this.values[flag];
    return typeof value === 'string' ? value : fallback;
  }

  on(flag: string): boolean {
    return this.values[flag] === true;
  }

  /** Names separated by commas, each one of `all` (default: all of them). */
  names<T extends string>(flag: string, all: readonly T[]): T[] {
    const value = this.values[flag];
    const names = typeof value === 'string' ? value.split(',').map((name) => name.trim()) : [...all];
    const unknown = names.filter((name) => name && !(all as readonly string[]).includes(name));
    if (unknown.length > 0 || !names.some(Boolean))
      throw new UsageError(`--${flag}: unknown ${unknown.join(', ')}; choose from ${all.join(', ')}`);
    return names.filter(Boolean) as T[];
  }
}

/** Returns undefined after printing help for --help. */
export function parseArgs(argv: readonly string[]): BenchArgs | undefined {
  const flags = Flags.read(argv, HELP);
  if (!flags) return undefined;
  const args: BenchArgs = {
    only: new Set(flags.names('only', SECTIONS)),
    conversations: flags.ints('conversations', [10, 100, 1000]),
    steps: flags.int('steps', 5),
    latencyMs: flags.int('latency', 1000, { zero: true }),
    overheadLatencies: flags.ints('overhead-latencies', [0, 1000], { zero: true }),
    ...(flags.string('overhead-reps') && { overheadReps: flags.int('overhead-reps', 0) }),
    historySteps: flags.ints('history-steps', [10, 100, 500]).sort((a, b) => a - b),
    costSteps: flags.int('cost-steps', 20),
    peerConversations: flags.int('peer-conversations', 20),
    peerSteps: flags.ints('peer-steps', [1, 8, 32]).sort((a, b) => a - b),
    rounds: flags.int('rounds', 2),
    updateBaseline: flags.on('update-baseline'),
    agentsCalls: flags.int('agents-calls', 10, { max: 100 }),
    agentsRuns: flags.int('agents-runs', 5, { max: 50 }),
    agentsLatencyMs: flags.int('agents-latency', 500, { zero: true }),
    ceiling: !flags.on('no-ceiling'),
    runTimeoutMs: flags.int('run-timeout', 240) * 1000,
    budgetMs: flags.int('budget', 900) * 1000,
    outDir: flags.string('out', 'results'),
    ...(flags.string('profile') && { profileDir: flags.string('profile') }),
  };
  // Memory is measured during the throughput runs; the baseline is the guard's.
  if (args.only.has('memory')) args.only.add('throughput');
  if (args.updateBaseline) args.only.add('guard');
  return args;
}
