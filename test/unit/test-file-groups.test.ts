// How `npm test` puts test files into processes (scripts/run-tests.ts): every file runs exactly once, the unit files
// share one process, the files that change process-wide state get one each, and the long ones spread out.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { groupTestFiles, type TestEntry } from '../../scripts/run-tests';

const FILES = [
  'test/e2e/a.test.ts',
  'test/e2e/b.test.ts',
  'test/e2e/crash.test.ts',
  'test/e2e/deployment.test.ts',
  'test/e2e/package-example.test.ts',
  'test/e2e/tracing.test.ts',
  'test/hostile/client-calls.test.ts',
  'test/hostile/c.test.ts',
  'test/tooling/d.test.ts',
  'test/unit/e.test.ts',
  'test/unit/f.test.ts',
];

const filesOf = (entry: TestEntry): string[] => ('file' in entry ? [entry.file] : entry.files);

test('every file runs exactly once, whatever the number of shared processes', () => {
  for (const groups of [0, 1, 2, 3, 8, 20]) {
    const entries = groupTestFiles(FILES, groups, 4);
    assert.deepEqual(entries.flatMap(filesOf).sort(), [...FILES].sort(), `groups=${groups}`);
  }
});

test('the unit files share one process, one file at a time', () => {
  const unit = groupTestFiles(FILES, 3, 4).find((entry) => 'name' in entry && entry.name === 'unit');
  assert.deepEqual(unit, { name: 'unit', files: ['test/unit/e.test.ts', 'test/unit/f.test.ts'], concurrency: 1 });
});

test('the long files spread over the shared processes, and the short ones fill the one with the fewest seconds', () => {
  const [first, second, third] = groupTestFiles(FILES, 3, 4);
  // package-example (~420 s) and deployment (~380 s) each outlast crash (~200 s) and the four short files together.
  assert.deepEqual(first, { file: 'test/e2e/package-example.test.ts' });
  assert.deepEqual(second, { file: 'test/e2e/deployment.test.ts' });
  assert.deepEqual(third, {
    name: 'files-3-of-3',
    files: [
      'test/e2e/crash.test.ts',
      'test/e2e/a.test.ts',
      'test/e2e/b.test.ts',
      'test/hostile/c.test.ts',
      'test/tooling/d.test.ts',
    ],
    concurrency: 4,
  });
});

test('files that change process-wide state run alone', () => {
  const entries = groupTestFiles(FILES, 3, 4);
  assert.ok(entries.some((entry) => 'file' in entry && entry.file === 'test/e2e/tracing.test.ts'));
  assert.ok(entries.some((entry) => 'file' in entry && entry.file === 'test/hostile/client-calls.test.ts'));
});

test('no shared processes: every file in a process of its own, the longest first', () => {
  const entries = groupTestFiles(FILES, 0, 4);
  assert.equal(entries.length, FILES.length);
  assert.deepEqual(filesOf(entries[0]!), ['test/e2e/package-example.test.ts']);
});

test('a process left with one file runs that file as is', () => {
  assert.deepEqual(groupTestFiles(['test/unit/e.test.ts'], 3, 4), [{ file: 'test/unit/e.test.ts' }]);
  assert.deepEqual(groupTestFiles(['test/e2e/a.test.ts', 'test/unit/e.test.ts'], 3, 4), [
    { file: 'test/e2e/a.test.ts' },
    { file: 'test/unit/e.test.ts' },
  ]);
});
