// What `npm test` does after a failed run (scripts/run-tests.ts): it names each failure on a line of its own at the
// end, where a CI log that keeps only its end shows it, and runs the failed files again, alone. A test that passes alone
// lost a race under load: the run passes and names it as flaky. One that fails again fails the run. Runs the real
// runner on sample test files (test/fixtures/run-tests/).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';

const ROOT = path.resolve(__dirname, '..', '..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'run-tests-rerun-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

async function runTests(file: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; lines: string[] }> {
  const runner = spawn(process.execPath, ['--require', 'tsx/cjs', 'scripts/run-tests.ts', file], {
    cwd: ROOT,
    // NODE_TEST_CONTEXT unset: the inner runner prints its own TAP instead of reporting to this one.
    env: { ...process.env, NODE_TEST_CONTEXT: undefined, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  runner.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  runner.stderr.resume();
  const code = await new Promise<number | null>((resolve) => runner.once('close', resolve));
  return { code, lines: out.trimEnd().split('\n') };
}

describe('npm test after a failed run', { timeout: 120_000 }, () => {
  test('a test that fails under load and passes alone is named as flaky, and the run passes', async () => {
    const marker = path.join(tmp, 'ran-once');
    const { code, lines } = await runTests('test/fixtures/run-tests/fails-once.test.ts', { FAILS_ONCE_MARKER: marker });
    assert.equal(code, 0);
    const failure =
      'test/fixtures/run-tests/fails-once.test.ts › passes the second time (testCodeFailure): the first run fails';
    assert.ok(lines.includes(`#   ${failure}`), 'the failure is named, with its file and error');
    assert.deepEqual(lines.slice(-4), [
      '# whole run: tests 1, pass 0, fail 1, cancelled 0',
      '# again alone: tests 1, pass 1, fail 0, cancelled 0',
      `# flaky (failed under load, passed alone): ${failure}`,
      '# result: pass, with 1 flaky test',
    ]);
  });

  test('a test that fails again alone fails the run, and is named last', async () => {
    const { code, lines } = await runTests('test/fixtures/run-tests/fails-always.test.ts');
    assert.equal(code, 1);
    assert.deepEqual(lines.slice(-2), [
      '# failed again: test/fixtures/run-tests/fails-always.test.ts › never passes (testCodeFailure): arithmetic still holds / 2 !== 3',
      '# result: FAIL',
    ]);
  });

  test('TEST_RERUNS=0: no second run; the failure is named and the run fails', async () => {
    const marker = path.join(tmp, 'no-rerun');
    const { code, lines } = await runTests('test/fixtures/run-tests/fails-once.test.ts', {
      FAILS_ONCE_MARKER: marker,
      TEST_RERUNS: '0',
    });
    assert.equal(code, 1);
    assert.equal(
      lines.at(-1),
      '#   test/fixtures/run-tests/fails-once.test.ts › passes the second time (testCodeFailure): the first run fails',
    );
    assert.ok(!lines.some((line) => line.includes('again alone')));
  });
});
