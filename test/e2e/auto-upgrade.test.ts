// Worker Deployments with TEMPORAL_VERSIONING_BEHAVIOR=auto-upgrade (docs/upgrading.md): a conversation begun on
// build a moves to build b at its first workflow task after b is promoted — no continue-as-new, no end. Build b is a
// modified copy of this checkout whose change follows the patching discipline: it writes a new command (a patch
// marker) and a new status only behind `patched()`, so build b replays what build a recorded and goes on from there.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { type Harness, startHarness, uniquePrompt } from '../support/harness';
import { type ModifiedBuild, modifiedBuild, removeBuild } from '../support/modified-workflow-bundle';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';
import { promoteWhenPolled, versioningOf } from '../support/deployment-builds';

const EventType = temporal.api.enums.v1.EventType;
const WAITING = 'Waiting for the next user message';
const WAITING_ON_B = 'Waiting for the next user message (build b)';
const PATCH = 'auto-upgrade-test-build-b';
const deploymentName = `auto-upgrade-${randomUUID().slice(0, 8)}`;

let a: Harness;
let b: WorkerProcess | undefined;
let buildB: Promise<ModifiedBuild>;
before(async () => {
  buildB = modifiedBuild([
    {
      file: 'workflows/conversation.ts',
      from: `setCurrentDetails('${WAITING}');`,
      to: `setCurrentDetails(patched('${PATCH}') ? '${WAITING_ON_B}' : '${WAITING}');`,
    },
  ]);
  buildB.catch(() => undefined);
  a = await startHarness({ deployment: { name: deploymentName, buildId: 'build-a', behavior: 'auto-upgrade' } });
});
after(async () => {
  await b?.stop();
  await a?.close();
  await removeBuild(buildB);
});

const promote = (buildId: string) => promoteWhenPolled(a.client, deploymentName, buildId);

const statusOf = async (id: string) =>
  (await a.client.workflow.getHandle(id).query<{ currentDetails?: string }>('__temporal_workflow_metadata'))
    .currentDetails;

test('an open conversation moves to the promoted build at its next workflow task, through a patched() change', async () => {
  await promote('build-a');
  const id = `auto-upgrade-${Date.now()}`;
  await a.conversations.sendMessage(id, uniquePrompt('Hello there'), { start: {} });
  assert.deepEqual(await versioningOf(a.client, id), {
    buildId: 'build-a',
    behavior: temporal.api.enums.v1.VersioningBehavior.VERSIONING_BEHAVIOR_AUTO_UPGRADE,
  });
  assert.equal(await statusOf(id), WAITING);

  const build = await buildB;
  b = await startWorkerProcess({
    entry: build.workerEntry,
    workflowBundlePath: build.workflowBundlePath,
    taskQueue: a.taskQueue,
    anthropicBaseUrl: a.mock.url,
    executionLog: a.executionLog,
    env: {
      TEMPORAL_DEPLOYMENT_NAME: deploymentName,
      TEMPORAL_BUILD_ID: 'build-b',
      TEMPORAL_VERSIONING_BEHAVIOR: 'auto-upgrade',
    },
  });
  assert.equal((await promote('build-b')).previousBuildId, 'build-a');

  // The next workflow task (the message's update) is build b's: it replays build a's history, then runs its own code.
  assert.match((await a.conversations.sendMessage(id, 'Still there?')).text, /Still there/);
  assert.equal((await versioningOf(a.client, id)).buildId, 'build-b', 'the run moved to the promoted build');
  assert.equal(await statusOf(id), WAITING_ON_B, "build b's code runs the conversation now");

  await a.conversations.end(id);
  assert.equal((await a.conversations.waitForResult(id)).status, 'completed');
  const events = (await a.client.workflow.getHandle(id).fetchHistory()).events ?? [];
  // Patch markers (core's "core_patch"): the patch id is in the JSON of their details' payloads.
  const patches = events
    .filter((e) => e.eventType === EventType.EVENT_TYPE_MARKER_RECORDED)
    .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')
    .flatMap((e) => Object.values(e.markerRecordedEventAttributes?.details ?? {}))
    .flatMap((payloads) => payloads.payloads ?? [])
    .map((payload) => JSON.stringify(defaultPayloadConverter.fromPayload<unknown>(payload)))
    .filter((text) => text.includes(PATCH));
  assert.equal(patches.length, 1, "build b's patch is recorded once");
  const failed = events.filter((e) =>
    [
      EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED,
      EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT,
      EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED,
    ].includes(e.eventType!),
  );
  assert.deepEqual(
    failed.map((e) => EventType[e.eventType!]),
    [],
    'no workflow task or activity failed',
  );
  // Which workers completed the workflow tasks: build a's first, build b's after the promotion.
  const completedBy = events
    .filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)
    .map((e) => e.workflowTaskCompletedEventAttributes?.deploymentVersion?.buildId);
  assert.equal(completedBy[0], 'build-a');
  assert.equal(completedBy.at(-1), 'build-b');
});
