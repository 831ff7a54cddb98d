// Reading one histogram out of a Prometheus text exposition (a worker's /metrics), merging the histograms of several
// workers, and reading quantiles off the buckets. The soak uses it for the round trip of activity completions.

export interface Histogram {
  /** Cumulative counts by upper bound (ms), ascending; the last bound is Infinity. */
  buckets: [number, number][];
  count: number;
  sum: number;
}

const EMPTY: Histogram = { buckets: [], count: 0, sum: 0 };

/** `name` summed over every series whose labels include all of `labels` (e.g. one operation, any task queue). */
export function parseHistogram(text: string, name: string, labels: Record<string, string> = {}): Histogram {
  const byBound = new Map<number, number>();
  let count = 0;
  let sum = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)\{([^}]*)\}\s+(\S+)/.exec(line);
    if (!match || !match[1]!.startsWith(name)) continue;
    const series = Object.fromEntries([...match[2]!.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]));
    if (!Object.entries(labels).every(([key, value]) => series[key] === value)) continue;
    const value = Number(match[3]);
    const suffix = match[1]!.slice(name.length);
    if (suffix === '_bucket') {
      const bound = series.le === '+Inf' ? Infinity : Number(series.le);
      byBound.set(bound, (byBound.get(bound) ?? 0) + value);
    } else if (suffix === '_count') count += value;
    else if (suffix === '_sum') sum += value;
  }
  return { buckets: [...byBound.entries()].sort(([a], [b]) => a - b), count, sum };
}

export function mergeHistograms(histograms: readonly Histogram[]): Histogram {
  return histograms.reduce((total, next) => {
    const byBound = new Map(total.buckets);
    for (const [bound, n] of next.buckets) byBound.set(bound, (byBound.get(bound) ?? 0) + n);
    return {
      buckets: [...byBound.entries()].sort(([a], [b]) => a - b),
      count: total.count + next.count,
      sum: total.sum + next.sum,
    };
  }, EMPTY);
}

/** The smallest bucket bound at or under which a share `q` of the observations fall: "p90 ≤ 250 ms". */
export function quantileUpperBound(histogram: Histogram, q: number): number | undefined {
  if (histogram.count === 0) return undefined;
  return histogram.buckets.find(([, n]) => n >= q * histogram.count)?.[0];
}
