// Determinism across code changes: the replay corpus (test/fixtures/replay/<version>/, histories recorded by each
// released version, never re-recorded) must replay against the current code without a determinism error; a change
// that breaks one gets a patched() branch (docs/upgrading.md). A fresh history of each kind is replayed too.
// RECORD_FIXTURES=1 records the scenarios of test/support/replay-scenarios.ts that the package's version has no file
// of yet, into its folder: files already there are never written again.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils';
import { type ReplayWorkerOptions, Worker } from '@temporalio/worker';
import { type Harness, startHarness, uniquePrompt } from '../support/harness';
import { REPLAY_SCENARIOS } from '../support/replay-scenarios';
import { packageVersion } from '../../client/package-version';

/** The corpus: one folder per released version, one file per run. */
const CORPUS = join(__dirname, '..', 'fixtures', 'replay');
/** The first history of the corpus: the ticker → price chain of 0.1.0 (the CLI's JSON export). */
const TICKER_CHAIN = join(CORPUS, '0.1.0', 'ticker-chain.run1.json');
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
  const history = historyFromJSON(JSON.parse(readFileSync(TICKER_CHAIN, 'utf8')));
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

// Histories of the scenarios in test/support/replay-scenarios.ts (and the chain above), by the version that recorded them.
const VERSION = packageVersion();

/**
 * Writes every run of workflow `id`, oldest first, to `<prefix>.run<n>.json`, never over a file already there. The runs
 * are found from the latest back, each run's start naming the run it continues (exact at once, unlike visibility).
 */
async function recordRuns(harness: Harness, id: string, prefix: string): Promise<void> {
  const histories = [];
  for (let runId: string | undefined = undefined; ;) {
    const history = await harness.client.workflow.getHandle(id, runId).fetchHistory();
    histories.unshift(history);
    runId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
    if (!runId) break;
  }
  for (const [i, history] of histories.entries()) {
    writeFileSync(`${prefix}.run${i + 1}.json`, historyToJSON(history), { flag: 'wx' });
  }
}

describe('histories recorded by released versions replay against the current workflow code', () => {
  if (process.env.RECORD_FIXTURES === '1') {
    const folder = join(CORPUS, VERSION);
    const recorded = existsSync(folder) ? readdirSync(folder) : [];
    for (const scenario of REPLAY_SCENARIOS) {
      if (recorded.some((file) => file.startsWith(`${scenario.name}.run`))) continue; // never re-recorded
      test(`record ${scenario.name} (${VERSION})`, { timeout: 180_000 }, async () => {
        // A scenario that needs another worker (MCP servers, agent tools, a small context window) gets one of its own.
        const own = scenario.harness && (await startHarness(scenario.harness));
        try {
          const [id, ...children] = [await scenario.run(own || h)].flat();
          mkdirSync(folder, { recursive: true });
          await recordRuns(own || h, id!, join(folder, scenario.name));
          for (const [i, child] of children.entries()) {
            await recordRuns(own || h, child, join(folder, `${scenario.name}.child${i + 1}`));
          }
        } finally {
          await own?.close();
        }
      });
    }
  }
  const versions = existsSync(CORPUS) ? readdirSync(CORPUS).filter((v) => /^\d+\.\d+\.\d+/.test(v)) : [];
  test('the corpus holds the first release, 0.1.0, and nothing outside a version folder', () => {
    assert.ok(versions.includes('0.1.0'), versions.join(', '));
    assert.deepEqual(
      readdirSync(CORPUS).filter((entry) => !versions.includes(entry)),
      [],
      'every history sits in the folder of the version that recorded it',
    );
  });
  for (const version of versions.sort()) {
    describe(version, () => {
      const folder = join(CORPUS, version);
      for (const file of readdirSync(folder)
        .filter((f) => f.endsWith('.json'))
        .sort()) {
        test(file, async () => {
          const history = historyFromJSON(JSON.parse(readFileSync(join(folder, file), 'utf8')));
          // Its own workflow id, not the replayer's "fake": a sub-agent's child id is derived from its parent's.
          const workflowId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowId ?? undefined;
          await Worker.runReplayHistory(replayOptions(), history, workflowId);
        });
      }
    });
  }
});
