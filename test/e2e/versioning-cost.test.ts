// What Worker Deployments cost a conversation per step (docs/upgrading.md): the same 3-step chain (ticker → price →
// answer) on a pinned, versioned worker and on an unversioned one. Pinning must add no history event; the bytes and
// the wall time are printed for the note.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { promoteBuild } from '../../client/worker-deployments';
import { type Harness, startHarness, uniquePrompt } from '../support/harness';
import { waitUntil } from '../support/wait-until';

const ROUNDS = 5;
let on: Harness;
let off: Harness;
before(async () => {
  const deploymentName = `cost-${randomUUID().slice(0, 8)}`;
  on = await startHarness({ deployment: { name: deploymentName, buildId: 'build-1' } });
  off = await startHarness();
  await waitUntil('build promoted', () =>
    promoteBuild(on.client, { deploymentName, buildId: 'build-1' }).catch(() => false as const),
  );
});
after(async () => {
  await on?.close();
  await off?.close();
});

async function chain(h: Harness): Promise<{ ms: number; events: number; bytes: number }> {
  const id = `cost-${randomUUID().slice(0, 8)}`;
  const started = performance.now();
  await h.conversations.sendMessage(id, uniquePrompt('What is the current stock price of General Motors?'), {
    start: { tools: ['get_ticker_symbol', 'get_current_stock_price'], closeAfterFirstReply: true },
  });
  await h.conversations.waitForResult(id);
  const ms = performance.now() - started;
  const history = await h.client.workflow.getHandle(id).fetchHistory();
  const { raw } = await h.client.workflow.getHandle(id).describe();
  return { ms, events: history.events?.length ?? 0, bytes: Number(raw.workflowExecutionInfo?.historySizeBytes ?? 0) };
}

test('a pinned conversation writes the same events per step as an unversioned one', async () => {
  const results = { on: [] as Awaited<ReturnType<typeof chain>>[], off: [] as Awaited<ReturnType<typeof chain>>[] };
  for (let i = 0; i < ROUNDS; i++) {
    results.off.push(await chain(off));
    results.on.push(await chain(on));
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  const summary = (rs: typeof results.on) => ({
    events: median(rs.map((r) => r.events)),
    bytes: median(rs.map((r) => r.bytes)),
    msPerStep: Math.round(median(rs.map((r) => r.ms)) / 3),
  });
  console.log(`versioning on: ${JSON.stringify(summary(results.on))}; off: ${JSON.stringify(summary(results.off))}`);
  assert.equal(summary(results.on).events, summary(results.off).events, 'no extra history event');
});
