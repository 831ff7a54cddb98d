// Entry points: the commands' settings from outside — the TEMPORAL_* connection variables the CLI and the gateway now
// read (an API key, TLS files), and the command lines of the four bins (--help, --version, the Messages API's and the
// dev server's flags). Whatever is given, a command refuses it at once with a message that names the variable or the
// flag, quotes no secret, prints no stack trace, and never hangs on a connection it cannot make.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { runWithInput } from '../support/run-script';

const ROOT = path.resolve(__dirname, '..', '..');
const CLI = path.join(ROOT, 'client', 'cli.ts');
const GATEWAY = path.join(ROOT, 'gateway', 'main.ts');
const MESSAGES_API = path.join(ROOT, 'testing', 'messages-api', 'main.ts');
const DEV_SERVER = path.join(ROOT, 'testing', 'dev-server', 'main.ts');
const SECRET = 'hostile-secret-4711';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'command-settings-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
const notPem = path.join(dir, 'not.pem');
fs.writeFileSync(notPem, `${SECRET} is not a certificate`);

/** The command from source with only `env` (and PATH, HOME): its exit code and output, within 30 s. */
function run(source: string, args: string[], env: Record<string, string> = {}) {
  return runWithInput(process.execPath, ['--import', 'tsx', source, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    timeoutMs: 30_000,
  });
}

/** Refused at once: a non-zero exit, `expected` in the output, no secret, no stack trace. */
function assertRefused(result: Awaited<ReturnType<typeof run>>, expected: RegExp, what: string): void {
  assert.ok(result.code !== 0 && result.code !== null, `${what}: exit ${result.code}\n${result.output}`);
  assert.match(result.output, expected, what);
  assert.ok(!result.output.includes(SECRET), `${what} quotes the secret: ${result.output}`);
  assert.doesNotMatch(result.output, /^\s+at /m, `${what}: a stack trace`);
}

const hostileSettings: [Record<string, string>, RegExp][] = [
  [{ TEMPORAL_ADDRESS: 'localhost' }, /TEMPORAL_ADDRESS: must be host:port/],
  [{ TEMPORAL_ADDRESS: `${SECRET}\u0007:7233` }, /TEMPORAL_ADDRESS: must be host:port/],
  [{ TEMPORAL_ADDRESS: `${'a'.repeat(100_000)}:7233` }, /TEMPORAL_ADDRESS: must be at most 1,000 characters/],
  [{ TEMPORAL_API_KEY: `${SECRET}\r\nx-evil: 1` }, /TEMPORAL_API_KEY: must be visible ASCII/],
  [{ TEMPORAL_API_KEY: `${SECRET}\u00e9${SECRET}` }, /TEMPORAL_API_KEY: must be visible ASCII/],
  [{ TEMPORAL_TLS: 'TRUE', TEMPORAL_API_KEY: SECRET }, /TEMPORAL_TLS: must be true or false/],
  [{ TEMPORAL_TLS_CLIENT_CERT_PATH: notPem }, /set both \(mTLS\) or neither/],
  [{ TEMPORAL_TLS_SERVER_CA_CERT_PATH: notPem }, /TEMPORAL_TLS_SERVER_CA_CERT_PATH: .* is not a PEM certificate/],
  [{ TEMPORAL_TLS_SERVER_CA_CERT_PATH: '/dev/null' }, /TEMPORAL_TLS_SERVER_CA_CERT_PATH: .* is not a PEM certificate/],
  [{ TEMPORAL_TLS_SERVER_CA_CERT_PATH: dir }, /TEMPORAL_TLS_SERVER_CA_CERT_PATH: .* cannot be read \(EISDIR\)/],
  [
    { TEMPORAL_TLS_CLIENT_CERT_PATH: notPem, TEMPORAL_TLS_CLIENT_KEY_PATH: notPem },
    /TEMPORAL_TLS_CLIENT_CERT_PATH: .* is not a PEM certificate/,
  ],
  [{ TEMPORAL_TLS_SERVER_NAME: `${SECRET} x` }, /TEMPORAL_TLS_SERVER_NAME: must be visible ASCII/],
];

