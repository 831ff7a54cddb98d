// What the load runner measures with: percentiles, a process's RSS and CPU time from /proc/<pid> (Linux; elsewhere
// nothing rather than a failure), the machine's busy time, waiting for a quiet server, and update calls that outlast
// their RPC deadline on an overloaded server.
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';

/** Linear interpolation between closest ranks (numpy's default): p50 of [1, 2, 3, 4] is 2.5. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const low = sorted[Math.floor(rank)]!;
  return low + (sorted[Math.ceil(rank)]! - low) * (rank - Math.floor(rank));
}

export type Summary = ReturnType<typeof summarize>;

export function summarize(values: readonly number[]) {
  const sum = values.reduce((a, b) => a + b, 0);
  return {
    n: values.length,
    min: values.length ? values.reduce((m, v) => Math.min(m, v), Infinity) : Number.NaN,
    p50: percentile(values, 50),
    p95: percentile(values, 95),
    max: values.length ? values.reduce((m, v) => Math.max(m, v), -Infinity) : Number.NaN,
    mean: values.length ? sum / values.length : Number.NaN,
  };
}

/** The mean of the finite values (NaN when there is none). */
export function mean(values: readonly number[]): number {
  const finite = values.filter(Number.isFinite);
  return finite.length ? finite.reduce((a, b) => a + b, 0) / finite.length : Number.NaN;
}

/** Successive differences: the durations between consecutive timestamps. */
export const gaps = (timestamps: readonly number[]): number[] => timestamps.slice(1).map((t, i) => t - timestamps[i]!);

export const ratio = (a: number, b: number): number => (b === 0 ? Number.NaN : a / b);

/** USER_HZ: the unit of utime/stime in /proc/<pid>/stat; 100 on every mainstream Linux build. */
const TICKS_PER_SECOND = 100;

function statusField(pid: number, field: string): number | undefined {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** utime + stime of a process (all its threads), in ms. */
export function cpuTimeMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may contain spaces and parentheses: fields after the last ')' are fixed (utime, stime: 14, 15).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** CPU time the whole machine spent busy (all cores: user, nice, system, irq, softirq, steal), in ms. */
export function machineBusyMs(): number | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const busy = [0, 1, 2, 5, 6, 7].reduce((sum, i) => sum + (fields[i] ?? 0), 0);
    return (busy * 1000) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

export interface ProcessSample {
  /** ms since the sampler started. */
  t: number;
  rssBytes: number;
}

interface ProcessUsage {
  samples: ProcessSample[];
  peakRssBytes: number;
  /** VmHWM at stop: the peak since the process started (catches what falls between samples). */
  highWaterMarkBytes: number;
  /** CPU time (user + system) spent between start and stop. */
  cpuMs: number;
}

/** VmRSS every `everyMs`, and CPU time between construction and stop(). */
export class ProcessSampler {
  private readonly samples: ProcessSample[] = [];
  private readonly started = performance.now();
  private readonly cpuAtStart: number | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pid: number,
    everyMs = 200,
  ) {
    this.cpuAtStart = cpuTimeMs(pid);
    this.sample();
    this.timer = setInterval(() => this.sample(), everyMs);
    this.timer.unref();
  }

  private sample(): void {
    const rss = statusField(this.pid, 'VmRSS');
    if (rss !== undefined) this.samples.push({ t: performance.now() - this.started, rssBytes: rss });
  }

  stop(): ProcessUsage {
    clearInterval(this.timer);
    this.sample();
    const cpuNow = cpuTimeMs(this.pid);
    const peakRssBytes = this.samples.reduce((peak, s) => Math.max(peak, s.rssBytes), 0);
    return {
      samples: this.samples,
      peakRssBytes,
      // The kernel folds per-thread RSS counters into VmHWM only now and then: it can read below a sampled VmRSS.
      highWaterMarkBytes: Math.max(statusField(this.pid, 'VmHWM') ?? 0, peakRssBytes),
      cpuMs: cpuNow !== undefined && this.cpuAtStart !== undefined ? cpuNow - this.cpuAtStart : Number.NaN,
    };
  }
}

/** Waits (2 s at least, 30 s at most) until the process uses under 15% of a core; returns how long that took. */
export async function quiesce(pid: number | undefined): Promise<number> {
  const started = performance.now();
  await sleep(2_000);
  while (pid !== undefined && performance.now() - started <= 30_000) {
    const cpu0 = cpuTimeMs(pid);
    const t0 = performance.now();
    await sleep(1_000);
    const cpu1 = cpuTimeMs(pid);
    if (cpu0 === undefined || cpu1 === undefined || (cpu1 - cpu0) / (performance.now() - t0) < 0.15) break;
  }
  return performance.now() - started;
}

function isRpcTimeout(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause)
    if (e instanceof WorkflowUpdateRPCTimeoutOrCancelledError || (e as { code?: unknown }).code === 4) return true; // 4: DEADLINE_EXCEEDED
  return false;
}

/**
 * On an overloaded server an update RPC (update-with-start, awaitTurn) can give up with DEADLINE_EXCEEDED while the
 * workflow goes on fine: `first` once, then `again` (which must not repeat side effects) until it answers, another
 * error happens, or `deadline` (performance.now()) passes.
 */
export async function patiently<T>(
  first: () => Promise<T>,
  again: () => Promise<T>,
  deadline: number,
  onTimeout: () => void,
): Promise<T> {
  for (let call = first; ; call = again) {
    try {
      return await call();
    } catch (err) {
      if (!isRpcTimeout(err)) throw err;
      onTimeout();
      if (performance.now() > deadline) throw new Error('the run deadline passed while waiting');
    }
  }
}
