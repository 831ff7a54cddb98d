// A rolling deploy with Worker Deployments on (docs/upgrading.md), reduced: build a (this checkout) and build b (a
// modified copy of its source: a real difference in the workflow code, the status a waiting conversation shows) on one
// task queue, each a version of one deployment. Conversations open on build a — idle, waiting for an approval,
// continuing as new — go on answering after build b is promoted, new ones start on build b, and after the rollback
// (build a promoted again) build b's conversations still answer. No workflow task and no activity fails on the way.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { temporal } from '@temporalio/proto';
import { type Harness, startHarness, uniquePrompt } from '../support/harness';
import { approvalAskedFor } from '../support/awaiting-approval';
import { type ModifiedBuild, modifiedBuild, removeBuild } from '../support/modified-workflow-bundle';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';
import { promoteWhenPolled, versioningOf } from '../support/deployment-builds';
import { waitUntil } from '../support/wait-until';

const EventType = temporal.api.enums.v1.EventType;
const STOCK_TOOLS = ['get_ticker_symbol', 'get_current_stock_price'];
const WAITING_ON_B = 'Waiting for the next user message (build b)';
const deploymentName = `rolling-${randomUUID().slice(0, 8)}`;

let a: Harness;
let b: WorkerProcess | undefined;
let buildB: Promise<ModifiedBuild>;
before(async () => {
  buildB = modifiedBuild([
    {
      file: 'workflows/conversation.ts',
      from: "setCurrentDetails('Waiting for the next user message');",
      to: `setCurrentDetails('${WAITING_ON_B}');`,
    },
  ]);
  buildB.catch(() => undefined);
  a = await startHarness({ deployment: { name: deploymentName, buildId: 'build-a' } });
});
after(async () => {
  await b?.stop();
  await a?.close();
  await removeBuild(buildB);
});

const promote = (buildId: string) => promoteWhenPolled(a.client, deploymentName, buildId);

const buildOf = async (id: string) => (await versioningOf(a.client, id)).buildId;

/** Failed workflow tasks and failed activity attempts in every run of the conversation. */
async function failuresOf(id: string): Promise<number> {
  let failed = 0;
  for await (const run of a.client.workflow.list({ query: `WorkflowId = '${id}'` })) {
    const history = await a.client.workflow.getHandle(id, run.runId).fetchHistory();
    failed += (history.events ?? []).filter((e) =>
      [
        EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED,
        EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT,
        EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED,
      ].includes(e.eventType!),
    ).length;
  }
  return failed;
}

test('old conversations keep answering on their build, new ones start on the promoted build, and a rollback breaks nothing', async () => {
  await promote('build-a');
  const stamp = Date.now();
  const idle = `rolling-idle-${stamp}`;
  await a.conversations.sendMessage(idle, uniquePrompt('Hello there'), { start: {} });
  const continuing = `rolling-continuing-${stamp}`;
  await a.conversations.sendMessage(continuing, uniquePrompt('What is the current stock price of General Motors?'), {
    start: { tools: STOCK_TOOLS, continueAsNewAfterModelCalls: 2 },
  });
  const approval = `rolling-approval-${stamp}`;
  const bought = a.conversations.sendMessage(approval, uniquePrompt('Buy 3 shares of General Motors'), {
    start: { tools: ['buy_stock'] },
  });
  const pending = await approvalAskedFor(a.conversations, approval);

  // Build b joins the queue and is promoted.
  const build = await buildB;
  b = await startWorkerProcess({
    entry: build.workerEntry,
    workflowBundlePath: build.workflowBundlePath,
    taskQueue: a.taskQueue,
    anthropicBaseUrl: a.mock.url,
    executionLog: a.executionLog,
    env: { TEMPORAL_DEPLOYMENT_NAME: deploymentName, TEMPORAL_BUILD_ID: 'build-b' },
  });
  assert.equal((await promote('build-b')).previousBuildId, 'build-a');

  const fresh = `rolling-fresh-${stamp}`;
  await a.conversations.sendMessage(fresh, uniquePrompt('Hello there'), { start: {} });
  assert.equal(await buildOf(fresh), 'build-b', 'a new conversation starts on the promoted build');
  // The status a waiting conversation shows (the workflow's current details, read by Temporal's metadata query).
  const details = await waitUntil('build b shows its own status', async () => {
    const meta = await a.client.workflow
      .getHandle(fresh)
      .query<{ currentDetails?: string }>('__temporal_workflow_metadata');
    return meta.currentDetails?.startsWith('Waiting') && meta.currentDetails;
  });
  assert.equal(details, WAITING_ON_B, "build b's code runs it");

  // The conversations build a began go on: an approval, a message, a continue-as-new.
  await a.conversations.approveToolCall(approval, {
    callId: pending.callId,
    argumentsDigest: pending.argumentsDigest,
    approve: true,
  });
  assert.match((await bought).text, /filled: 3 GM/);
  assert.match((await a.conversations.sendMessage(idle, 'Still there?')).text, /Still there/);
  assert.match((await a.conversations.sendMessage(continuing, 'And Ford?')).text, /./);
  assert.equal(await buildOf(idle), 'build-a', 'an open run stays pinned to its build');

  // The rollback: build a is current again; build b's conversation still answers, on build b.
  assert.equal((await promote('build-a')).previousBuildId, 'build-b');
  assert.match((await a.conversations.sendMessage(fresh, 'After the rollback?')).text, /After the rollback/);
  assert.equal(await buildOf(fresh), 'build-b');
  const after = `rolling-after-${stamp}`;
  await a.conversations.sendMessage(after, uniquePrompt('Hello again'), { start: {} });
  assert.equal(await buildOf(after), 'build-a', 'new conversations start on the build rolled back to');

  for (const id of [idle, continuing, approval, fresh, after]) {
    await a.conversations.end(id);
    assert.equal((await a.conversations.waitForResult(id)).status, 'completed', id);
    assert.equal(await failuresOf(id), 0, `no workflow task or activity of ${id} failed`);
  }
});
