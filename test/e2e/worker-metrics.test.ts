// A worker process started with WORKER_METRICS_ADDRESS serves the SDK's Prometheus metrics: what an operator scrapes to
// see task latencies, slots and the server's round trips (the soak reads activity completions from it).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { after, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { ConversationClient } from '../../client/conversation-client';
import { freePort } from '../../testing/free-port';
import { startMessagesApi } from '../../testing/messages-api/server';
import { parseHistogram } from '../../scripts/soak/prometheus-histogram';
import { namespace, temporalAddress, uniquePrompt } from '../support/harness';
import { startWorkerProcess } from '../support/worker-process';

const dir = mkdtempSync(join(tmpdir(), 'metrics-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('a worker with WORKER_METRICS_ADDRESS serves /metrics, and its figures follow the work done', async () => {
  const mock = await startMessagesApi();
  const connection = await Connection.connect({ address: temporalAddress });
  const taskQueue = `metrics-${randomUUID()}`;
  const port = await freePort();
  const worker = await startWorkerProcess({
    taskQueue,
    anthropicBaseUrl: mock.url,
    executionLog: join(dir, 'executions.jsonl'),
    env: { WORKER_METRICS_ADDRESS: `127.0.0.1:${port}` },
  });
  try {
    assert.match(
      worker.tail(),
      new RegExp(`metrics: http://127\\.0\\.0\\.1:${port}/metrics`),
      'the ready line says where',
    );
    const completions = async (): Promise<number> => {
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      return parseHistogram(text, 'temporal_request_latency', { operation: 'RespondActivityTaskCompleted' }).count;
    };
    const before = await completions();

    const conversations = new ConversationClient({ client: new Client({ connection, namespace }), taskQueue });
    const reply = await conversations.sendMessage(
      `metrics-${randomUUID()}`,
      uniquePrompt('What is the current stock price of General Motors?'),
      {
        start: {
          tools: ['get_ticker_symbol', 'get_current_stock_price'],
          closeAfterFirstReply: true,
        },
      },
    );
    assert.match(reply.text, /38\.50/);
    assert.equal((await completions()) - before, 5, 'three model calls and two tools, each completed once');
  } finally {
    await worker.kill();
    await connection.close();
    await mock.close();
  }
});
