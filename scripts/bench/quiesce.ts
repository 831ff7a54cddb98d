// Between throughput runs the Temporal server still works off the previous run (terminations, timers, visibility):
// wait until its CPU use falls below a threshold (only measurable for a server this bench started), so each run
// starts from a quiet server. Gives up after `maxMs`.
import { cpuTimeMs } from './process-sampler';

export async function quiesce(
  pid: number | undefined,
  options: { maxMs?: number; busyFraction?: number; minMs?: number } = {},
): Promise<number> {
  const started = performance.now();
  const maxMs = options.maxMs ?? 30_000;
  const busyFraction = options.busyFraction ?? 0.15;
  await new Promise((resolve) => setTimeout(resolve, options.minMs ?? 2_000));
  if (pid === undefined) return performance.now() - started;
  for (;;) {
    const cpu0 = cpuTimeMs(pid);
    const t0 = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const cpu1 = cpuTimeMs(pid);
    if (cpu0 === undefined || cpu1 === undefined) break;
    if ((cpu1 - cpu0) / (performance.now() - t0) < busyFraction) break;
    if (performance.now() - started > maxMs) break;
  }
  return performance.now() - started;
}
