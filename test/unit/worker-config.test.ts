// The worker's configuration: defaults, and a clear message naming the variable when a value is wrong.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../workers/config';

test('defaults fill what is not set', () => {
  const config = loadConfig({ ANTHROPIC_BASE_URL: 'http://127.0.0.1:4010' });
  assert.equal(config.TEMPORAL_ADDRESS, 'localhost:7233');
  assert.equal(config.TEMPORAL_TASK_QUEUE, 'claude-conversations');
  assert.equal(config.WORKER_SHUTDOWN_GRACE_TIME, '30 seconds');
});

test('a bad value stops start-up with a message that names the variable', () => {
  assert.throws(
    () => loadConfig({ ANTHROPIC_BASE_URL: 'http://x', TEMPORAL_ADDRESS: 'no port here' }),
    /TEMPORAL_ADDRESS: must be host:port/,
  );
  assert.throws(() => loadConfig({ ANTHROPIC_BASE_URL: 'ftp://x' }), /ANTHROPIC_BASE_URL/);
  assert.throws(
    () => loadConfig({ ANTHROPIC_BASE_URL: 'http://x', WORKER_SHUTDOWN_GRACE_TIME: 'soon' }),
    /WORKER_SHUTDOWN_GRACE_TIME/,
  );
  assert.throws(
    () => loadConfig({ ANTHROPIC_BASE_URL: 'http://x', WORKER_METRICS_ADDRESS: '9464' }),
    /WORKER_METRICS_ADDRESS: must be host:port/,
  );
});

test('neither an API key nor a local server: say how to get one', () => {
  assert.throws(() => loadConfig({}), /ANTHROPIC_API_KEY: set it to talk to Claude, or set ANTHROPIC_BASE_URL/);
});

test('MODEL_PRICES is JSON prices per model, checked at start-up', () => {
  const base = { ANTHROPIC_BASE_URL: 'http://localhost:4000' };
  const prices = { 'my-model': { input: 1, output: 5, cacheWrite: 1.25, cacheRead: 0.1 } };
  assert.deepEqual(loadConfig({ ...base, MODEL_PRICES: JSON.stringify(prices) }).MODEL_PRICES, prices);
  assert.throws(() => loadConfig({ ...base, MODEL_PRICES: '{not json' }), /MODEL_PRICES: must be JSON/);
  assert.throws(() => loadConfig({ ...base, MODEL_PRICES: '{"m":{"input":1}}' }), /MODEL_PRICES/);
});
