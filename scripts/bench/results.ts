// The shape of results/bench-*.json: everything measured, plus enough about the run to compare two of them.
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import type { BenchArgs, Section } from './args';
import type { CostResult } from './cost';
import type { StreamingResult } from './streaming';
import type { GuardResult } from './guard';
import type { HistoryResult } from './history-growth';
import type { OverheadResult } from './overhead';
import type { SideBySideResult } from './side-by-side';
import type { TargetCheck } from './targets';
import type { ThroughputResult } from './throughput';

export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  totalMemoryBytes: number;
  node: string;
  platform: string;
  loadAverageStart: number[];
  loadAverageEnd: number[];
}

export interface BenchResults {
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  git: { commit: string; dirty: boolean } | undefined;
  args: Omit<BenchArgs, 'only'> & { only: Section[] };
  machine: MachineInfo;
  temporal: { address: string; namespace: string; startedByBench: boolean };
  overhead?: OverheadResult;
  throughput?: ThroughputResult;
  history?: HistoryResult;
  cost?: CostResult;
  streaming?: StreamingResult;
  sideBySide?: SideBySideResult;
  guard?: GuardResult;
  targets: TargetCheck[];
}

export function machineInfo(loadAverageStart: number[]): MachineInfo {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    totalMemoryBytes: os.totalmem(),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    loadAverageStart,
    loadAverageEnd: os.loadavg(),
  };
}

export function gitState(): BenchResults['git'] {
  try {
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    const dirty =
      execFileSync('git', ['status', '--porcelain'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim() !== '';
    return { commit, dirty };
  } catch {
    return undefined;
  }
}
