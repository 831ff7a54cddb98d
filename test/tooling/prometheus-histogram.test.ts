import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mergeHistograms, parseHistogram, quantileUpperBound } from '../../scripts/soak/prometheus-histogram';

const series = (operation: string, queue: string, counts: number[], sum: number): string => {
  const bounds = ['10', '100', '1000', '+Inf'];
  const labels = `namespace="default",operation="${operation}",task_queue="${queue}"`;
  return [
    ...bounds.map((le, i) => `temporal_request_latency_bucket{${labels},le="${le}"} ${counts[i]}`),
    `temporal_request_latency_sum{${labels}} ${sum}`,
    `temporal_request_latency_count{${labels}} ${counts.at(-1)}`,
  ].join('\n');
};
const EXPOSITION = [
  '# HELP temporal_request_latency Histogram of client request latencies',
  '# TYPE temporal_request_latency histogram',
  series('RespondActivityTaskCompleted', 'a', [2, 8, 10, 10], 900),
  series('RespondActivityTaskCompleted', 'b', [0, 0, 5, 10], 30_000),
  series('PollActivityTaskQueue', 'a', [0, 0, 0, 7], 70_000),
  'temporal_request_latency_total_bogus{operation="RespondActivityTaskCompleted"} 99',
].join('\n');

test('one operation of a histogram is summed over its task queues, other operations left out', () => {
  const h = parseHistogram(EXPOSITION, 'temporal_request_latency', { operation: 'RespondActivityTaskCompleted' });
  assert.deepEqual(h.buckets, [
    [10, 2],
    [100, 8],
    [1000, 15],
    [Infinity, 20],
  ]);
  assert.equal(h.count, 20);
  assert.equal(h.sum, 30_900);
});

test('quantiles are read off the buckets as upper bounds', () => {
  const h = parseHistogram(EXPOSITION, 'temporal_request_latency', { operation: 'RespondActivityTaskCompleted' });
  assert.equal(quantileUpperBound(h, 0.1), 10);
  assert.equal(quantileUpperBound(h, 0.5), 1000);
  assert.equal(quantileUpperBound(h, 0.9), Infinity);
  assert.equal(quantileUpperBound(parseHistogram('', 'temporal_request_latency'), 0.5), undefined);
});

test('the histograms of several workers add up', () => {
  const one = parseHistogram(EXPOSITION, 'temporal_request_latency', {
    task_queue: 'a',
    operation: 'RespondActivityTaskCompleted',
  });
  const two = parseHistogram(EXPOSITION, 'temporal_request_latency', {
    task_queue: 'b',
    operation: 'RespondActivityTaskCompleted',
  });
  assert.deepEqual(
    mergeHistograms([one, two]),
    parseHistogram(EXPOSITION, 'temporal_request_latency', { operation: 'RespondActivityTaskCompleted' }),
  );
});
