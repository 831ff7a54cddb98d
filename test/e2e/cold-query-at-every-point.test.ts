// A query answered by a worker that has never seen the conversation replays its history from the start (a "legacy"
// query). It must work at every point of a conversation, for both protocols: a determinism error there once failed
// a query (`Non-deprecated patch marker encountered for change readable-model-activity-ids`, see
// docs/durability.md). For every workflow task of a recorded conversation, the server is asked to make the history
// end there (a reset to that task: a new run holding the history up to it), the run is closed at once, and a cold
// worker (no workflow cache: every query replays) answers getState and getTranscript on it.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { ConversationClient } from '../../client/conversation-client';
import { GrpcStatus, grpcStatusOf } from '../../client/grpc-status';
import type { ConversationSnapshot } from '../../common/conversation-types';
import type { ProtocolName } from '../../common/protocols/types';
import { stateQuery, transcriptQuery } from '../../common/workflow-messages';
import { demoTools } from '../../testing/demo-tools';
import { STOCK_QUESTION, STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import { startMessagesApi } from '../../testing/messages-api/server';
import type { MessagesApi } from '../../testing/messages-api/types';
import { createAnthropic } from '../../workers/anthropic-client';
import { createConversationWorker } from '../../workers/conversation-worker';
import { namespace, temporalAddress } from '../support/harness';

const EventType = temporal.api.enums.v1.EventType;

/**
 * A query of the cold worker. One that timed out waiting for the worker (a busy machine: each replays the whole
 * prefix) is asked again, twice at most; any other failure, or a third timeout, fails the test with its cause.
 */
async function coldQuery<T>(endsAt: string, query: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await query();
    } catch (error) {
      const status = grpcStatusOf(error);
      const timedOut = status === GrpcStatus.DEADLINE_EXCEEDED || status === GrpcStatus.CANCELLED;
      if (timedOut && attempt < 3) continue;
      const cause = (error as { cause?: unknown }).cause;
      throw new Error(`the query on the history up to event ${endsAt} failed: ${String(error)} (${String(cause)})`);
    }
  }
}

let mock: MessagesApi;
let connection: Connection;
let client: Client;
before(async () => {
  mock = await startMessagesApi();
  connection = await Connection.connect({ address: temporalAddress });
  client = new Client({ connection, namespace });
});
after(async () => {
  await connection?.close();
  await mock?.close();
});

async function worker(taskQueue: string, maxCachedWorkflows?: number): Promise<{ stop(): Promise<void> }> {
  const nativeConnection = await NativeConnection.connect({ address: temporalAddress });
  const created: Worker = await createConversationWorker({
    connection: nativeConnection,
    namespace,
    taskQueue,
    anthropic: createAnthropic({ ANTHROPIC_BASE_URL: mock.url }),
    tools: demoTools,
    ...(process.env.WORKFLOW_BUNDLE_PATH && { workflowBundlePath: process.env.WORKFLOW_BUNDLE_PATH }),
    ...(maxCachedWorkflows !== undefined && { tuning: { maxCachedWorkflows } }),
  });
  const running = created.run();
  return {
    async stop() {
      created.shutdown();
      await running;
      await nativeConnection.close();
    },
  };
}

for (const protocol of ['native', 'legacy-xml'] as ProtocolName[]) {
  describe(`a cold worker answers queries at every point of a ${protocol} conversation`, () => {
    test('each prefix of the history replays and answers getState and getTranscript', async () => {
      const taskQueue = `cold-query-${randomUUID()}`;
      const id = `cold-query-${protocol}-${Date.now()}`;

      // Record: the ticker → price chain, two turns, on a worker that then goes away.
      const recorder = await worker(taskQueue);
      const conversations = new ConversationClient({ client, taskQueue, tools: demoTools.map((t) => t.name) });
      try {
        await conversations.sendMessage(id, `${STOCK_QUESTION} [${randomUUID().slice(0, 8)}]`, {
          start: {
            protocol,
            tools: STOCK_TOOLS,
          },
        });
        await conversations.sendMessage(id, 'Thanks!');
        await conversations.end(id);
        await conversations.waitForResult(id);
      } finally {
        await recorder.stop();
      }
      const original = await client.workflow.getHandle(id).describe();
      const events = (await client.workflow.getHandle(id, original.runId).fetchHistory()).events ?? [];
      const taskEnds = events
        .filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)
        .map((e) => e.eventId!)
        // A reset to the first task leaves a run that never completed one: the server answers no query for it.
        .slice(1);
      assert.ok(taskEnds.length >= 7, `a conversation of ${taskEnds.length} workflow tasks`);

      // Cut: with no worker polling, every prefix becomes a closed run of its own.
      const prefixes: { endsAt: string; runId: string }[] = [];
      for (const endsAt of taskEnds) {
        const { runId } = (await client.workflowService.resetWorkflowExecution({
          namespace,
          workflowExecution: { workflowId: id, runId: original.runId },
          reason: `history up to workflow task ${endsAt}`,
          workflowTaskFinishEventId: endsAt,
          requestId: randomUUID(),
          resetReapplyType: temporal.api.enums.v1.ResetReapplyType.RESET_REAPPLY_TYPE_NONE,
        })) as temporal.api.workflowservice.v1.IResetWorkflowExecutionResponse;
        await client.workflow.getHandle(id, runId!).terminate('a prefix, for a cold query');
        prefixes.push({ endsAt: String(endsAt), runId: runId! });
      }

      // Query: a worker with no workflow cache replays each prefix from the start to answer.
      const cold = await worker(taskQueue, 0);
      try {
        let previous: ConversationSnapshot | undefined;
        for (const { endsAt, runId } of prefixes) {
          const handle = client.workflow.getHandle(id, runId);
          const state = await coldQuery(endsAt, () => handle.query(stateQuery));
          const transcript = await coldQuery(endsAt, () => handle.query(transcriptQuery, {}));
          assert.equal(state.protocol, protocol);
          assert.equal(transcript.length, state.transcriptLength, `up to event ${endsAt}`);
          if (previous) {
            assert.ok(state.modelCalls >= previous.modelCalls, `model calls never go back (up to event ${endsAt})`);
            assert.ok(state.transcriptLength >= previous.transcriptLength, `the transcript never shrinks (${endsAt})`);
          }
          previous = state;
        }
        const full = await client.workflow.getHandle(id, original.runId).query(stateQuery);
        assert.equal(full.status, 'completed');
        assert.equal(full.turns, 2);
        assert.equal(full.modelCalls, 4, 'three for the chain, one for "Thanks!"');
        assert.ok(previous!.modelCalls >= 3, 'the last prefix holds the whole chain');
      } finally {
        await cold.stop();
      }
    });
  });
}
