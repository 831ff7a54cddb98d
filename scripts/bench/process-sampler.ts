// Samples a process's resident memory and CPU time from /proc/<pid> (Linux): VmRSS every `everyMs`, VmHWM (the
// kernel's own peak) and utime+stime at start and stop. Elsewhere (no /proc) it reports nothing rather than failing.
import { readFileSync } from 'node:fs';

/** USER_HZ: the unit of utime/stime in /proc/<pid>/stat; 100 on every mainstream Linux build. */
const CLOCK_TICKS_PER_SECOND = 100;

export interface ProcessSample {
  /** ms since the sampler started. */
  t: number;
  rssBytes: number;
}

export interface ProcessUsage {
  samples: ProcessSample[];
  /** Largest sampled VmRSS. */
  peakRssBytes: number;
  /** VmHWM at stop: the peak since the process started (catches what falls between samples). */
  highWaterMarkBytes: number;
  /** CPU time (user + system) spent between start and stop. */
  cpuMs: number;
}

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
    // The command name (field 2) may contain spaces and parentheses: fields after the last ')' are fixed.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state); utime = field 14, stime = field 15.
    const ticks = Number(fields[11]) + Number(fields[12]);
    return (ticks * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** CPU time the whole machine spent busy (all cores: user, nice, system, irq, softirq, steal), in ms. */
export function machineBusyMs(): number | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, , , irq, softirq, steal] = fields;
    return (
      (((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) * 1000) /
      CLOCK_TICKS_PER_SECOND
    );
  } catch {
    return undefined;
  }
}

export function rssBytes(pid: number): number | undefined {
  return statusField(pid, 'VmRSS');
}

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
    const rss = rssBytes(this.pid);
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
      // The kernel folds per-thread RSS counters into VmHWM only now and then, so it can read a few pages below a
      // VmRSS sampled just before; the peak since start is at least every sample.
      highWaterMarkBytes: Math.max(statusField(this.pid, 'VmHWM') ?? 0, peakRssBytes),
      cpuMs: cpuNow !== undefined && this.cpuAtStart !== undefined ? cpuNow - this.cpuAtStart : Number.NaN,
    };
  }
}
