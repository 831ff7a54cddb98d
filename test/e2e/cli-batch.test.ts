// The CLI's `--batch`: a conversation started from the command line sends its model calls through Message Batches
// (docs/batches.md), and the cost it prints is the batch rate's.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { type Harness, startHarness, uniquePrompt } from '../support/harness';
import { callsTools, says } from '../support/script-steps';
import { type CliRun, runCli } from '../support/run-cli';

let h: Harness;
before(async () => {
  h = await startHarness({ batchDelayMs: 100 });
});
after(async () => {
  await h?.close();
});

async function cli(...args: string[]): Promise<CliRun> {
  const result = await runCli(h.taskQueue, args);
  assert.equal(result.code, 0, result.stderr);
  return result;
}

test('start --batch: every model call goes through a batch, at half the price of the same chain without', async () => {
  const answers: Record<string, { costUsd: number; batches: number }> = {};
  for (const mode of ['interactive', 'batch'] as const) {
    const prompt = uniquePrompt('Look up General Motors.');
    h.mock.script(prompt, [callsTools(['get_ticker_symbol', { company_name: 'General Motors' }]), says('GM.')]);
    const before = h.mock.requests.filter((r) => r.method === 'POST' && r.path === '/v1/messages/batches').length;
    const id = `cli-batch-${mode}-${randomUUID().slice(0, 8)}`;
    const flags = ['--id', id, '--tools', 'get_ticker_symbol', '--json', ...(mode === 'batch' ? ['--batch'] : [])];
    const { stdout } = await cli('start', ...flags, prompt);
    const reply = (JSON.parse(stdout) as { reply: { text: string; costUsd: number } }).reply;
    assert.equal(reply.text, 'GM.');
    const after = h.mock.requests.filter((r) => r.method === 'POST' && r.path === '/v1/messages/batches').length;
    answers[mode] = { costUsd: reply.costUsd, batches: after - before };
  }
  assert.equal(answers.interactive!.batches, 0);
  assert.equal(answers.batch!.batches, 2, 'one batch per model call: the tool call, then the answer');
  assert.ok(answers.interactive!.costUsd > 0);
  assert.ok(Math.abs(answers.batch!.costUsd - answers.interactive!.costUsd / 2) < 1e-12, JSON.stringify(answers));
});
