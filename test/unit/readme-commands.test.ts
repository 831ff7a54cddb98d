// A person who clones the repository reads the README's first screen and runs two commands: the demo and the whole
// suite. CI runs exactly that test command, so what is green in CI is what the README promises.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

const ROOT = path.join(__dirname, '..', '..');
/** About what a terminal or a repository page shows before one scrolls. */
const FIRST_SCREEN_LINES = 40;

const firstScreen = readFileSync(path.join(ROOT, 'README.md'), 'utf8').split('\n').slice(0, FIRST_SCREEN_LINES);
/** The commands of the README's first shell block. */
function firstScreenCommands(): string[] {
  const open = firstScreen.findIndex((line) => line.trim() === '```sh');
  assert.ok(open >= 0, `no \`\`\`sh block in the README's first ${FIRST_SCREEN_LINES} lines`);
  const close = firstScreen.findIndex((line, i) => i > open && line.trim() === '```');
  assert.ok(close > open, `the README's first shell block ends past line ${FIRST_SCREEN_LINES}`);
  return firstScreen.slice(open + 1, close).map((line) => line.replace(/#.*$/, '').trim());
}

test("the README's first screen gives the demo and the test command", () => {
  const commands = firstScreenCommands();
  assert.ok(commands.includes('npm ci && npm start'), `the demo command is not there: ${JSON.stringify(commands)}`);
  assert.ok(commands.includes('npm test'), `the test command is not there: ${JSON.stringify(commands)}`);
});

test(".ci/run runs exactly the README's test command, last", () => {
  const run = readFileSync(path.join(ROOT, '.ci', 'run'), 'utf8')
    .trimEnd()
    .split('\n');
  assert.equal(run.at(-1), 'exec npm test');
});
