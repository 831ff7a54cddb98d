// The worker's configuration: defaults, and a clear message naming the variable when a value is wrong.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../workers/config';
import { loadModelPrices } from '../../workers/run-worker';

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

test('MODEL_PRICES_FILE adds prices from a file; MODEL_PRICES wins for a model both name', () => {
  const dir = mkdtempSync(join(tmpdir(), 'prices-'));
  const file = join(dir, 'prices.json');
  const a = { input: 1, output: 5, cacheWrite: 1.25, cacheRead: 0.1 };
  const b = { input: 2, output: 10, cacheWrite: 2.5, cacheRead: 0.2 };
  writeFileSync(file, JSON.stringify({ 'model-a': a, 'model-b': a }));
  const config = loadConfig({
    ANTHROPIC_BASE_URL: 'http://localhost:4000',
    MODEL_PRICES_FILE: file,
    MODEL_PRICES: JSON.stringify({ 'model-b': b }),
  });
  assert.deepEqual(loadModelPrices(config), { 'model-a': a, 'model-b': b });
  writeFileSync(file, JSON.stringify({ 'model-a': { input: 'free' } }));
  assert.throws(() => loadModelPrices(config), /MODEL_PRICES_FILE: prices\.model-a\.input|MODEL_PRICES_FILE: model-a/);
});

test('the live relay’s bounds: what waits for all its readers (MiB) and the feeds it keeps, whole numbers above 0', () => {
  const config = loadConfig({ ANTHROPIC_BASE_URL: 'http://x' });
  assert.equal(config.WORKER_LIVE_RELAY_MAX_BUFFERED_MB, 16);
  assert.equal(config.WORKER_LIVE_RELAY_MAX_FEEDS, 1024);
  const set = loadConfig({
    ANTHROPIC_BASE_URL: 'http://x',
    WORKER_LIVE_RELAY_MAX_BUFFERED_MB: '64',
    WORKER_LIVE_RELAY_MAX_FEEDS: '10',
  });
  assert.equal(set.WORKER_LIVE_RELAY_MAX_BUFFERED_MB, 64);
  assert.equal(set.WORKER_LIVE_RELAY_MAX_FEEDS, 10);
  for (const name of ['WORKER_LIVE_RELAY_MAX_BUFFERED_MB', 'WORKER_LIVE_RELAY_MAX_FEEDS']) {
    for (const value of ['0', '-1', '1.5', 'lots', '1e9']) {
      assert.throws(() => loadConfig({ ANTHROPIC_BASE_URL: 'http://x', [name]: value }), new RegExp(name), value);
    }
  }
});

test('Worker Deployments: a deployment name and a build id, both or neither; pinned unless asked otherwise', () => {
  const base = { ANTHROPIC_BASE_URL: 'http://x' };
  const off = loadConfig(base);
  assert.equal(off.TEMPORAL_DEPLOYMENT_NAME, undefined, 'off when unset');
  const on = loadConfig({ ...base, TEMPORAL_DEPLOYMENT_NAME: 'conversations', TEMPORAL_BUILD_ID: 'build-42' });
  assert.equal(on.TEMPORAL_BUILD_ID, 'build-42');
  assert.equal(on.TEMPORAL_VERSIONING_BEHAVIOR, 'pinned');
  assert.throws(
    () => loadConfig({ ...base, TEMPORAL_DEPLOYMENT_NAME: 'conversations' }),
    /TEMPORAL_DEPLOYMENT_NAME, TEMPORAL_BUILD_ID: set both/,
  );
  assert.throws(() => loadConfig({ ...base, TEMPORAL_BUILD_ID: 'build-42' }), /set both/);
  assert.throws(
    () => loadConfig({ ...base, TEMPORAL_VERSIONING_BEHAVIOR: 'sometimes' }),
    /TEMPORAL_VERSIONING_BEHAVIOR/,
  );
});
