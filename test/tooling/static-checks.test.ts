// The checks that need no running code: the project type-checks (`npm run typecheck`), ESLint finds nothing and every
// file is formatted as Prettier writes it (`npm run lint`). They run here, as one test file of the suite, instead of
// before it: the test runner fills the cores with them while other files wait on servers, workers and timeouts, and a
// failure shows in the suite's `# fail` count like any other.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';

const ROOT = path.resolve(__dirname, '..', '..');

/** Runs a dev dependency's command line from the project root: its exit code and everything it printed. */
function check(bin: string, args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(ROOT, 'node_modules', bin), ...args],
      { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, output: `${stdout}${stderr}`.trim() });
      },
    );
  });
}

describe('static checks', { timeout: 600_000 }, () => {
  test('the project type-checks (tsc --noEmit)', async () => {
    const { code, output } = await check('typescript/bin/tsc', ['--noEmit', '-p', 'tsconfig.json']);
    assert.equal(code, 0, output);
  });

  test('ESLint finds nothing', async () => {
    const { code, output } = await check('eslint/bin/eslint.js', ['.']);
    assert.equal(code, 0, output);
  });

  test('every file is formatted as Prettier writes it', async () => {
    const { code, output } = await check('prettier/bin/prettier.cjs', ['--check', '.']);
    assert.equal(code, 0, output);
  });
});
