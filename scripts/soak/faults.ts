// The transient API faults the soak scripts into the local Messages API before model calls, from a seeded PRNG so a
// run can be reproduced with --seed.
import type { ScriptStep } from '../../testing/messages-api/types';

/** mulberry32: a small seeded PRNG. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const FAULTS: { name: string; step: ScriptStep }[] = [
  { name: '429', step: { fault: 'status', status: 429, headers: { 'retry-after': '1' } } },
  { name: '529', step: { fault: 'status', status: 529 } },
  { name: '500', step: { fault: 'status', status: 500 } },
  { name: 'connection-reset', step: { fault: 'connection-reset' } },
  { name: 'stream-error', step: { fault: 'stream-error', afterBlocks: 1 } },
];

/**
 * Before each of a conversation's model calls: faults while a coin with P(fault) = rate says so (at most 3), then the
 * demo model. Every answer is the demo model's, which reads the request: a call retried after a kill gets the same.
 */
export function faultScript(
  random: () => number,
  rate: number,
  modelCalls: number,
  counts: Map<string, number>,
): ScriptStep[] {
  const steps: ScriptStep[] = [];
  for (let call = 0; call < modelCalls; call++) {
    for (let n = 0; n < 3 && random() < rate; n++) {
      const fault = FAULTS[Math.floor(random() * FAULTS.length)]!;
      counts.set(fault.name, (counts.get(fault.name) ?? 0) + 1);
      steps.push(fault.step);
    }
    steps.push({ demo: true });
  }
  return steps;
}
