// Determinism across code changes: histories recorded by earlier versions of the workflow must replay against
// the current code without a determinism error. A fresh history of each kind is replayed too.
// Re-record the fixture (after an intended, versioned change) with RECORD_FIXTURES=1.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { type ReplayWorkerOptions, Worker } from '@temporalio/worker';
import { type Harness, startHarness, uniquePrompt } from '../support/harness';

const FIXTURE = join(__dirname, '..', 'fixtures', 'ticker-chain-history.json');
const replayOptions = (): ReplayWorkerOptions =>
  process.env.WORKFLOW_BUNDLE_PATH
    ? { workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH } }
    : { workflowsPath: require.resolve('../../workflows') };

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

test('the recorded ticker → price history replays against the current workflow code', async () => {
  if (process.env.RECORD_FIXTURES === '1') {
    const id = `replay-fixture-${Date.now()}`;
    await h.conversations.sendMessage(id, 'What is the current stock price of General Motors?', {
      tools: ['get_ticker_symbol', 'get_current_stock_price'],
      closeAfterFirstReply: true,
    });
    await h.conversations.waitForResult(id);
    // The CLI's JSON is the canonical export format (the same as the Web UI's download).
    const json = execFileSync(
      process.env.TEMPORAL_CLI_PATH ?? 'temporal',
      [
        'workflow',
        'show',
        '--workflow-id',
        id,
        '--address',
        process.env.TEMPORAL_ADDRESS ?? 'localhost:7233',
        '--output',
        'json',
      ],
      { encoding: 'utf8' },
    );
    writeFileSync(FIXTURE, json);
  }
  const history = historyFromJSON(JSON.parse(readFileSync(FIXTURE, 'utf8')));
  const types = (history.events ?? [])
    .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
    .filter(Boolean);
  assert.deepEqual(types, ['callModel', 'get_ticker_symbol', 'callModel', 'get_current_stock_price', 'callModel']);
  await Worker.runReplayHistory(replayOptions(), history);
});

test('a fresh multi-turn history with parallel calls and an approval replays without a determinism error', async () => {
  const prompt = uniquePrompt('Weather in Paris and Tokyo?');
  h.mock.script(prompt, [
    {
      reply: {
        content: [
          { type: 'tool_use', name: 'get_weather', input: { location: 'Paris' } },
          { type: 'tool_use', name: 'get_weather', input: { location: 'Tokyo' } },
        ],
        stop_reason: 'tool_use',
      },
    },
    { reply: { content: [{ type: 'text', text: 'Both are mild.' }], stop_reason: 'end_turn' } },
  ]);
  const id = `replay-fresh-${Date.now()}`;
  await h.conversations.sendMessage(id, prompt, { tools: ['get_weather'] });
  await h.conversations.sendMessage(id, 'Thanks!');
  await h.conversations.end(id);
  await h.conversations.waitForResult(id);
  await Worker.runReplayHistory(replayOptions(), await h.client.workflow.getHandle(id).fetchHistory());
});
