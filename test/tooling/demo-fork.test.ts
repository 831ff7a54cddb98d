// `npm run demo:fork` as a person runs it (against the test run's dev server, without an API key): a two-turn
// conversation, a fork before turn 2 with another model, both answers to turn 2 side by side, no tool run again, and
// both conversations' Web UI links.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runScript } from '../support/run-script';

test('npm run demo:fork forks before turn 2 with another model and prints both answers to it', async () => {
  const output = await runScript('scripts/demo-fork.ts', '--exit');
  const origin = /Conversation (demo-fork-origin-[0-9a-f]+)/.exec(output)?.[1];
  assert.ok(origin, output);
  const fork = new RegExp(`^(\\S+) started in \\d+ ms from ${origin}'s state before turn 2$`, 'm').exec(output)?.[1];
  assert.ok(fork, output);
  const sideBySide = output.slice(output.indexOf('Turn 2, side by side:'));
  assert.match(sideBySide, /original \(.+\): {2}.*Ford/);
  assert.match(sideBySide, /fork \(claude-opus-4-1\): {2}.*Ford/);
  assert.match(
    output,
    /The fork's tool calls: 2 of its own \(turn 1's 2 results came with the transcript; none ran again\)/,
  );
  assert.ok(output.includes(`/workflows/${origin}`), output);
  assert.ok(output.includes(`/workflows/${encodeURIComponent(fork)}`), output);
  assert.ok(output.includes(`(ForkedFrom = "${origin}")`), output);
});
