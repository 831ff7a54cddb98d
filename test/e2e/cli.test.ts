// The CLI as a script would use it: --json output, exit codes, and errors as JSON.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { after, before, test } from 'node:test';
import { type Harness, startHarness, temporalAddress, uniquePrompt } from '../support/harness';
import { callsTools, says } from '../support/script-steps';
import { approvalAskedFor } from '../support/awaiting-approval';
import { CLI, runCli } from '../support/run-cli';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the CLI's JSON output, read field by field
async function cli(...args: string[]): Promise<{ code: number; json: any }> {
  const result = await runCli(h.taskQueue, [...args, '--json']);
  return { code: result.code, json: JSON.parse(result.stdout) };
}

test('start with a message, then send, transcript, state and end, all as JSON', async () => {
  const id = `cli-${Date.now()}`;
  const started = await cli(
    'start',
    '--id',
    id,
    '--tools',
    'get_ticker_symbol,get_current_stock_price',
    'What is the current stock price of General Motors?',
  );
  assert.equal(started.code, 0);
  assert.equal(started.json.id, id);
  assert.match(started.json.reply.text, /38\.50/);

  const sent = await cli('send', id, 'Thanks!');
  assert.equal(sent.json.turn, 2);
  assert.equal((await cli('transcript', id)).json.length, 8);
  assert.equal((await cli('state', id)).json.status, 'awaiting_user');
  assert.equal((await cli('end', id)).code, 0);
});

test('an error exits non-zero with a JSON error carrying its code', async () => {
  const missing = await cli('send', `missing-${Date.now()}`, 'Hello');
  assert.equal(missing.code, 1);
  assert.equal(missing.json.error.code, 'not_found');
  const unknown = await cli('start', '--tools', 'get_horoscope');
  assert.equal(unknown.json.error.code, 'invalid_options');
});

test('transcript ends with what the conversation cost; state has costUsd', async () => {
  const id = `cli-cost-${Date.now()}`;
  await cli('start', '--id', id, '--tools', 'get_ticker_symbol,get_current_stock_price', 'Price of General Motors?');
  const state = (await cli('state', id)).json;
  assert.ok(state.costUsd > 0, 'the default model has a published price');
  const { stdout } = await runCli(h.taskQueue, ['transcript', id]);
  assert.match(
    stdout.trimEnd().split('\n').at(-1)!,
    new RegExp(`^\\(cost \\$${state.costUsd.toFixed(4)} · \\d+ tokens\\)$`),
  );
});

test('with --fallback-models, the cost line names what each model answered and cost', async () => {
  const prompt = uniquePrompt('Who answers while the model is overloaded?');
  const overloaded = { fault: 'status', status: 529 } as const;
  const answer = {
    content: [{ type: 'text' as const, text: 'Answered by the fallback.' }],
    stop_reason: 'end_turn' as const,
  };
  // Three attempts overloaded (the default before a fallback), then the fallback answers.
  h.mock.script(prompt, [overloaded, overloaded, overloaded, { reply: answer }]);
  const id = `cli-fallback-${Date.now()}`;
  const started = await cli(
    'start',
    '--id',
    id,
    '--fallback-models',
    'claude-opus-5-5',
    '--tools',
    'get_ticker_symbol',
    prompt,
  );
  assert.equal(started.json.reply.text, 'Answered by the fallback.');
  assert.deepEqual(
    h.mock.requestsFor(prompt).map((r) => r.body.model),
    ['claude-sonnet-5-5', 'claude-sonnet-5-5', 'claude-sonnet-5-5', 'claude-opus-5-5'],
  );
  const state = (await cli('state', id)).json;
  assert.equal(state.byModel['claude-opus-5-5'].calls, 1);
  const { stdout } = await runCli(h.taskQueue, ['transcript', id]);
  const opus = `claude-opus-5-5 \\$${state.byModel['claude-opus-5-5'].costUsd.toFixed(4)} \\(1 call\\)`;
  assert.match(
    stdout.trimEnd().split('\n').at(-1)!,
    new RegExp(`^\\(cost \\$${state.costUsd.toFixed(4)} · \\d+ tokens · .*${opus}`),
  );
});

