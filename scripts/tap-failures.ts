// Reads node's TAP output (`--test-reporter=tap`) for what `npm test` prints at its end: which tests failed, in which
// test file, with the first lines of their error, and node's closing counts. A whole run prints ~60,000 lines, and a CI
// log that keeps only its start and end hid which test had failed; the runner (scripts/run-tests.ts) prints this recap
// last and reruns the failed files from it. Pure: text in, values out.
import path from 'node:path';

export interface TapFailure {
  /** The names from the outermost suite down to the failed test. */
  names: string[];
  /** node's failureType: testCodeFailure, hookFailed, testTimeoutFailure, … */
  failureType: string;
  /** The error's first lines. */
  error: string;
  /** Where the test was declared (`file:line:column`), when node says. */
  location?: string;
  /** The test file it belongs to, relative to the project root, when it can be told. */
  file?: string;
}

export interface TapCounts {
  tests: number;
  pass: number;
  fail: number;
  cancelled: number;
}

/** Failures that only repeat another's: a suite whose subtests failed, a test cancelled because its hook failed. */
const ECHOES = new Set(['subtestsFailed', 'cancelledByParent']);
const ERROR_LINES = 3;
const MAX_ERROR_CHARS = 300;
const TEST_FILE = /(?:^|[\\/])test[\\/].*\.test\.ts$/;

function unquote(value: string): string {
  const trimmed = value.trim();
  return trimmed.startsWith("'") && trimmed.endsWith("'") && trimmed.length >= 2
    ? trimmed.slice(1, -1).replace(/''/g, "'")
    : trimmed;
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

/** The test file a failure belongs to: a grouped file's suite is named by its path; otherwise where it was declared. */
function fileOf(names: string[], location: string | undefined, root: string): string | undefined {
  const named = names.find((name) => TEST_FILE.test(name));
  if (named) return path.isAbsolute(named) ? path.relative(root, named) : named;
  const declaredIn = location?.replace(/:\d+:\d+$/, '');
  if (declaredIn && TEST_FILE.test(declaredIn)) return path.relative(root, path.resolve(root, declaredIn));
  return undefined;
}

/** The YAML block after a `not ok` line: the keys this recap uses, a block scalar's lines joined. */
function readDiagnostics(lines: string[], from: number): { fields: Record<string, string>; end: number } {
  const fields: Record<string, string> = {};
  if (lines[from]?.trim() !== '---') return { fields, end: from };
  const keyIndent = indentOf(lines[from]!);
  let i = from + 1;
  while (i < lines.length && lines[i]!.trim() !== '...') {
    const line = lines[i]!;
    const match = indentOf(line) === keyIndent ? /^\s*([\w-]+):\s?(.*)$/.exec(line) : null;
    i++;
    if (!match) continue;
    const [, key, value] = match as unknown as [string, string, string];
    if (value.startsWith('|')) {
      const block: string[] = [];
      while (i < lines.length && (lines[i]!.trim() === '' || indentOf(lines[i]!) > keyIndent)) {
        block.push(lines[i]!.trim());
        i++;
      }
      fields[key] = block.join('\n').trim();
    } else {
      fields[key] = unquote(value);
    }
  }
  return { fields, end: i };
}

/** Every failure in a TAP text that is not an echo of another, in the order printed. */
export function tapFailures(tap: string, root: string): TapFailure[] {
  const lines = tap.split(/\r?\n/);
  const failures: TapFailure[] = [];
  // The names of the subtests open at each depth: `# Subtest: name` opens one, four spaces deeper per level.
  const open: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const depth = Math.floor(indentOf(line) / 4);
    const subtest = /^\s*# Subtest: (.*)$/.exec(line);
    if (subtest) {
      open.length = depth;
      open[depth] = subtest[1]!;
      continue;
    }
    const result = /^\s*(not ok|ok) \d+ - (.*?)(?: # (?:SKIP|TODO).*)?$/.exec(line);
    if (!result) continue;
    open.length = depth;
    if (result[1] !== 'not ok') continue;
    const names = [...open, result[2]!];
    const { fields, end } = readDiagnostics(lines, i + 1);
    i = end;
    const failureType = fields.failureType ?? 'unknown';
    if (ECHOES.has(failureType)) continue;
    const error = (fields.error ?? '').split('\n').filter(Boolean).slice(0, ERROR_LINES).join('\n');
    failures.push({
      names,
      failureType,
      error,
      location: fields.location,
      file: fileOf(names, fields.location, root),
    });
  }
  return failures;
}

/** node's closing counts (`# tests N`, `# pass N`, …), or undefined when the run ended before printing them. */
export function tapCounts(tap: string): TapCounts | undefined {
  const count = (key: string): number | undefined => {
    const matches = [...tap.matchAll(new RegExp(`^# ${key} (\\d+)$`, 'gm'))];
    const last = matches.at(-1);
    return last ? Number(last[1]) : undefined;
  };
  const tests = count('tests');
  if (tests === undefined) return undefined;
  return { tests, pass: count('pass') ?? 0, fail: count('fail') ?? 0, cancelled: count('cancelled') ?? 0 };
}

/** One line per failure: `file › suite › test (failureType): the error's first lines / joined`, at most ~400 chars. */
export function describeFailure(failure: TapFailure): string {
  const names = failure.names.filter((name) => name !== failure.file && !/^\d+ test files, \d+ at a time$/.test(name));
  const where = [failure.file ?? failure.location ?? '(file unknown)', ...names].join(' › ');
  // An assertion's first line is often only "Expected values to be strictly equal:"; the values follow it.
  const error = failure.error.split('\n').join(' / ');
  return `${where} (${failure.failureType}): ${error.length > MAX_ERROR_CHARS ? `${error.slice(0, MAX_ERROR_CHARS)}…` : error}`;
}
