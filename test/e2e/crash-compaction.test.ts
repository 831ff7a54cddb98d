// A worker process SIGKILLed in the middle of a long chain whose context the API compacted: the new worker has no
// cache, reads the conversation's context from the workflow, and sends the compacted context — the same request the
// dead worker sent — not the full one. No tool runs twice and the chain completes.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { ConversationClient } from '../../client/conversation-client';
import type { TurnResult } from '../../common/conversation-types';
import { chainSteps, CHAIN_TOOLS } from '../../scripts/bench/chain-script';
import { startMessagesApi } from '../../testing/messages-api/server';
import type { MessagesApi, RecordedRequest } from '../../testing/messages-api/types';
import { namespace, readExecutions, temporalAddress, uniquePrompt } from '../support/harness';
import { waitUntil } from '../support/wait-until';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';

const STEPS = 14;
/** Each tool output about 5,000 tokens: the 11th call passes the 50,000-token trigger and is compacted. */
const OUTPUT_CHARS = 20_000;
/** The call the worker dies in: two calls after the compaction. */
const KILLED_CALL = 13;

const opensWithCompaction = (request: RecordedRequest | undefined) =>
  request?.body.messages[0]?.content?.[0]?.type === 'compaction';

describe('SIGKILL after a compaction: the new worker sends the compacted context', () => {
  let mock: MessagesApi;
  let connection: Connection;
  let first: WorkerProcess | undefined;
  let second: WorkerProcess | undefined;
  let killedBy: NodeJS.Signals | null = null;
  let reply: TurnResult;
  let requests: RecordedRequest[];
  let id: string;
  const logDir = mkdtempSync(join(tmpdir(), 'crash-compaction-'));
  const executionLog = join(logDir, 'executions.jsonl');

  before(async () => {
    mock = await startMessagesApi({ contextWindowTokens: 60_000 });
    connection = await Connection.connect({ address: temporalAddress });
    const taskQueue = `crash-compaction-${randomUUID()}`;
    const conversations = new ConversationClient({ client: new Client({ connection, namespace }), taskQueue });
    const worker = { taskQueue, anthropicBaseUrl: mock.url, executionLog, toolOutputChars: OUTPUT_CHARS };
    first = await startWorkerProcess(worker);

    // The killed call hangs (its step is a slow copy); the retry gets the step itself.
    const prompt = uniquePrompt('Check the weather and some ticker symbols, one lookup at a time.');
    const steps = chainSteps(STEPS);
    mock.script(prompt, [
      ...steps.slice(0, KILLED_CALL - 1),
      { ...steps[KILLED_CALL - 1]!, delayMs: 120_000 },
      ...steps.slice(KILLED_CALL - 1),
    ]);
    id = `crash-compaction-${randomUUID().slice(0, 8)}`;
    await conversations.startConversation({
      id,
      firstMessage: prompt,
      tools: CHAIN_TOOLS,
      contextManagement: { mode: 'compaction', compaction: { triggerTokens: 50_000 } },
      timeouts: { modelHeartbeat: '2 seconds' },
    });
    await waitUntil(`model call ${KILLED_CALL}`, () => mock.requestsFor(prompt).length >= KILLED_CALL);
    assert.ok(opensWithCompaction(mock.requestsFor(prompt)[KILLED_CALL - 1]), 'the killed call was already compacted');
    await first.kill();
    killedBy = (await first.exited).signal;

    second = await startWorkerProcess(worker);
    reply = await conversations.awaitTurn(id, 1);
    requests = mock.requestsFor(prompt);
  });

  after(async () => {
    await first?.kill();
    await second?.kill();
    await connection?.close();
    await mock?.close();
    rmSync(logDir, { recursive: true, force: true });
  });

  test('the chain completes after the kill', () => {
    assert.equal(killedBy, 'SIGKILL');
    assert.equal(reply.text, `Done after ${STEPS} lookups.`);
    assert.equal(reply.toolCalls, STEPS);
    assert.equal(requests.length, STEPS + 2, 'every call once, the killed one twice');
  });

  test("the new worker's retry carries the compacted context the dead worker sent, not the whole chain", () => {
    const killed = requests[KILLED_CALL - 1]!;
    const retry = requests[KILLED_CALL]!;
    assert.ok(opensWithCompaction(retry));
    assert.deepEqual(retry.body.messages, killed.body.messages);
    // The compacted reply and what followed it: two exchanges, not the 2 × 12 + 1 messages of the whole chain.
    assert.equal(retry.body.messages.length, 4);
    assert.ok(JSON.stringify(retry.body).length < 3 * OUTPUT_CHARS, 'about two tool outputs in the request');
  });

  test('no tool ran twice: the first worker ran the tools before the kill, the second those after', () => {
    const lines = readExecutions(executionLog, id);
    const finished = lines.filter((line) => line.event === 'finish');
    assert.equal(finished.length, STEPS);
    assert.equal(new Set(finished.map((line) => line.idempotencyKey)).size, STEPS);
    assert.equal(lines.filter((line) => line.event === 'start').length, STEPS);
    assert.ok(finished.slice(0, KILLED_CALL - 1).every((line) => line.pid === first!.pid));
    assert.ok(finished.slice(KILLED_CALL - 1).every((line) => line.pid === second!.pid));
  });
});
