// WORKER_MAX_MODEL_REPLY_BYTES, the largest model reply a worker returns (activities/reply-size-limit.ts): anything
// but a whole number of bytes between 10,000 and 2,000,000 stops the worker at start-up with a message naming the
// variable, never its value — above 2,000,000 a result would meet Temporal's own 2 MiB limit, which loses the usage.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_MAX_REPLY_BYTES } from '../../activities/reply-size-limit';
import { loadConfig } from '../../workers/config';

const base = { ANTHROPIC_BASE_URL: 'http://127.0.0.1:4010' };

test('unset or empty: the default, under the 2 MiB payload limit', () => {
  assert.equal(loadConfig(base).WORKER_MAX_MODEL_REPLY_BYTES, DEFAULT_MAX_REPLY_BYTES);
  assert.equal(loadConfig({ ...base, WORKER_MAX_MODEL_REPLY_BYTES: '' }).WORKER_MAX_MODEL_REPLY_BYTES, 1_500_000);
  assert.ok(DEFAULT_MAX_REPLY_BYTES < 2 * 2 ** 20);
});

test('a whole number of bytes within the range is taken', () => {
  for (const [text, bytes] of [
    ['10000', 10_000],
    ['2000000', 2_000_000],
    [' 750000 ', 750_000],
  ] as const) {
    assert.equal(loadConfig({ ...base, WORKER_MAX_MODEL_REPLY_BYTES: text }).WORKER_MAX_MODEL_REPLY_BYTES, bytes);
  }
});

test('anything else stops start-up naming the variable, not the value', () => {
  for (const text of ['0', '-1', '9999', '2000001', '2097152', '1e400', '1.5', 'lots', '1 MB', '  ']) {
    assert.throws(
      () => loadConfig({ ...base, WORKER_MAX_MODEL_REPLY_BYTES: text }),
      (err: Error) => {
        assert.match(err.message, /WORKER_MAX_MODEL_REPLY_BYTES: /);
        if (text.trim().length > 1) assert.ok(!err.message.includes(text.trim()), `the value ${text} is not echoed`);
        return true;
      },
      text,
    );
  }
  assert.throws(
    () => loadConfig({ ...base, WORKER_MAX_MODEL_REPLY_BYTES: '3000000' }),
    /must stay under Temporal's 2 MiB payload limit/,
  );
});
