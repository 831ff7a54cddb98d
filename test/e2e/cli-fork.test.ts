// The CLI's `fork`: "replay from here with another model" — a fork before a turn, with a changed model and the same
// message, waits for the fork's answer and prints it beside the original's answer to that turn; bad fork points are
// refused as every bad option is.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { type Harness, startHarness, uniquePrompt } from '../support/harness';
import { callsTools, says } from '../support/script-steps';
import { type CliRun, runCli } from '../support/run-cli';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

function cli(...args: string[]): Promise<CliRun> {
  return runCli(h.taskQueue, args);
}

/** A conversation of two turns, the first with a tool call; the script's next step is the fork's answer. */
async function twoTurns(forkAnswer: string) {
  const prompt = uniquePrompt('Look up General Motors.');
  h.mock.script(prompt, [
    callsTools(['get_ticker_symbol', { company_name: 'General Motors' }]),
    says('General Motors trades as GM.'),
    says('GM is at 38.50.'),
    says(forkAnswer),
  ]);
  const id = `cli-fork-${randomUUID().slice(0, 8)}`;
  await h.conversations.sendMessage(id, prompt, { start: { tools: ['get_ticker_symbol'] } });
  await h.conversations.sendMessage(id, 'And its price?');
  return { id, prompt };
}

test('fork --before-turn 2 --model M --message (the same message): both answers, as JSON', async () => {
  const { id, prompt } = await twoTurns('Another model: GM at 38.50, give or take.');
  const forked = await cli(
    'fork',
    id,
    '--before-turn',
    '2',
    '--model',
    'claude-opus-4-1',
    '--message',
    'And its price?',
    '--json',
  );
  assert.equal(forked.code, 0, forked.stdout);
  const json = JSON.parse(forked.stdout);
  assert.equal(json.turn, 2);
  assert.equal(json.forkedFrom.workflowId, id);
  assert.deepEqual(json.answers.original, { text: 'GM is at 38.50.', model: 'claude-sonnet-5-5' });
  assert.deepEqual(json.answers.fork, {
    text: 'Another model: GM at 38.50, give or take.',
    model: 'claude-opus-4-1',
  });
  assert.equal(h.mock.requestsFor(prompt).at(-1)!.body.model, 'claude-opus-4-1');
  // The fork has the origin's first turn, and no tool ran again.
  const transcript = await h.conversations.getTranscript(json.id);
  assert.deepEqual(transcript.slice(0, 4), (await h.conversations.getTranscript(id)).slice(0, 4));
  assert.equal(h.executions(json.id).length, 0);
});

test('fork as a person reads it: the original answer, then the fork’s', async () => {
  const { id } = await twoTurns('Terse: 38.50.');
  const forked = await cli('fork', id, '--before-turn', '2', '--system', 'Be terse.', '--message', 'And its price?');
  assert.equal(forked.code, 0, forked.stderr);
  const lines = forked.stdout.trim().split('\n');
  assert.match(lines[0]!, new RegExp(`^${id}-fork-[0-9a-f]{8}$`));
  assert.deepEqual(lines.slice(1), [
    '── original (claude-sonnet-5-5), turn 2:',
    'GM is at 38.50.',
    '── fork (claude-sonnet-5-5), turn 2:',
    'Terse: 38.50.',
  ]);
});

test('fork without a message prints the new id; bad fork points are invalid_options', async () => {
  const { id } = await twoTurns('unused');
  const plain = await cli('fork', id, '--after-turn', '2', '--json');
  assert.equal(plain.code, 0, plain.stdout);
  const json = JSON.parse(plain.stdout);
  assert.equal(json.turn, 3);
  assert.equal((await h.conversations.getState(json.id)).status, 'awaiting_user');

  for (const args of [
    [],
    ['--before-turn', '1', '--after-turn', '1'],
    ['--before-turn', 'two'],
    ['--before-turn', '0'],
    ['--before-turn', '1.5'],
    ['--before-turn', '99999999999999'],
  ]) {
    const refused = await cli('fork', id, ...args, '--json');
    assert.equal(refused.code, 1, args.join(' '));
    assert.equal(JSON.parse(refused.stdout).error.code, 'invalid_options', args.join(' '));
  }
  const past = await cli('fork', id, '--before-turn', '4', '--json');
  assert.equal(JSON.parse(past.stdout).error.code, 'rejected');
  assert.match(JSON.parse(past.stdout).error.message, /the latest point is before turn 3/);
});

test('fork --after-step N.K --model M: the fork goes on with turn N and its answer prints beside the original', async () => {
  const prompt = uniquePrompt('What is General Motors trading at (CLI step)?');
  h.mock.script(prompt, [
    callsTools(['get_ticker_symbol', { company_name: 'General Motors' }]),
    callsTools(['get_current_stock_price', { symbol: 'GM' }]),
    says('GM is at 38.50.'),
    says('Another model, from the ticker alone: GM.'),
  ]);
  const id = `cli-fork-step-${randomUUID().slice(0, 8)}`;
  await h.conversations.sendMessage(id, prompt, { start: { tools: ['get_ticker_symbol', 'get_current_stock_price'] } });
  const forked = await cli('fork', id, '--after-step', '1.1', '--model', 'claude-opus-4-1');
  assert.equal(forked.code, 0, forked.stderr);
  const lines = forked.stdout.trim().split('\n');
  assert.match(lines[0]!, new RegExp(`^${id}-fork-[0-9a-f]{8}$`));
  assert.deepEqual(lines.slice(1), [
    '── original (claude-sonnet-5-5), turn 1:',
    'GM is at 38.50.',
    '── fork (claude-opus-4-1), turn 1:',
    'Another model, from the ticker alone: GM.',
  ]);
  assert.equal(h.executions(lines[0]).length, 0, 'no tool ran again');

  for (const args of [
    ['--after-step', '1'],
    ['--after-step', '1.0'],
    ['--after-step', '1.1.1'],
    ['--after-step', 'one.two'],
    ['--after-step', '1.1', '--after-turn', '1'],
    ['--after-step', '1.1', '--message', 'Hello'],
  ]) {
    const refused = await cli('fork', id, ...args, '--json');
    assert.equal(refused.code, 1, args.join(' '));
    assert.equal(JSON.parse(refused.stdout).error.code, 'invalid_options', args.join(' '));
  }
  const answer = await cli('fork', id, '--after-step', '1.3', '--json');
  assert.equal(JSON.parse(answer.stdout).error.code, 'rejected');
  assert.match(JSON.parse(answer.stdout).error.message, /step 3 is its answer: fork after turn 1/);
});
