// The CLI's `--tenant`, `--tenant-weight` and `--priority` (docs/fairness.md): a conversation started from the command
// line carries them to its tasks; `send --priority` is that message's turn's only; a bad one is refused as any bad
// option is, with nothing started.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import { type Harness, startHarness, temporalAddress, uniquePrompt } from '../support/harness';
import { callsTools, says } from '../support/script-steps';

const run = promisify(execFile);
let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

function cli(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, ['--import', 'tsx', join(__dirname, '..', '..', 'client', 'cli.ts'), ...args], {
    env: { ...process.env, TEMPORAL_ADDRESS: temporalAddress, TEMPORAL_TASK_QUEUE: h.taskQueue },
  });
}

/** Each scheduled activity's priority key and fairness key, in order. */
async function activityPriorities(id: string) {
  const history = await h.client.workflow.getHandle(id).fetchHistory();
  return (history.events ?? []).flatMap((e) => {
    const p = e.activityTaskScheduledEventAttributes?.priority;
    return e.activityTaskScheduledEventAttributes ? [`${p?.priorityKey ?? 0}/${p?.fairnessKey ?? ''}`] : [];
  });
}

function scriptLookup(): string {
  const prompt = uniquePrompt('Look up General Motors.');
  h.mock.script(prompt, [callsTools(['get_ticker_symbol', { company_name: 'General Motors' }]), says('GM.')]);
  return prompt;
}

test('start --tenant --tenant-weight --priority, then send --priority: each turn’s tasks carry its own', async () => {
  const id = `cli-fair-${randomUUID().slice(0, 8)}`;
  const base = ['--tools', 'get_ticker_symbol', '--json'];
  const flags = ['--id', id, ...base, '--tenant', 'acme', '--tenant-weight', '3', '--priority', '4'];
  await cli('start', ...flags, scriptLookup());
  const history = await h.client.workflow.getHandle(id).fetchHistory();
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes?.priority;
  assert.deepEqual(
    { key: started?.priorityKey, tenant: started?.fairnessKey, weight: started?.fairnessWeight },
    { key: 4, tenant: 'acme', weight: 3 },
  );
  assert.deepEqual(await activityPriorities(id), ['4/acme', '4/acme', '4/acme']);
  await cli('send', id, '--json', '--priority', '1', 'Thanks.');
  const all = await activityPriorities(id);
  assert.deepEqual(all.slice(0, 3), ['4/acme', '4/acme', '4/acme']);
  assert.ok(all.length > 3, 'the second turn called the model');
  assert.deepEqual(new Set(all.slice(3)), new Set(['1/acme']));
  await cli('end', id);
});

test('start --priority 9: refused, nothing started', async () => {
  const id = `cli-fair-bad-${randomUUID().slice(0, 8)}`;
  await assert.rejects(
    cli('start', '--id', id, '--tools', 'get_ticker_symbol', '--priority', '9', 'hi'),
    (err: Error) => /priority: a priority is from 1/.test(String((err as { stderr?: string }).stderr ?? err.message)),
  );
  await assert.rejects(h.client.workflow.getHandle(id).describe());
});
