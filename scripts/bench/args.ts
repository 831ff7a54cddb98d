// The bench's command line. Every size has a default that keeps `npm run bench` at about fifteen minutes on two cores.
//
//   npm run bench -- --only overhead,history --conversations 10,100 --steps 5 --latency 1000
import { parseArgs as parseNodeArgs } from 'node:util';
import { UsageError } from '../script-main';

export const SECTIONS = ['overhead', 'throughput', 'history', 'memory', 'cost', 'streaming', 'peer', 'guard'] as const;
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
  /** Worker processes write V8 CPU profiles here (node --cpu-prof); summarize with scripts/bench/profile-summary.ts. */
  profileDir?: string;
}

const HELP = `npm run bench -- [options]

  --only LIST              sections to run: ${SECTIONS.join(',')} (default: all; memory is sampled during
                           throughput; peer: the side by side with @temporalio/ai-sdk and the floor; guard: fails the
                           bench when the cost per step grew past the baseline, from peer's runs or its own)
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

/** The flags of the help above: the booleans, and every other one taking a value. */
const BOOLEANS = ['help', 'update-baseline', 'no-ceiling'];
const OPTIONS = Object.fromEntries([
  ...BOOLEANS.map((name) => [name, { type: 'boolean' as const, ...(name === 'help' && { short: 'h' }) }]),
  ...[...HELP.matchAll(/^ {2}--([a-z-]+) [A-Z]/gm)].map((m) => [m[1]!, { type: 'string' as const }]),
]);

/** Integers (≥ 0 or ≥ 1) separated by commas; `single`: exactly one. */
export function ints(flag: string, value: string, { zero = false, single = false } = {}): number[] {
  const numbers = value
    .split(',')
    .filter((part) => part.trim())
    .map(Number);
  if (
    numbers.length === 0 ||
    numbers.some((n) => !Number.isInteger(n) || n < (zero ? 0 : 1)) ||
    (single && numbers.length !== 1)
  )
    throw new UsageError(
      `--${flag} takes ${single ? 'one' : ''} ${zero ? 'non-negative' : 'positive'} integer${single ? '' : 's separated by commas'}, got "${value}"`,
    );
  return numbers;
}

/** Returns undefined after printing help for --help. */
export function parseArgs(argv: readonly string[]): BenchArgs | undefined {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseNodeArgs({ args: [...argv], options: OPTIONS, strict: true }).values as typeof values;
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n\n${HELP}`);
  }
  if (values.help) {
    console.log(HELP);
    return undefined;
  }
  const list = (flag: string, fallback: number[], zero = false): number[] =>
    typeof values[flag] === 'string' ? ints(flag, values[flag], { zero }) : fallback;
  const one = (flag: string, fallback: number, zero = false): number =>
    typeof values[flag] === 'string' ? ints(flag, values[flag], { zero, single: true })[0]! : fallback;
  const only = typeof values.only === 'string' ? values.only.split(',').map((name) => name.trim()) : SECTIONS;
  const unknown = only.filter((name) => name && !(SECTIONS as readonly string[]).includes(name));
  if (unknown.length > 0 || !only.some(Boolean))
    throw new UsageError(`--only: unknown section(s) ${unknown.join(', ')}; choose from ${SECTIONS.join(', ')}`);
  const args: BenchArgs = {
    only: new Set(only.filter(Boolean) as Section[]),
    conversations: list('conversations', [10, 100, 1000]),
    steps: one('steps', 5),
    latencyMs: one('latency', 1000, true),
    overheadLatencies: list('overhead-latencies', [0, 1000], true),
    ...(values['overhead-reps'] !== undefined && { overheadReps: one('overhead-reps', 0) }),
    historySteps: list('history-steps', [10, 100, 500]).sort((a, b) => a - b),
    costSteps: one('cost-steps', 20),
    peerConversations: one('peer-conversations', 20),
    peerSteps: list('peer-steps', [1, 8, 32]).sort((a, b) => a - b),
    rounds: one('rounds', 2),
    updateBaseline: values['update-baseline'] === true,
    ceiling: values['no-ceiling'] !== true,
    runTimeoutMs: one('run-timeout', 240) * 1000,
    budgetMs: one('budget', 900) * 1000,
    outDir: typeof values.out === 'string' ? values.out : 'results',
    ...(typeof values.profile === 'string' && { profileDir: values.profile }),
  };
  // Memory is measured during the throughput runs; the baseline is the guard's.
  if (args.only.has('memory')) args.only.add('throughput');
  if (args.updateBaseline) args.only.add('guard');
  return args;
}
