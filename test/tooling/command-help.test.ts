// Every command of the package answers --help and --version with nothing configured — no token, no server, an empty
// environment — and refuses an unknown option with its usage, before it reads any configuration.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { runWithInput } from '../support/run-script';

const ROOT = path.resolve(__dirname, '..', '..');
const { version, bin } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  bin: Record<string, string>;
};

/** Each bin's source, from where package.json points it in dist/. */
const commands = Object.entries(bin).map(([name, built]) => ({
  name,
  source: path.join(ROOT, built.replace(/^dist\//, '').replace(/\.js$/, '.ts')),
}));

/** The command run from source with only PATH and HOME set (no TEMPORAL_*, no GATEWAY_TOKEN). */
const run = (source: string, args: string[]) =>
  runWithInput(process.execPath, ['--import', 'tsx', source, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    timeoutMs: 60_000,
  });

test('the package has four commands: the CLI, the gateway, the local Messages API and the dev server', () => {
  assert.deepEqual(commands.map((command) => command.name).sort(), [
    'claude-temporal-orchestrator',
    'claude-temporal-orchestrator-dev-server',
    'claude-temporal-orchestrator-gateway',
    'claude-temporal-orchestrator-messages-api',
  ]);
});

for (const { name, source } of commands) {
  test(`${name} --help and --version need no configuration`, async () => {
    const help = await run(source, ['--help']);
    assert.equal(help.code, 0, help.output);
    assert.match(help.stdout, new RegExp(`^usage: ${name} `));
    assert.doesNotMatch(help.stdout, /\.ts\b|npm run/, 'the help names only what ships');
    const shown = await run(source, ['--version']);
    assert.equal(shown.code, 0, shown.output);
    assert.equal(shown.stdout, `${version}\n`);
  });
}

test('claude-temporal-orchestrator gateway --help is the gateway command’s help', async () => {
  const help = await run(commands.find((c) => c.name === 'claude-temporal-orchestrator')!.source, [
    'gateway',
    '--help',
  ]);
  assert.equal(help.code, 0, help.output);
  assert.match(help.stdout, /^usage: claude-temporal-orchestrator-gateway /);
  assert.match(help.stdout, /TEMPORAL_API_KEY/);
});

test('the gateway, the Messages API and the dev server refuse an unknown option with their usage, exit code 2 or 1', async () => {
  for (const { name, source } of commands.filter((c) => c.name !== 'claude-temporal-orchestrator')) {
    const refused = await run(source, ['--no-such-option']);
    assert.notEqual(refused.code, 0, `${name}: ${refused.output}`);
    assert.match(refused.stderr, /--no-such-option/, name);
    assert.match(refused.stderr, new RegExp(`usage: ${name} `), name);
    assert.doesNotMatch(refused.output, /^\s+at /m, `${name}: no stack trace`);
  }
});
