// The soak's command line (scripts/soak/main.ts), parsed with node:util parseArgs.
import { parseArgs as parseCommandLine } from 'node:util';
import { UsageError } from '../script-main';

export type LoadMix = 'mixed' | 'chain';

export interface SoakArgs {
  conversations: number;
  faultRate: number;
  /** Mean interval between worker kills, ms; 0 = never. */
  killEveryMs: number;
  /** Mean interval between kills of the Temporal server (SIGKILL, restart on the same data), ms; 0 = never. */
  serverKillEveryMs: number;
  deadlineMs: number;
  workers: number;
  /** How many conversations are being started at any one time. */
  startConcurrency: number;
  toolLatencyMs: number;
  seed: number;
  mix: LoadMix;
  /** More variables for every worker process (WORKER_MAX_CACHED_WORKFLOWS=1, …). */
  workerEnv: Record<string, string>;
  keepLogs: boolean;
}

export const USAGE = `npm run soak -- [options]
  --conversations N       concurrent conversations (default 200)
  --mix mixed|chain       mixed load (a fifth typed answers, a fifth budgets, a fifth disconnecting stream readers; the
                          rest multi-turn, approvals approved and rejected, continue-as-new mid-chain, legacy XML, tool
                          failures) or only the ticker → price chain (default mixed)
  --fault-rate F          chance that a model call meets a transient fault first (default 0.1); several in a row possible
  --kill-every D          mean time between SIGKILLs of a worker process, e.g. 20s, 1m, 500ms; "off" for none (default 20s)
  --server-kill-every D   mean time between SIGKILLs of the Temporal server, restarted on the same data (default off)
  --deadline D            how long to wait for results before counting the rest as lost (default 10m)
  --workers N             worker processes (default 2)
  --worker-env K=V        a variable for every worker, repeatable: e.g. WORKER_MAX_CACHED_WORKFLOWS=1 (replay from cold)
  --start-concurrency N   conversations being started at once (default 50)
  --tool-latency-ms MS    simulated latency of every tool call, so kills also land inside tools (default 250)
  --seed N                seed for the fault scripts and the mix (default: random, printed)
  --keep-logs             keep the execution log and worker output (their folder is printed)`;

export function parseDuration(text: string): number {
  if (text === 'off' || text === '0') return 0;
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/.exec(text.trim());
  if (!match) throw new UsageError(`not a duration: "${text}" (e.g. 500ms, 20s, 2m)`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  return Math.round(Number(match[1]) * unit);
}

const VALUE_OPTIONS = [
  'conversations',
  'mix',
  'fault-rate',
  'kill-every',
  'server-kill-every',
  'deadline',
  'workers',
  'start-concurrency',
  'tool-latency-ms',
  'seed',
] as const;

export function parseArgs(argv: string[]): SoakArgs | undefined {
  let values: Record<string, string | boolean | string[] | undefined>;
  try {
    ({ values } = parseCommandLine({
      args: argv,
      strict: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        'keep-logs': { type: 'boolean' },
        'worker-env': { type: 'string', multiple: true },
        ...Object.fromEntries(VALUE_OPTIONS.map((name) => [name, { type: 'string' as const }])),
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
    if (!Number.isInteger(n) || n < min)
      throw new UsageError(`--${name} must be an integer of at least ${min}, got "${value}"`);
    return n;
  };
  const faultRate = Number(text('fault-rate') ?? 0.1);
  if (!(faultRate >= 0 && faultRate < 1))
    throw new UsageError(`--fault-rate must be in [0, 1), got "${text('fault-rate')}"`);
  const mix = text('mix') ?? 'mixed';
  if (mix !== 'mixed' && mix !== 'chain') throw new UsageError(`--mix must be mixed or chain, got "${mix}"`);
  const workerEnv: Record<string, string> = {};
  for (const pair of (values['worker-env'] as string[] | undefined) ?? []) {
    const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(pair);
    if (!match) throw new UsageError(`--worker-env must be NAME=value, got "${pair}"`);
    workerEnv[match[1]!] = match[2]!;
  }
  return {
    conversations: integer('conversations', 200, 1),
    faultRate,
    killEveryMs: parseDuration(text('kill-every') ?? '20s'),
    serverKillEveryMs: parseDuration(text('server-kill-every') ?? 'off'),
    deadlineMs: parseDuration(text('deadline') ?? '10m'),
    workers: integer('workers', 2, 1),
    startConcurrency: integer('start-concurrency', 50, 1),
    toolLatencyMs: integer('tool-latency-ms', 250, 0),
    seed: integer('seed', Math.floor(Math.random() * 2 ** 31), 1),
    mix,
    workerEnv,
    keepLogs: values['keep-logs'] === true,
  };
}
