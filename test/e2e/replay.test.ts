// Determinism across code changes: histories recorded by earlier versions of the workflow must replay against
// the current code without a determinism error. A fresh history of each kind is replayed too.
// Re-record the fixture (after an intended, versioned change) with RECORD_FIXTURES=1.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils';
import { type ReplayWorkerOptions, Worker } from '@temporalio/worker';
import { type Harness, startHarness, uniquePrompt } from '../support/harness';
import { REPLAY_SCENARIOS } from '../support/replay-scenarios';

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
      start: {
        tools: ['get_ticker_symbol', 'get_current_stock_price'],
        closeAfterFirstReply: true,
      },
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
  await h.conversations.sendMessage(id, prompt, { start: { tools: ['get_weather'] } });
  await h.conversations.sendMessage(id, 'Thanks!');
  await h.conversations.end(id);
  await h.conversations.waitForResult(id);
  await Worker.runReplayHistory(replayOptions(), await h.client.workflow.getHandle(id).fetchHistory());
});

// Histories of the scenarios in test/support/replay-scenarios.ts, recorded by released versions (one file per run).
const SCENARIO_FIXTURES = join(__dirname, '..', 'fixtures', 'replay');

describe('histories recorded by earlier versions replay against the current workflow code', () => {
  if (process.env.RECORD_FIXTURES === '1') {
    // RECORD_SCENARIOS=a,b: only those (a scenario added since the last release), leaving the others' fixtures.
    const only = process.env.RECORD_SCENARIOS?.split(',').filter(Boolean);
    for (const scenario of REPLAY_SCENARIOS.filter((s) => !only || only.includes(s.name))) {
      test(`record ${scenario.name}`, async () => {
        const id = await scenario.run(h);
        const runs = [];
        for await (const run of h.client.workflow.list({ query: `WorkflowId = '${id}'` })) runs.push(run);
        runs.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
        mkdirSync(SCENARIO_FIXTURES, { recursive: true });
        for (const [i, run] of runs.entries()) {
          const history = await h.client.workflow.getHandle(id, run.runId).fetchHistory();
          writeFileSync(join(SCENARIO_FIXTURES, `${scenario.name}.run${i + 1}.json`), historyToJSON(history));
        }
      });
    }
  }
  const files = existsSync(SCENARIO_FIXTURES) ? readdirSync(SCENARIO_FIXTURES).filter((f) => f.endsWith('.json')) : [];
  for (const file of files.sort()) {
    test(file, async () => {
      const history = historyFromJSON(JSON.parse(readFileSync(join(SCENARIO_FIXTURES, file), 'utf8')));
      await Worker.runReplayHistory(replayOptions(), history);
    });
  }
});
