// The import graph's rules (.dependency-cruiser.cjs, run by `npm run lint`, which the suite does not run): the project
// keeps them, and each rule and exception does what it says, checked on a small tree that breaks each one once.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';

const ROOT = path.resolve(__dirname, '..', '..');
const CONFIG = path.join(ROOT, '.dependency-cruiser.cjs');

interface Violation {
  from: string;
  to: string;
  rule: { name: string; severity: string };
  comment?: string;
}

/** dependency-cruiser over `cwd` with the project's rules: its exit code and what it printed. */
function cruise(cwd: string, outputType: 'json' | 'err-long'): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [
        path.join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs'),
        '--config',
        CONFIG,
        '--output-type',
        outputType,
        '.',
      ],
      { cwd, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, output: `${stdout}${stderr}`.trim() });
      },
    );
  });
}

describe('import rules', { timeout: 300_000 }, () => {
  test("the project's imports keep the rules (npm run lint's dependency-cruiser finds no error)", async () => {
    const { code, output } = await cruise(ROOT, 'err-long');
    assert.equal(code, 0, output);
  });

  const tree = fs.mkdtempSync(path.join(os.tmpdir(), 'import-rules-'));
  after(() => fs.rmSync(tree, { recursive: true, force: true }));

  test('each rule refuses the import it names, and each exception lets through only its own import', async () => {
    const files: Record<string, string> = {
      'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'nodenext', strict: true } }),
      // A circle of type-only imports.
      'common/a.ts': "import type { B } from './b';\nexport type A = B[];\n",
      'common/b.ts': "import type { A } from './a';\nexport interface B { a?: A }\n",
      // Product code importing a rig; workflow code importing the Node side (and streaming's worker side).
      'gateway/server.ts': "import { kit } from '../testing/kit';\nexport const server = kit;\n",
      'testing/kit.ts': 'export const kit = 1;\n',
      'workflows/w.ts': "import { act } from '../activities/act';\nexport const w = act;\n",
      'activities/act.ts': "import type { B } from '../common/b';\nexport const act: B = {};\n",
      'streaming/workflow/log.ts': "import { relay } from '../worker/relay';\nexport const log = relay;\n",
      'streaming/worker/relay.ts': "import type { B } from '../common-types';\nexport const relay: B = 1;\n",
      'streaming/common-types.ts': 'export type B = number;\n',
      // Imports running up into an entry point.
      'tracing/t.ts': "import { bundles } from '../workers/bundles';\nexport const t = bundles;\n",
      'workers/bundles.ts': 'export const bundles = 1;\n',
      'client/c.ts': "import { server } from '../gateway/server';\nexport const c = server;\n",
      // The exceptions: their own import passes, any other does not.
      'workers/main.ts':
        "import { tools } from '../testing/demo-tools';\nimport { kit } from '../testing/kit';\nexport const main = [tools, kit];\n",
      'testing/demo-tools/index.ts': 'export const tools = 1;\n',
      'client/cli.ts':
        "import { run } from '../gateway/main';\nimport { server } from '../gateway/server';\nexport const cli = [run, server];\n",
      'gateway/main.ts': 'export const run = 1;\n',
    };
    for (const [file, text] of Object.entries(files)) {
      fs.mkdirSync(path.join(tree, path.dirname(file)), { recursive: true });
      fs.writeFileSync(path.join(tree, file), text);
    }
    const { output } = await cruise(tree, 'json');
    const violations = (JSON.parse(output) as { summary: { violations: Violation[] } }).summary.violations;
    assert.deepEqual(violations.map(({ rule, from, to }) => `${rule.name}: ${from} -> ${to}`).sort(), [
      'client-imports-no-gateway-or-workers: client/c.ts -> gateway/server.ts',
      'client-imports-no-gateway-or-workers: client/cli.ts -> gateway/server.ts',
      'no-circular: common/a.ts -> common/b.ts', // a circle is reported once, from its first file
      'no-import-up-into-entry-points: tracing/t.ts -> workers/bundles.ts',
      'product-imports-no-rig: gateway/server.ts -> testing/kit.ts',
      'product-imports-no-rig: workers/main.ts -> testing/kit.ts',
      'workflow-side-imports-no-node-side: streaming/workflow/log.ts -> streaming/worker/relay.ts',
      'workflow-side-imports-no-node-side: workflows/w.ts -> activities/act.ts',
    ]);
    // What a failed lint tells its reader (npm run lint prints err-long): each broken rule's reason and what to do.
    const printed = (await cruise(tree, 'err-long')).output.replace(/\s+/g, ' ');
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the rules as dependency-cruiser loads them
    const { forbidden } = require(CONFIG) as { forbidden: { name: string; comment: string }[] };
    for (const { rule } of violations) {
      const comments = forbidden.filter(({ name }) => name === rule.name).map(({ comment }) => comment);
      assert.ok(
        comments.some((comment) => printed.includes(comment.replace(/\s+/g, ' '))),
        `${rule.name}'s comment is printed`,
      );
    }
  });
});
