// What every hostile-input test checks after it sent something bad: the conversation's workflow tasks never failed
// (no WorkflowTaskFailed / TimedOut in its history), and the worker still takes work (a fresh conversation on the
// same task queue gets its answer). Also the Temporal CLI, the way an outside caller reaches a conversation.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { ConversationError } from '../../client/errors';
import { CONVERSATION_WORKFLOW } from '../../common/conversation-types';
import { STOCK_TOOLS } from '../../testing/messages-api/fixtures';
import { type Harness, namespace, temporalAddress, uniquePrompt } from './harness';

const run = promisify(execFile);
const EventType = temporal.api.enums.v1.EventType;

export const cliPath = process.env.TEMPORAL_CLI_PATH;
/** For `describe(…, { skip })`: the CLI comes from the test runner. */
export const skipWithoutCli = !cliPath && 'no TEMPORAL_CLI_PATH (the test runner sets it)';

/** The Temporal CLI against the test server: its output, and whether it exited 0. */
export async function temporalCli(...args: string[]): Promise<{ ok: boolean; output: string }> {
  try {
    const { stdout, stderr } = await run(cliPath!, [...args, '--address', temporalAddress, '--namespace', namespace], {
      timeout: 60_000,
      maxBuffer: 64 * 2 ** 20,
    });
    return { ok: true, output: stdout + stderr };
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    return { ok: false, output: stdout + stderr };
  }
}

/** An update sent by the Temporal CLI (`workflow update execute`) with `input` as its argument, and `flags`. */
export function updateFromCli(id: string, name: string, input: string, ...flags: string[]) {
  return temporalCli('workflow', 'update', 'execute', '--workflow-id', id, '--name', name, '--input', input, ...flags);
}

/** A conversation started by the Temporal CLI (`workflow start`) on the harness's task queue, with `flags` (`--input` …). */
export function startFromCli(h: Pick<Harness, 'taskQueue'>, id: string, ...flags: string[]) {
  return temporalCli(
    'workflow',
    'start',
    '--type',
    CONVERSATION_WORKFLOW,
    '--task-queue',
    h.taskQueue,
    '--workflow-id',
    id,
    ...flags,
  );
}

/** Workflow tasks of the conversation (all its runs) that failed or timed out. */
export async function failedWorkflowTasks(h: Harness, workflowId: string): Promise<number> {
  let failed = 0;
  for await (const execution of h.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    const history = await h.client.workflow.getHandle(workflowId, execution.runId).fetchHistory();
    failed += (history.events ?? []).filter(
      (e) =>
        e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED ||
        e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT,
    ).length;
  }
  return failed;
}

/** The worker is running and answers a new conversation on its task queue. */
export async function assertWorkerServes(h: Harness): Promise<void> {
  assert.equal(h.worker.getState(), 'RUNNING', 'the worker is still running');
  const id = `still-serving-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  const reply = await h.conversations.sendMessage(id, uniquePrompt('Hello there'), { start: {}, timeoutMs: 30_000 });
  assert.match(reply.text, /Hello there/);
  await h.conversations.end(id);
}

/** After a bad input: no task of the conversation failed, and the worker still serves. */
export async function assertUnharmed(h: Harness, workflowId: string): Promise<void> {
  assert.equal(await failedWorkflowTasks(h, workflowId), 0, `no workflow task of ${workflowId} failed`);
  await assertWorkerServes(h);
}

/** An open conversation that has answered one message and waits for the next. */
export async function answeredConversation(h: Harness, name: string): Promise<string> {
  const id = `hostile-${name}-${Date.now()}-${Math.random().toString(36).slice(2, 6)}`;
  await h.conversations.sendMessage(id, uniquePrompt('Hello there'), { start: {} });
  return id;
}

/** The ApplicationFailure a conversation ended with (the test fails if it did not fail). */
export async function conversationFailure(h: Pick<Harness, 'client'>, workflowId: string): Promise<ApplicationFailure> {
  const error = await h.client.workflow
    .getHandle(workflowId)
    .result()
    .then(
      () => assert.fail('the conversation did not fail'),
      (err: unknown) => err,
    );
  assert.ok(error instanceof WorkflowFailedError && error.cause instanceof ApplicationFailure, String(error));
  return error.cause;
}

/** A lone UTF-16 surrogate: text that cannot be encoded. */
export const LONE_SURROGATE = '\ud800';
/** A value far past any limit; a refusal must not echo it. */
export const HUGE = 'x'.repeat(100_000);

/** Starting a conversation with `options` is refused before anything is sent: invalid_options, short, no echo. */
export async function refusedOptions(
  h: Pick<Harness, 'conversations'>,
  options: Record<string, unknown>,
): Promise<string> {
  const error = await h.conversations
    .startConversation({ firstMessage: 'Hello', tools: STOCK_TOOLS, ...options } as never)
    .then(
      () => assert.fail('the options were accepted'),
      (err: unknown) => err,
    );
  assert.ok(error instanceof ConversationError, String(error));
  assert.equal(error.code, 'invalid_options');
  assert.ok(error.message.length < 2_000, 'the message stays short');
  assert.ok(!error.message.includes(HUGE.slice(0, 100)), 'what was sent is not echoed');
  return error.message;
}
