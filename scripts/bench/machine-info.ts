// The machine a bench ran on: its results record it, and the guard's baseline part of it (to judge time on the same one).
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