/** The CLI as a child process whose output is read while it runs. */
function spawnCli(args: string[], stdin?: string, env: NodeJS.ProcessEnv = {}) {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
    env: { ...process.env, TEMPORAL_ADDRESS: temporalAddress, TEMPORAL_TASK_QUEUE: h.taskQueue, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  child.stdout!.on('data', (chunk: Buffer) => (output.stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output.stderr += chunk.toString()));
  if (stdin !== undefined) child.stdin!.end(stdin);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  /** Resolves once `stream` matches, or fails after `ms` (or if the process exits first). */
  const until = async (stream: 'stdout' | 'stderr', pattern: RegExp, ms = 60_000): Promise<RegExpMatchArray> => {
    const deadline = Date.now() + ms;
    let gone = false;
    void exited.then(() => (gone = true));
    for (;;) {
      const match = output[stream].match(pattern);
      if (match) return match;
      if (gone || Date.now() > deadline)
        throw new Error(`no ${pattern} on ${stream}; stdout: ${output.stdout}\nstderr: ${output.stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  return { child, output, exited, until };
}

test('start whose first message waits for an approval prints the id and what it waits for at once', async () => {
  const prompt = uniquePrompt('Buy 2 GM');
  h.mock.script(prompt, [callsTools(['buy_stock', { symbol: 'GM', quantity: 2 }]), says('Bought 2 GM.')]);
  const id = `cli-approval-${Date.now()}`;
  const started = spawnCli(['start', '--id', id, '--tools', 'buy_stock', prompt]);
  try {
    await started.until('stdout', new RegExp(`^${id}$`, 'm'));
    // The command to give it, as a user of the package has it.
    const [, named, callId] = await started.until(
      'stderr',
      /Waiting for approval of buy_stock\(.*\): claude-temporal-orchestrator approve (\S+) (\S+)/,
    );
    assert.equal(named, id);
    assert.equal(started.child.exitCode, null, 'the turn has not ended: it waits for the approval');
    const pending = (await h.conversations.getState(id)).pendingApprovals;
    assert.deepEqual(
      pending.map((p) => p.callId),
      [callId],
    );
    const approved = await cli('approve', id, callId!);
    assert.equal(approved.json.approved, true);
    assert.equal(await started.exited, 0);
    assert.deepEqual(started.output.stdout.trimEnd().split('\n'), [id, 'Bought 2 GM.']);
  } finally {
    started.child.kill();
  }
});

test('start --json writes one document to stdout and nothing to stderr, even while its turn waits for an approval', async () => {
  const prompt = uniquePrompt('Buy 3 GM');
  h.mock.script(prompt, [callsTools(['buy_stock', { symbol: 'GM', quantity: 3 }]), says('Bought 3 GM.')]);
  const id = `cli-json-approval-${Date.now()}`;
  const ui = 'http://ui.example.test:8233';
  const started = spawnCli(['start', '--json', '--id', id, '--tools', 'buy_stock', prompt], undefined, {
    TEMPORAL_UI_URL: ui,
  });
  try {
    const pending = await approvalAskedFor(h.conversations, id, { timeoutMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // what the CLI would say while it waits
    assert.equal((await cli('approve', id, pending.callId)).json.approved, true);
    assert.equal(await started.exited, 0, started.output.stderr);
    assert.equal(started.output.stderr, '', 'no progress, note or link on stderr with --json');
    const document = JSON.parse(started.output.stdout) as { id: string; url: string; reply: { text: string } };
    assert.deepEqual(
      { id: document.id, url: document.url, text: document.reply.text },
      { id, url: `${ui}/namespaces/default/workflows/${id}`, text: 'Bought 3 GM.' },
    );
  } finally {
    started.child.kill();
  }
});

test('chat with piped stdin answers each line and exits 0 at the end of the input', async () => {
  const id = `cli-chat-${Date.now()}`;
  const prompt = uniquePrompt('Hello there');
  h.mock.script(prompt, [
    { reply: { content: [{ type: 'text', text: 'Hi from the pipe.' }], stop_reason: 'end_turn' } },
  ]);
  const chat = spawnCli(['chat', id, '--tools', 'get_weather'], `${prompt}\n/state\n`);
  try {
    assert.equal(await chat.exited, 0, chat.output.stderr);
    assert.match(chat.output.stdout, /claude> Hi from the pipe\./);
    assert.match(chat.output.stdout, /"status": "awaiting_user"/, 'the line after the message was read too');
    assert.doesNotMatch(chat.output.stderr, /ERR_USE_AFTER_CLOSE|Error/);
  } finally {
    chat.child.kill();
  }
  // Nothing at all on stdin: the same clean exit.
  const empty = spawnCli(['chat', `cli-chat-empty-${Date.now()}`], '');
  assert.equal(await empty.exited, 0, empty.output.stderr);
});
