// A rolling deploy with Worker Deployments on (docs/upgrading.md) whose switch lands while work is in flight: build b
// (a modified copy of this checkout, its waiting status another text) is promoted while a conversation of build a is
// in the middle of a chain (a slow tool running, the next model call not yet scheduled) and another is in the middle of
// a slowly streamed reply. Both finish on build a — every later activity of their runs goes to build a's worker, whose
// tools run in this process — and no workflow task or activity fails; a new conversation then runs on build b. Run
// twice: with eager activities (a workflow task takes its activities back with its completion; the dev server allows
// it) and without (WORKER_EAGER_ACTIVITIES=off, every activity through the versioned queue).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { temporal } from '@temporalio/proto';
import { type Harness, startHarness, uniquePrompt } from '../support/harness';
import { type ModifiedBuild, modifiedBuild, removeBuild } from '../support/modified-workflow-bundle';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';
import { promoteWhenPolled, versioningOf } from '../support/deployment-builds';
import { waitUntil } from '../support/wait-until';

const EventType = temporal.api.enums.v1.EventType;
const STOCK_TOOLS = ['get_ticker_symbol', 'get_current_stock_price'];
const WAITING_ON_B = 'Waiting for the next user message (build b)';
/** Each tool call takes this long (heartbeating): the promotion lands while the first one runs. */
const TOOL_MS = 2_500;
/** The streamed reply: 80 words, 40 ms apart (about 3 s). */
const STREAMED_TEXT = Array.from({ length: 80 }, (_, i) => `word${i}`).join(' ');
const TOKEN_MS = 40;

let buildB: Promise<ModifiedBuild>;
before(() => {
  buildB = modifiedBuild([
    {
      file: 'workflows/conversation.ts',
      from: "setCurrentDetails('Waiting for the next user message');",
      to: `setCurrentDetails('${WAITING_ON_B}');`,
    },
  ]);
  buildB.catch(() => undefined);
});
after(async () => {
  await removeBuild(buildB);
});

/** Failed workflow tasks and failed activity attempts in every run of the conversation. */
async function failuresOf(h: Harness, id: string): Promise<string[]> {
  const failed: string[] = [];
  for await (const run of h.client.workflow.list({ query: `WorkflowId = '${id}'` })) {
    const history = await h.client.workflow.getHandle(id, run.runId).fetchHistory();
    for (const e of history.events ?? []) {
      if (
        [
          EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED,
          EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT,
          EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED,
          EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT,
        ].includes(e.eventType!)
      ) {
        failed.push(EventType[e.eventType!]);
      }
    }
  }
  return failed;
}

const buildOf = async (h: Harness, id: string) => (await versioningOf(h.client, id)).buildId;

