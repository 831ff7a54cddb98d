// Summary statistics for the benchmark: percentiles by linear interpolation between closest ranks (the same rule
// as numpy's default), so p50 of [1, 2, 3, 4] is 2.5 and a single sample is its own p50 and p95.

export interface Summary {
  n: number;
  min: number;
  p50: number;
  p95: number;
  max: number;
  mean: number;
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  if (p < 0 || p > 100) throw new Error(`percentile: p must be within 0..100, got ${p}`);
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  const lowValue = sorted[low]!;
  return lowValue + (sorted[high]! - lowValue) * (rank - low);
}

export function summarize(values: readonly number[]): Summary {
  if (values.length === 0)
    return { n: 0, min: Number.NaN, p50: Number.NaN, p95: Number.NaN, max: Number.NaN, mean: Number.NaN };
  let min = Infinity;
  let max = -Infinity;
  let sum = 0;
  for (const value of values) {
    if (value < min) min = value;
    if (value > max) max = value;
    sum += value;
  }
  return {
    n: values.length,
    min,
    p50: percentile(values, 50),
    p95: percentile(values, 95),
    max,
    mean: sum / values.length,
  };
}

/** Successive differences: the durations between consecutive timestamps. */
export function gaps(timestamps: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = 1; i < timestamps.length; i++) out.push(timestamps[i]! - timestamps[i - 1]!);
  return out;
}

export function ratio(a: number, b: number): number {
  return b === 0 ? Number.NaN : a / b;
}
