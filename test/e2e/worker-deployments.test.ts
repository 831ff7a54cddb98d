// Worker Deployments (docs/upgrading.md): workers of two builds on one task queue, each a version of one deployment.
// A conversation is pinned to the build that began its run; promoting the next build sends new conversations to it,
// and an open conversation moves at its next continue-as-new (when the server honours the continue-as-new's initial
// versioning behaviour); promoting the older build back is the rollback.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { temporal } from '@temporalio/proto';
import { promoteBuild } from '../../client/worker-deployments';
import { type Harness, startHarness, uniquePrompt } from '../support/harness';
import { waitUntil } from '../support/wait-until';

const PINNED = temporal.api.enums.v1.VersioningBehavior.VERSIONING_BEHAVIOR_PINNED;
const deploymentName = `conversations-${randomUUID().slice(0, 8)}`;
let a: Harness;
let b: Harness | undefined;
before(async () => {
  a = await startHarness({ deployment: { name: deploymentName, buildId: 'build-a' } });
});
after(async () => {
  await b?.close();
  await a?.close();
});

/** Promotes a build once its workers poll (the server refuses a version it has not seen yet). */
async function promote(harness: Harness, buildId: string) {
  return waitUntil(`build ${buildId} promoted`, () =>
    promoteBuild(harness.client, { deploymentName, buildId }).catch(() => false as const),
  );
}

/** The build a conversation's current run is on, and its versioning behaviour, as the server says. */
async function versionOf(harness: Harness, id: string, runId?: string) {
  const { raw } = await harness.client.workflow.getHandle(id, runId).describe();
  const info = raw.workflowExecutionInfo?.versioningInfo;
  return { buildId: info?.deploymentVersion?.buildId ?? undefined, behavior: info?.behavior ?? undefined };
}

test('a conversation is pinned to the build that began it; a promoted build takes new conversations, and the old run moves at its continue-as-new', async () => {
  const promotedA = await promote(a, 'build-a');
  assert.equal(promotedA.buildId, 'build-a');

  const open = `deploy-open-${Date.now()}`;
  // Two model calls per run: the second message's turn continues as new once.
  await a.conversations.sendMessage(open, uniquePrompt('Hello from build a'), {
    start: { continueAsNewAfterModelCalls: 1 },
  });
  const first = await versionOf(a, open);
  assert.deepEqual(first, { buildId: 'build-a', behavior: PINNED });

  b = await startHarness({ taskQueue: a.taskQueue, deployment: { name: deploymentName, buildId: 'build-b' } });
  const promotedB = await promote(b, 'build-b');
  assert.equal(promotedB.previousBuildId, 'build-a');

  const fresh = `deploy-fresh-${Date.now()}`;
  await b.conversations.sendMessage(fresh, uniquePrompt('Hello from build b'), { start: {} });
  assert.equal((await versionOf(b, fresh)).buildId, 'build-b', 'a new conversation starts on the current build');

  const reply = await a.conversations.sendMessage(open, 'And now?');
  assert.match(reply.text, /And now/);
  // Listed by visibility, which may lag the run that just began on a loaded server: wait for it.
  await waitUntil('the conversation continued as new twice (3 runs listed)', async () => {
    let runs = 0;
    for await (const _run of a.client.workflow.list({ query: `WorkflowId = '${open}'` })) runs++;
    return runs >= 3;
  });
  // Its new run is pinned again: to build b on a server that honours the continue-as-new's initial versioning
  // behaviour (AUTO_UPGRADE), to build a on one that does not (the dev server 1.29.1: the pinned version is
  // inherited), which must then keep build a running until the conversation ends (docs/upgrading.md).
  const moved = await versionOf(a, open);
  console.log(`after continue-as-new: ${JSON.stringify(moved)}`);
  assert.equal(moved.behavior, PINNED);
  assert.ok(['build-a', 'build-b'].includes(moved.buildId ?? ''), String(moved.buildId));

  // The rollback: build a is current again; build b's conversations keep answering.
  const back = await promote(a, 'build-a');
  assert.equal(back.previousBuildId, 'build-b');
  assert.match((await b.conversations.sendMessage(fresh, 'Still there?')).text, /Still there/);
  await a.conversations.end(open);
  await b.conversations.end(fresh);
});
