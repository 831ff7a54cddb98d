// What `npm test` prints after a failed run: each failure on a line of its own, named by test file, suite and test, with
// its error, read from node's own TAP output (a real `node --test` run of a sample file, alone and grouped as the
// runner groups files).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { describeFailure, tapCounts, tapFailures } from '../../scripts/tap-failures';

const SAMPLE = `
const assert = require('node:assert/strict');
const { describe, it, before } = require('node:test');
describe('suite A', () => {
  it('passes', () => {});
  it('fails', () => assert.equal(1, 2, 'one is not two'));
});
describe('suite B', () => {
  before(() => { throw new Error('hook broke'); });
  it('never runs', () => {});
});
`;

let root: string;
const sampleFile = path.join('test', 'sample', 'a.test.ts');

function runNodeTest(target: string): string {
  const result = spawnSync(
    process.execPath,
    ['--require', require.resolve('tsx/cjs'), '--test', '--test-reporter=tap', target],
    // Without NODE_TEST_CONTEXT, which would make the inner runner report to this one instead of printing TAP.
    { cwd: root, encoding: 'utf8', timeout: 60_000, env: { ...process.env, NODE_TEST_CONTEXT: undefined } },
  );
  assert.equal(result.status, 1, 'the sample run fails');
  return result.stdout;
}

before(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'tap-failures-'));
  fs.mkdirSync(path.join(root, 'test', 'sample'), { recursive: true });
  fs.writeFileSync(path.join(root, sampleFile), SAMPLE);
});
after(() => fs.rmSync(root, { recursive: true, force: true }));

describe('the failures of a run, from its TAP', () => {
  test('a file run alone: the failed test and the failed hook, not the suites and tests that only echo them', () => {
    const tap = runNodeTest(sampleFile);
    const failures = tapFailures(tap, root);
    assert.deepEqual(
      failures.map(({ names, failureType, error, file }) => ({ names, failureType, error, file })),
      [
        {
          names: ['suite A', 'fails'],
          failureType: 'testCodeFailure',
          error: 'one is not two\n1 !== 2',
          file: sampleFile,
        },
        { names: ['suite B'], failureType: 'hookFailed', error: 'hook broke', file: sampleFile },
      ],
    );
    assert.deepEqual(tapCounts(tap), { tests: 3, pass: 1, fail: 1, cancelled: 1 });
  });

  test("a grouped file (the runner's shared processes) is named by its suite", () => {
    const entry = path.join(root, 'group.cjs');
    const runner = path.resolve(__dirname, '..', 'support', 'test-file-group.ts');
    fs.writeFileSync(
      entry,
      `require(${JSON.stringify(runner)}).runTestFiles(${JSON.stringify(root)}, ${JSON.stringify([sampleFile])}, 1);\n`,
    );
    const failures = tapFailures(runNodeTest(entry), root);
    assert.equal(failures.length, 2);
    assert.ok(failures.every((failure) => failure.file === sampleFile));
    assert.equal(
      describeFailure(failures[0]!),
      `${sampleFile} › suite A › fails (testCodeFailure): one is not two / 1 !== 2`,
      'the group and file suites are not repeated in the names',
    );
  });

  test('a run cut off before its summary has no counts, and a passing one no failures', () => {
    assert.equal(tapCounts('TAP version 13\n# Subtest: x\n'), undefined);
    const passing =
      'TAP version 13\n# Subtest: x\nok 1 - x\n  ---\n  duration_ms: 1\n  ...\n1..1\n# tests 1\n# pass 1\n';
    assert.deepEqual(tapFailures(passing, root), []);
    assert.deepEqual(tapCounts(passing), { tests: 1, pass: 1, fail: 0, cancelled: 0 });
  });
});