describe('TEMPORAL_* settings the CLI and the gateway read', () => {
  test('the CLI refuses each with invalid_options naming the variable, as JSON with --json', async () => {
    for (const [env, expected] of hostileSettings) {
      const what = `cli ${JSON.stringify(env).slice(0, 120)}`;
      const result = await run(CLI, ['list', '--json'], env);
      assertRefused(result, expected, what);
      assert.equal((JSON.parse(result.stdout) as { error: { code: string } }).error.code, 'invalid_options', what);
    }
  });

  test('the gateway refuses each at start, before it listens', async () => {
    for (const [env, expected] of hostileSettings) {
      const what = `gateway ${JSON.stringify(env).slice(0, 120)}`;
      const result = await run(GATEWAY, [], { GATEWAY_TOKEN: 'a-token-of-sixteen-chars', GATEWAY_PORT: '0', ...env });
      assertRefused(result, expected, what);
      assert.doesNotMatch(result.output, /Gateway listening/, what);
    }
  });
});

describe('command lines', () => {
  test('--help and --version win over anything else on the line, and over a broken environment', async () => {
    for (const source of [CLI, GATEWAY, MESSAGES_API, DEV_SERVER]) {
      const result = await run(source, ['--version', '--help'], { TEMPORAL_ADDRESS: 'broken', MESSAGES_API_PORT: 'x' });
      assert.equal(result.code, 0, `${source}: ${result.output}`);
      assert.match(result.stdout, /^\d+\.\d+\.\d+\n$/, source);
    }
  });

  test('the Messages API refuses bad flags with exit code 2 and its usage, before it listens', async () => {
    const cases: [string[], RegExp][] = [
      [['--port=-1'], /MESSAGES_API_PORT must be a port/],
      [['--port', '65536'], /MESSAGES_API_PORT must be a port/],
      [['--port', 'x'.repeat(10_000)], /MESSAGES_API_PORT must be a port/],
      [['--latency-ms', '1e400'], /MESSAGES_API_LATENCY_MS must be a non-negative integer/],
      [['--script-file', dir], /--script-file .*EISDIR/],
      [['--script-file', notPem], /--script-file .*not valid JSON|Unexpected token/],
      [['--port'], /argument missing/],
      [['stray-positional'], /Unexpected argument/],
    ];
    for (const [args, expected] of cases) {
      const result = await run(MESSAGES_API, args);
      assertRefused(result, expected, `messages-api ${args.join(' ').slice(0, 80)}`);
      assert.equal(result.code, 2, result.output);
      assert.doesNotMatch(result.output, /listening on/);
      assert.ok(result.output.length < 20_000, 'the refusal quotes a bounded part of what was given');
    }
  });

  test('the CLI refuses an unknown or malformed flag with invalid_options and exit code 2: one line, or JSON with --json', async () => {
    for (const args of [['list', '--bogus'], ['list', `--${SECRET.replace(/-/g, '')}x`], ['send', '--id'], ['-Z']]) {
      const plain = await run(CLI, args);
      assertRefused(plain, /^error \(invalid_options\): /m, `cli ${args.join(' ')}`);
      assert.equal(plain.code, 2, plain.output);
      const json = await run(CLI, [...args, '--json']);
      assert.equal(json.code, 2, json.output);
      const { error } = JSON.parse(json.stdout) as { error: { code: string; message: string } };
      assert.equal(error.code, 'invalid_options', json.output);
    }
  });

  test('the dev server refuses bad flags before it starts anything', async () => {
    const cases: [string[], RegExp][] = [
      [['--port', '70000'], /--port takes a port/],
      [['--ui-port', '12ab'], /--ui-port takes a port/],
      [['--port'], /--port needs a value/],
      [['--no-such-flag'], /Unknown option --no-such-flag/],
    ];
    for (const [args, expected] of cases) {
      const result = await run(DEV_SERVER, args);
      assertRefused(result, expected, `dev-server ${args.join(' ')}`);
      assert.doesNotMatch(result.output, /Temporal dev server\n/);
    }
  });
});
