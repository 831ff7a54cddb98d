// The CLI as a script would use it: --json output, exit codes, and errors as JSON.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import { type Harness, startHarness, temporalAddress } from '../support/harness';

const run = promisify(execFile);
let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the CLI's JSON output, read field by field
async function cli(...args: string[]): Promise<{ code: number; json: any }> {
  const result = await run(
    process.execPath,
    ['--import', 'tsx', join(__dirname, '..', '..', 'client', 'cli.ts'), ...args, '--json'],
    {
      env: { ...process.env, TEMPORAL_ADDRESS: temporalAddress, TEMPORAL_TASK_QUEUE: h.taskQueue },
    },
  ).then(
    (r) => ({ code: 0, stdout: r.stdout }),
    (err: { code: number; stdout: string }) => ({ code: err.code, stdout: err.stdout }),
  );
  return { code: result.code, json: JSON.parse(result.stdout) };
}

test('start with a message, then send, transcript, state and end, all as JSON', async () => {
  const id = `cli-${Date.now()}`;
  const started = await cli(
    'start',
    '--id',
    id,
    '--tools',
    'get_ticker_symbol,get_current_stock_price',
    'What is the current stock price of General Motors?',
  );
  assert.equal(started.code, 0);
  assert.equal(started.json.id, id);
  assert.match(started.json.reply.text, /38\.50/);

  const sent = await cli('send', id, 'Thanks!');
  assert.equal(sent.json.turn, 2);
  assert.equal((await cli('transcript', id)).json.length, 8);
  assert.equal((await cli('state', id)).json.status, 'awaiting_user');
  assert.equal((await cli('end', id)).code, 0);
});

test('an error exits non-zero with a JSON error carrying its code', async () => {
  const missing = await cli('send', `missing-${Date.now()}`, 'Hello');
  assert.equal(missing.code, 1);
  assert.equal(missing.json.error.code, 'not_found');
  const unknown = await cli('start', '--tools', 'get_horoscope');
  assert.equal(unknown.json.error.code, 'invalid_options');
});

test('transcript ends with what the conversation cost; state has costUsd', async () => {
  const id = `cli-cost-${Date.now()}`;
  await cli('start', '--id', id, '--tools', 'get_ticker_symbol,get_current_stock_price', 'Price of General Motors?');
  const state = (await cli('state', id)).json;
  assert.ok(state.costUsd > 0, 'the default model has a published price');
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', join(__dirname, '..', '..', 'client', 'cli.ts'), 'transcript', id],
    { env: { ...process.env, TEMPORAL_ADDRESS: temporalAddress, TEMPORAL_TASK_QUEUE: h.taskQueue } },
  );
  assert.match(
    stdout.trimEnd().split('\n').at(-1)!,
    new RegExp(`^\\(cost \\$${state.costUsd.toFixed(4)} · \\d+ tokens\\)$`),
  );
});