/** The identities of the workers that started the activities of the conversation's latest run. */
async function activityWorkers(h: Harness, id: string): Promise<Set<string>> {
  const history = await h.client.workflow.getHandle(id).fetchHistory();
  return new Set(
    (history.events ?? [])
      .filter((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED)
      .map((e) => e.activityTaskStartedEventAttributes!.identity!),
  );
}

for (const eager of [true, false]) {
  describe(`eager activities ${eager ? 'on' : 'off'}`, () => {
    const deploymentName = `in-flight-${eager ? 'eager' : 'queued'}-${randomUUID().slice(0, 8)}`;
    let a: Harness;
    let b: WorkerProcess | undefined;
    before(async () => {
      a = await startHarness({
        deployment: { name: deploymentName, buildId: 'build-a' },
        toolLatencyMs: TOOL_MS,
        ...(!eager && { eagerActivities: false as const }),
      });
      const build = await buildB;
      // Build b polls before anything starts, so that its promotion (the server refuses a build none of whose workers
      // polled) takes a moment, not a worker's start.
      b = await startWorkerProcess({
        entry: build.workerEntry,
        workflowBundlePath: build.workflowBundlePath,
        taskQueue: a.taskQueue,
        anthropicBaseUrl: a.mock.url,
        executionLog: a.executionLog,
        toolLatencyMs: TOOL_MS,
        env: {
          TEMPORAL_DEPLOYMENT_NAME: deploymentName,
          TEMPORAL_BUILD_ID: 'build-b',
          ...(!eager && { WORKER_EAGER_ACTIVITIES: 'off' }),
        },
      });
    });
    after(async () => {
      await b?.stop();
      await a?.close();
    });

    const promote = (buildId: string) => promoteWhenPolled(a.client, deploymentName, buildId);

    test('a conversation mid-chain and one mid-stream when build b is promoted finish on build a; nothing fails', async () => {
      await promote('build-a');
      const stamp = Date.now();
      const chain = `in-flight-chain-${stamp}`;
      const chainPrompt = uniquePrompt('What is the current stock price of General Motors?');
      const chainReply = a.conversations.sendMessage(chain, chainPrompt, { start: { tools: STOCK_TOOLS } });
      const stream = `in-flight-stream-${stamp}`;
      const streamPrompt = uniquePrompt('Tell me a long story');
      a.mock.script(streamPrompt, [
        {
          reply: { content: [{ type: 'text', text: STREAMED_TEXT }], stop_reason: 'end_turn' },
          tokenDelayMs: TOKEN_MS,
        },
      ]);
      const streamReply = a.conversations.sendMessage(stream, streamPrompt, { start: {} });
      const settled = new Set<string>();
      void chainReply.then(
        () => settled.add(chain),
        () => settled.add(chain),
      );
      void streamReply.then(
        () => settled.add(stream),
        () => settled.add(stream),
      );

      // In flight: the chain's first tool runs; the story's reply is being streamed (some of it already read).
      await waitUntil('the chain to run its first tool', () =>
        a.executions(chain).some((line) => line.event === 'start' && line.tool === 'get_ticker_symbol'),
      );
      await waitUntil('the story to be streaming', async () => {
        const { running } = await a.conversations.getState(stream);
        return running.some((activity) => activity.kind === 'model') && a.mock.requestsFor(streamPrompt).length === 1;
      });
      assert.equal((await promote('build-b')).previousBuildId, 'build-a');
      assert.deepEqual([...settled], [], 'both were still in flight when build b became current');

      assert.match((await chainReply).text, /\$\d+\.\d\d/);
      assert.equal((await streamReply).text, STREAMED_TEXT);
      for (const id of [chain, stream]) assert.equal(await buildOf(a, id), 'build-a', `${id} stays on build a`);
      // The chain's later calls (a second tool, two model calls) were scheduled after the promotion: on build a still.
      assert.deepEqual(
        [...new Set(a.executions(chain).map((line) => line.pid))],
        [process.pid],
        "every tool call of the chain ran on build a's worker",
      );
      const chainWorkers = await activityWorkers(a, chain);
      assert.equal(chainWorkers.size, 1, `one worker ran the chain's activities: ${[...chainWorkers].join(', ')}`);

      // A new conversation runs build b's code.
      const fresh = `in-flight-fresh-${stamp}`;
      await a.conversations.sendMessage(fresh, uniquePrompt('Hello there'), { start: {} });
      assert.equal(await buildOf(a, fresh), 'build-b');
      const details = await waitUntil('build b shows its own status', async () => {
        const meta = await a.client.workflow
          .getHandle(fresh)
          .query<{ currentDetails?: string }>('__temporal_workflow_metadata');
        return meta.currentDetails?.startsWith('Waiting') && meta.currentDetails;
      });
      assert.equal(details, WAITING_ON_B);

      for (const id of [chain, stream, fresh]) {
        await a.conversations.end(id);
        assert.equal((await a.conversations.waitForResult(id)).status, 'completed', id);
        assert.deepEqual(await failuresOf(a, id), [], `no workflow task or activity of ${id} failed`);
      }
    });
  });
}
