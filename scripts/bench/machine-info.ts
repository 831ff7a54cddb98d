// The machine a bench ran on, as its results record it: the report prints it and the guard compares two runs by it.
import os from 'node:os';

export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  totalMemoryBytes: number;
  node: string;
  platform: string;
  loadAverageStart: number[];
  loadAverageEnd: number[];
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
