// A tool that raises ToolError on purpose (TickerNotFound) is not an incident: the worker must not log it at WARN,
// where its message, which quotes the model's input, would land in plain text even with payload encryption on.
// The activity runs in the SDK's own activity runtime (MockActivityEnvironment runs the worker's Activity class).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApplicationFailure, ApplicationFailureCategory, type LogLevel, type LogMetadata } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createToolActivities } from '../../activities/tool-activities';
import { demoTools } from '../../testing/demo-tools';

const SECRET_NAME = 'Acme secret project Zebra';

async function runLogged(tool: string, input: Record<string, unknown>) {
  const entries: { level: LogLevel; message: string; meta?: LogMetadata }[] = [];
  const logger = new DefaultLogger('TRACE', (entry) => entries.push(entry));
  const env = new MockActivityEnvironment({ activityType: tool }, { logger });
  const activities = createToolActivities(demoTools);
  const activity = activities[tool as keyof typeof activities] as (input: unknown) => Promise<unknown>;
  const error = await env.run(activity, { idempotencyKey: 'wf/run/call', protocol: 'native', input }).then(
    () => undefined,
    (err: unknown) => err,
  );
  return { entries, error };
}

test('a ToolError fails the activity as a benign ApplicationFailure, with its type and retry setting', async () => {
  const { error } = await runLogged('get_ticker_symbol', { company_name: SECRET_NAME });
  assert.ok(error instanceof ApplicationFailure);
  assert.equal(error.type, 'TickerNotFound');
  assert.equal(error.nonRetryable, true);
  assert.equal(error.category, ApplicationFailureCategory.BENIGN);
});

test('a ToolError is not logged at WARN or above, so its input-quoting message stays out of the logs', async () => {
  const { entries } = await runLogged('get_ticker_symbol', { company_name: SECRET_NAME });
  const loud = entries.filter((e) => e.level === 'WARN' || e.level === 'ERROR');
  assert.deepEqual(
    loud.map((e) => e.message),
    [],
  );
  assert.ok(
    entries.some((e) => e.level === 'DEBUG' && e.message === 'Activity failed'),
    'it is still there when asked for (DEBUG)',
  );
});
