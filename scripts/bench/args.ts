// The bench's command line. Every size has a default that keeps `npm run bench` under ten minutes on two cores.
//
//   npm run bench -- --only overhead,history --conversations 10,100 --steps 5 --latency 1000
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
  --budget S               the whole bench should take about S seconds (default 570): throughput runs share
                           what the other sections left, so a loaded machine cuts them short rather than overrun
  --out DIR                where JSON and HTML go (default results)
  --profile DIR            worker processes write CPU profiles there (node --cpu-prof); then
                           npx tsx scripts/bench/profile-summary.ts DIR

Environment: TEMPORAL_ADDRESS (reuse a running server), WORKER_MAX_CONCURRENT_ACTIVITIES,
WORKER_MAX_CONCURRENT_WORKFLOW_TASKS, WORKER_MAX_CACHED_WORKFLOWS (passed to both worker processes).`;

function positiveInts(flag: string, value: string, allowZero = false): number[] {
  const items = value
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  const numbers = items.map(Number);
  if (items.length === 0 || numbers.some((n) => !Number.isInteger(n) || n < (allowZero ? 0 : 1))) {
    throw new UsageError(
      `${flag} takes ${allowZero ? 'non-negative' : 'positive'} integers separated by commas, got "${value}"`,
    );
  }
  return numbers;
}

function one(flag: string, value: string, allowZero = false): number {
  const numbers = positiveInts(flag, value, allowZero);
  if (numbers.length !== 1) throw new UsageError(`${flag} takes one number, got "${value}"`);
  return numbers[0]!;
}

/** Returns undefined after printing help for --help. */
export function parseArgs(argv: readonly string[]): BenchArgs | undefined {
  const args: BenchArgs = {
    only: new Set(SECTIONS),
    conversations: [10, 100, 1000],
    steps: 5,
    latencyMs: 1000,
    overheadLatencies: [0, 1000],
    historySteps: [10, 100, 500],
    costSteps: 20,
    peerConversations: 20,
    peerSteps: [1, 8, 32],
    rounds: 2,
    updateBaseline: false,
    ceiling: true,
    runTimeoutMs: 240_000,
    budgetMs: 570_000,
    outDir: 'results',
  };
  for (let i = 0; i < argv.length; i++) {
    const raw = argv[i]!;
    const [flag, inline] = raw.includes('=')
      ? [raw.slice(0, raw.indexOf('=')), raw.slice(raw.indexOf('=') + 1)]
      : [raw, undefined];
    const value = (): string => {
      if (inline !== undefined) return inline;
      const next = argv[++i];
      if (next === undefined) throw new UsageError(`${flag} needs a value`);
      return next;
    };
    switch (flag) {
      case '--help':
      case '-h':
        console.log(HELP);
        return undefined;
      case '--only': {
        const names = value()
          .split(',')
          .map((name) => name.trim())
          .filter(Boolean);
        const unknown = names.filter((name) => !(SECTIONS as readonly string[]).includes(name));
        if (unknown.length > 0 || names.length === 0)
          throw new UsageError(`--only: unknown section(s) ${unknown.join(', ')}; choose from ${SECTIONS.join(', ')}`);
        args.only = new Set(names as Section[]);
        break;
      }
      case '--conversations':
        args.conversations = positiveInts(flag, value());
        break;
      case '--steps':
        args.steps = one(flag, value());
        break;
      case '--latency':
        args.latencyMs = one(flag, value(), true);
        break;
      case '--overhead-latencies':
        args.overheadLatencies = positiveInts(flag, value(), true);
        break;
      case '--overhead-reps':
        args.overheadReps = one(flag, value());
        break;
      case '--history-steps':
        args.historySteps = positiveInts(flag, value()).sort((a, b) => a - b);
        break;
      case '--cost-steps':
        args.costSteps = one(flag, value());
        break;
      case '--peer-conversations':
        args.peerConversations = one(flag, value());
        break;
      case '--peer-steps':
        args.peerSteps = positiveInts(flag, value()).sort((a, b) => a - b);
        break;
      case '--rounds':
        args.rounds = one(flag, value());
        break;
      case '--update-baseline':
        args.updateBaseline = true;
        break;
      case '--no-ceiling':
        args.ceiling = false;
        break;
      case '--run-timeout':
        args.runTimeoutMs = one(flag, value()) * 1000;
        break;
      case '--budget':
        args.budgetMs = one(flag, value()) * 1000;
        break;
      case '--out':
        args.outDir = value();
        break;
      case '--profile':
        args.profileDir = value();
        break;
      default:
        throw new UsageError(`Unknown option ${raw}.\n\n${HELP}`);
    }
  }
  // Memory is measured during the throughput runs; the baseline is the guard's.
  if (args.only.has('memory')) args.only.add('throughput');
  if (args.updateBaseline) args.only.add('guard');
  return args;
}
