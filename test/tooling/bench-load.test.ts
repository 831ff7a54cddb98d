// The bench's load runner and the guard's side by side, for real: ours and the floor run the same small load on the
// test run's dev server and the local Messages API server (the peer needs its own npm install, so it stays out of
// the suite). What is checked is what the figures rest on — every chain finished, the floor posted the chain's own
// requests to the same model server as ours, the histories were read — never how fast anything was.
import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { startMessagesApi } from '../../testing/messages-api/server';
import type { MessagesApi } from '../../testing/messages-api/types';
import { parseArgs } from '../../scripts/bench/args';
import { type BenchContext, buildBundles, type Bundles } from '../../scripts/bench/context';
import { checkGuard, guardFigures, runGuard } from '../../scripts/bench/guard';
import { runSideBySide, type SideBySideResult, sideBySideTables } from '../../scripts/bench/side-by-side';
import { CHAIN_TOOLS } from '../../scripts/bench/chain-script';

function requireEnv(name: string): string {
  const value = process.env[name];
  assert.ok(value, `${name} is not set: run the tests with \`npm test\` (scripts/run-tests.ts)`);
  return value;
}

describe('bench load runner: ours and the floor side by side on the dev server', () => {
  let connection: Connection;
  let mock: MessagesApi;
  let bundles: Bundles;
  let result: SideBySideResult;

  before(async () => {
    const address = requireEnv('TEMPORAL_ADDRESS');
    const namespace = requireEnv('TEMPORAL_NAMESPACE');
    [connection, mock, bundles] = await Promise.all([
      Connection.connect({ address }),
      startMessagesApi(),
      buildBundles('with-bare', requireEnv('WORKFLOW_BUNDLE_PATH')),
    ]);
    const ctx: BenchContext = {
      args: parseArgs([])!,
      server: { address, namespace } as BenchContext['server'],
      client: new Client({ connection, namespace }),
      mock,
      bundles,
      budgetEnd: Number.POSITIVE_INFINITY,
      log: () => {},
    };
    result = await runSideBySide(ctx, ['ours', 'floor'], { conversations: 3, lengths: [1, 3], rounds: 1 });
  });

  after(async () => {
    await connection?.close();
    await mock?.close();
    if (bundles) await fsp.rm(bundles.dir, { recursive: true, force: true });
  });

  test('every system ran every length, and every conversation finished its chain', () => {
    assert.deepEqual(result.runs.map((run) => `${run.system} ${run.steps}`).sort(), [
      'floor 1',
      'floor 3',
      'ours 1',
      'ours 3',
    ]);
    for (const run of result.runs) {
      assert.equal(run.failed, 0, `${run.system}: ${run.firstError}`);
      assert.equal(run.completed, 3);
      assert.equal(run.completedSteps, 3 * run.steps);
      assert.equal(run.stepMs.length, 3 * run.steps, 'a step per gap between two model requests at the server');
      assert.equal(run.history?.read, 3);
    }
  });

  test("the floor posts the chain's requests to the same model server as ours: tools, transcript, tool results", () => {
    const requestsOf = (system: string, steps: number) =>
      mock.requests.filter((r) => r.path === '/v1/messages' && r.match?.startsWith(`[${system}-r1-s${steps}-`));
    for (const system of ['ours', 'floor']) {
      const requests = requestsOf(system, 3);
      assert.equal(requests.length, 3 * 4, `${system}: 3 conversations × (3 steps + the final answer)`);
      for (const request of requests) {
        assert.equal(request.status, 200);
        assert.deepEqual(
          (request.body.tools as { name: string }[]).map((tool) => tool.name).sort(),
          [...CHAIN_TOOLS].sort(),
        );
      }
      // The last request of a conversation carries the whole transcript: 3 tool results, each answering its call.
      const last = requests.filter((r) => r.body.messages.length === 7);
      assert.equal(last.length, 3, `${system}: each conversation's final request has 7 messages`);
      const results = (last[0]!.body.messages as MessageParam[]).flatMap((m) =>
        Array.isArray(m.content) ? m.content.filter((block) => block.type === 'tool_result') : [],
      );
      assert.equal(results.length, 3);
      assert.ok(results.every((block) => block.type === 'tool_result' && block.is_error !== true));
    }
  });

  test('histories are read per conversation: the floor writes 3 events per activity and per workflow task', () => {
    for (const steps of [1, 3]) {
      const floor = result.runs.find((run) => run.system === 'floor' && run.steps === steps)!.history!;
      // Started, update accepted and completed, workflow completed, and per model/tool call an activity (3 events)
      // and the workflow task that follows it (3); 2 × steps + 1 calls, plus the first workflow task.
      assert.equal(floor.events, 4 + 3 + (2 * steps + 1) * 6);
      assert.equal(floor.eventTypes.activityTaskScheduled, 2 * steps + 1);
      const ours = result.runs.find((run) => run.system === 'ours' && run.steps === steps)!.history!;
      assert.equal(ours.eventTypes.activityTaskScheduled, 2 * steps + 1, 'ours: one activity per model and tool call');
      assert.ok(ours.bytes > 0 && floor.bytes > 0);
    }
  });

  test("the guard's figures come from these runs and fail past the margin", async () => {
    const figures = guardFigures(result);
    assert.deepEqual(Object.keys(figures), ['1', '3']);
    const ours3 = result.runs.find((run) => run.system === 'ours' && run.steps === 3)!;
    const floor3 = result.runs.find((run) => run.system === 'floor' && run.steps === 3)!;
    assert.equal(figures['3']!.timeRatio, ours3.wallMs / floor3.wallMs);
    assert.equal(figures['3']!.historyBytes, ours3.history!.bytes);
    const baseline = {
      updatedAt: '',
      commit: undefined,
      machine: { cpus: 2, cpuModel: '', loadAverageStart: [] },
      conversations: 3,
      rounds: 1,
    };
    assert.ok(checkGuard(figures, { ...baseline, lengths: figures }).every((check) => check.pass));
    const shrunk = Object.fromEntries(
      Object.entries(figures).map(([steps, f]) => [steps, { ...f, historyBytes: f.historyBytes / 1.1 }]),
    );
    const failed = checkGuard(figures, { ...baseline, lengths: shrunk }).filter((check) => !check.pass);
    assert.deepEqual(
      failed.map((check) => `${check.measure} ${check.steps}`),
      ['history 1', 'history 3'],
    );
    // --update-baseline writes the figures, and the next check against them passes.
    const file = path.join(await fsp.mkdtemp(path.join(os.tmpdir(), 'bench-baseline-')), 'baseline.json');
    const machine = baseline.machine;
    assert.equal((await runGuard(result, { update: true, machine, commit: 'abc', baselineFile: file })).updated, true);
    const again = await runGuard(result, { update: false, machine, commit: 'abc', baselineFile: file });
    assert.equal(again.pass, true);
    assert.equal(again.checks.length, 4);
    await fsp.rm(path.dirname(file), { recursive: true, force: true });
  });

  test('the side-by-side table has a wall time, a ratio and a history per system', () => {
    const [summary] = sideBySideTables(result);
    assert.deepEqual(summary!.headers, [
      'steps',
      'ours wall',
      'floor wall',
      'ours ÷ floor',
      'ours history',
      'floor history',
      'ours events',
      'floor events',
    ]);
    assert.deepEqual(
      summary!.rows.map((row) => row[0]),
      ['1', '3'],
    );
  });
});
