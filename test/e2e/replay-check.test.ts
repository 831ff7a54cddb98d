// replay-check (workers/replay-check.ts, the CLI's `replay-check`): the recent conversations of the namespace replayed
// against the code about to be deployed. Two builds made from modified copies of this checkout's source: one with a
// change that alters the commands a history recorded (a model call's activity id) is caught, naming each conversation
// and the determinism error, and the CLI exits 1; one with a change that alters no command (the text a waiting
// conversation shows) passes.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { replayCheck } from '../../workers/replay-check';
import { type Harness, startHarness, uniquePrompt } from '../support/harness';
import { type ModifiedBuild, modifiedBuild, removeBuild } from '../support/modified-workflow-bundle';

let h: Harness;
let incompatible: Promise<ModifiedBuild>;
let compatible: Promise<ModifiedBuild>;
const ids: string[] = [];
/** This test's conversations only: other files share the namespace. */
const query = () => `WorkflowType = 'conversation' AND TaskQueue = '${h.taskQueue}'`;

before(async () => {
  incompatible = modifiedBuild([
    {
      file: 'common/activity-contracts.ts',
      from: 'return fallback === 0 ? `model-${call}`',
      to: 'return fallback === 0 ? `model-call-${call}`',
    },
  ]);
  compatible = modifiedBuild([
    {
      file: 'workflows/conversation.ts',
      from: "setCurrentDetails('Waiting for the next user message');",
      to: "setCurrentDetails('Waiting for a message');",
    },
  ]);
  for (const build of [incompatible, compatible]) build.catch(() => undefined); // awaited by the tests
  h = await startHarness();
  // A tool chain that ended, and a conversation that waits for its next message.
  const chain = `replay-check-chain-${Date.now()}`;
  await h.conversations.sendMessage(chain, uniquePrompt('What is the current stock price of General Motors?'), {
    start: { tools: ['get_ticker_symbol', 'get_current_stock_price'], closeAfterFirstReply: true },
  });
  await h.conversations.waitForResult(chain);
  const open = `replay-check-open-${Date.now()}`;
  await h.conversations.sendMessage(open, uniquePrompt('Hello there'), { start: {} });
  ids.push(chain, open);
});
after(async () => {
  for (const id of ids.slice(1)) await h?.conversations.end(id).catch(() => undefined);
  await h?.close();
  await removeBuild(incompatible);
  await removeBuild(compatible);
});

test('the code the worker runs replays every recent conversation', async () => {
  const result = await replayCheck({
    client: h.client,
    query: query(),
    ...(process.env.WORKFLOW_BUNDLE_PATH && { workflowBundlePath: process.env.WORKFLOW_BUNDLE_PATH }),
  });
  assert.deepEqual(result, { replayed: 2, broken: [] });
});

test('a change that alters no command (a status text) passes', async () => {
  const build = await compatible;
  const result = await replayCheck({ client: h.client, query: query(), workflowBundlePath: build.workflowBundlePath });
  assert.deepEqual(result, { replayed: 2, broken: [] });
});

test('a change without its patched() branch (a model call activity id) is caught: each conversation named, with the determinism error', async () => {
  const build = await incompatible;
  const result = await replayCheck({ client: h.client, query: query(), workflowBundlePath: build.workflowBundlePath });
  assert.equal(result.replayed, 2);
  assert.deepEqual(result.broken.map((b) => b.workflowId).sort(), [...ids].sort());
  for (const broken of result.broken) assert.match(broken.error, /[Nn]ondetermin/);
  // At most `maxHistories` are read.
  const one = await replayCheck({
    client: h.client,
    query: query(),
    maxHistories: 1,
    workflowBundlePath: build.workflowBundlePath,
  });
  assert.equal(one.replayed, 1);
});

test('the CLI prints what would break and exits 1; with the compatible build it exits 0', async () => {
  const cli = (bundle: string) => runCli('replay-check', '--query', query(), '--max', '10', '--bundle', bundle);
  const bad = await cli((await incompatible).workflowBundlePath);
  assert.equal(bad.code, 1, bad.output);
  for (const id of ids) assert.match(bad.output, new RegExp(`would break: ${id} \\(run [^)]+\\): .*[Nn]ondetermin`));
  assert.match(bad.output, /2 histories replayed, 2 would break/);
  const good = await cli((await compatible).workflowBundlePath);
  assert.equal(good.code, 0, good.output);
  assert.match(good.output, /2 histories replayed, 0 would break/);
});

async function runCli(...args: string[]): Promise<{ code: number | null; output: string }> {
  const root = path.resolve(__dirname, '..', '..');
  const child = spawn(process.execPath, ['--import', 'tsx', 'client/cli.ts', ...args], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS ?? 'localhost:7233',
      TEMPORAL_NAMESPACE: process.env.TEMPORAL_NAMESPACE ?? 'default',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, output };
}
