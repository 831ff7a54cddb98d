// The package as another service uses it: `npm pack`, the example service (examples/unit-converter/) installed from
// the tarball in a temporary directory outside the repository, type-checked against the installed .d.ts, then its
// own worker and starter against the suite's dev server and a local Messages API server scripted to call the
// example's tools. Also: what the tarball carries, the README's TypeScript snippets, and the example's own tests.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  npmEnv,
  PACKAGE_NAME,
  type PackedExample,
  packAndInstallExample,
  run,
  startExampleWorker,
} from '../../scripts/packed-example';
import { runWithInput, startWithOutput } from '../support/run-script';
import { startMessagesApi } from '../../testing/messages-api/server';
import type { MessagesApi } from '../../testing/messages-api/types';

const ROOT = path.resolve(__dirname, '..', '..');
const temporal = {
  TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS ?? 'localhost:7233',
  TEMPORAL_NAMESPACE: process.env.TEMPORAL_NAMESPACE ?? 'default',
};

let example: PackedExample | undefined;
let mock: MessagesApi | undefined;
const figures: string[] = [];

/** A figure of the setup: shown by the first test, and on stderr at once, so that a setup cut short still says where. */
function figure(line: string): void {
  figures.push(line);
  process.stderr.write(`package-example: ${line}\n`);
}

// No time budget of its own for the setup or the tests: every command they run has one (run's 300 s, a worker's
// 120 s), and a shared test process bounds the file (FILE_TIMEOUT_MS). A 600 s budget for pack + install + compile
// (~150 s on a quiet machine) ran out in whole runs on two cores, where they start beside the other npm/tsc-heavy files.
before(async () => {
  example = await packAndInstallExample(figure);
  figure(`tarball: ${fs.statSync(example.tarball).size} bytes`);
  mock = await startMessagesApi();
});

after(async () => {
  await mock?.close();
  example?.remove();
});

/** The example's environment: the suite's server, a task queue of its own, the local Messages API. */
function exampleEnv(taskQueue: string): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, ...temporal, TEMPORAL_TASK_QUEUE: taskQueue, ANTHROPIC_BASE_URL: mock!.url };
}

async function runStarter(taskQueue: string, messages: string[]): Promise<string> {
  const app = example!.app;
  const { stdout } = await run(process.execPath, [path.join(app, 'dist', 'src', 'start.js'), ...messages], {
    cwd: app,
    env: exampleEnv(taskQueue),
    timeoutMs: 120_000,
  });
  return stdout;
}

describe('the package, installed from its tarball by another service', () => {
  test('npm pack --dry-run lists the compiled package only: no tests, benchmarks, scripts or results', async (t) => {
    for (const line of figures) t.diagnostic(line);
    const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: ROOT,
      env: npmEnv(),
    });
    const [packed] = JSON.parse(stdout) as { files: { path: string }[]; size: number; unpackedSize: number }[];
    t.diagnostic(
      `npm pack: ${packed!.size} bytes packed, ${packed!.unpackedSize} unpacked, ${packed!.files.length} files`,
    );
    const files = packed!.files.map((file) => file.path);
    for (const file of files) {
      // The README's links resolve in the tarball too: the docs and CONTRIBUTING.md ship beside it.
      const text = /^(README|CONTRIBUTING)\.md$|^docs\/[\w-]+\.md$/.test(file);
      assert.ok(file.startsWith('dist/') || file === 'package.json' || text, `${file} is packed`);
      assert.doesNotMatch(file, /(^|\/)(test|tests|scripts|bench|soak|results|test-artifacts|examples)\//, file);
      assert.doesNotMatch(file, /\.test\.|\.ts$(?<!\.d\.ts)|\.tgz$/, file);
    }
    // Every entry point of the exports map is in it, with its types, and the pre-built workflow bundles.
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      exports: Record<string, string | { types: string; default: string }>;
    };
    for (const [entry, target] of Object.entries(manifest.exports)) {
      for (const file of typeof target === 'string' ? [target] : [target.types, target.default]) {
        assert.ok(files.includes(file.replace(/^\.\//, '')), `${entry}: ${file} is not packed`);
      }
    }
    // One pre-built bundle ships (what every worker without encryption or tracing runs); variants are built at start.
    assert.deepEqual(
      files.filter((file) => file.startsWith('dist/workflow-bundles/')),
      ['dist/workflow-bundles/default.js'],
    );
    assert.ok(packed!.size <= 2 * 2 ** 20, `the tarball has ${packed!.size} bytes: at most 2 MiB`);
    assert.ok(!files.some((file) => file.startsWith('dist/workers/main.')), "this repository's demo worker stays out");
  });

  test('the example compiles against the installed .d.ts, and the package’s own .d.ts are error-free', async () => {
    const app = example!.app;
    assert.ok(fs.existsSync(path.join(app, 'dist', 'src', 'worker.js')), 'tsc -p . compiled the example');
    // The example skips library checks, as most services do; its compile turned them on to check the package's
    // declarations too. (Other packages' .d.ts are not ours to fix: @temporalio/common's import 'ms', which ships no
    // types.)
    const ours = example!.libraryErrors.filter((line) => line.includes(`node_modules/${PACKAGE_NAME}/`));
    assert.deepEqual(ours, []);
    // A plain install (the example has no npm overrides) holds one copy of each Temporal SDK package (the workflow
    // code and the client would break on two).
    const sdk = ['activity', 'client', 'common', 'proto', 'worker', 'workflow'].map((name) => `@temporalio/${name}`);
    const manifest = JSON.parse(fs.readFileSync(path.join(app, 'package.json'), 'utf8')) as { overrides?: unknown };
    assert.equal(manifest.overrides, undefined, 'the example installs without overrides');
    const { stdout } = await run('npm', ['ls', '--all', '--parseable', ...sdk], { cwd: app, env: npmEnv() });
    const copies = [...new Set(stdout.split('\n').filter(Boolean))].map((dir) => path.relative(app, dir));
    assert.deepEqual(
      copies.sort(),
      sdk.map((name) => `node_modules/${name}`),
    );
  });

  test('arethetypeswrong finds no problem in any entry point, for CommonJS, ESM (node16) and bundler consumers', async (t) => {
    const attw = path.join(ROOT, 'node_modules', '@arethetypeswrong', 'cli', 'dist', 'index.js');
    const { stdout } = await run(process.execPath, [attw, example!.tarball, '--format', 'json'], { cwd: ROOT });
    const report = JSON.parse(stdout) as {
      analysis: { problems: unknown[]; entrypoints: Record<string, { resolutions: Record<string, unknown> }> };
    };
    const entrypoints = Object.keys(report.analysis.entrypoints);
    t.diagnostic(`attw: ${report.analysis.problems.length} problems in ${entrypoints.length} entry points`);
    assert.deepEqual(report.analysis.problems, []);
    assert.ok(entrypoints.includes('./client') && entrypoints.includes('./worker'), entrypoints.join(', '));
    for (const entrypoint of Object.values(report.analysis.entrypoints)) {
      assert.deepEqual(Object.keys(entrypoint.resolutions).sort(), ['bundler', 'node10', 'node16-cjs', 'node16-esm']);
    }
  });

  test("the example's worker runs its own tools, and the starter's answers come from them", async (t) => {
    const taskQueue = `example-${randomUUID()}`;
    const worker = await startExampleWorker(example!.app, exampleEnv(taskQueue));
    t.diagnostic(`worker ready in ${Math.round(worker.readyMs)} ms (pre-built workflow bundle)`);
    try {
      assert.match(worker.output(), /tools: convert_units, lookup_unit;/);
      assert.match(
        worker.output(),
        /workflow bundle: .*node_modules\/claude-temporal-orchestrator\/dist\/workflow-bundles\/default\.js;/,
      );
      // The model (scripted) calls the example's tools; the demo model then answers from the tool results.
      const tag = `[units-${randomUUID().slice(0, 8)}]`;
      mock!.script(tag, [
        {
          reply: {
            content: [{ type: 'tool_use', name: 'convert_units', input: { value: 26.2, from: 'mi', to: 'km' } }],
            stop_reason: 'tool_use',
          },
        },
        { demo: true },
        {
          reply: {
            content: [{ type: 'tool_use', name: 'lookup_unit', input: { unit: 'smoot' } }],
            stop_reason: 'tool_use',
          },
        },
        { demo: true },
      ]);
      const stdout = await runStarter(taskQueue, [`How many kilometres is 26.2 miles? ${tag}`, 'And a smoot?']);
      assert.match(stdout, /tools: convert_units, lookup_unit/, 'the client learned the tools from the worker');
      assert.match(stdout, /assistant {2}convert_units returned: \{"value":42\.1648128,"unit":"km"\}/);
      assert.match(stdout, /assistant {2}I couldn't look that up: UnknownUnit: no unit called "smoot"/);
      assert.match(stdout, /status {5}completed after 2 turn\(s\)/);

      const requests = mock!.requestsFor(tag);
      assert.equal(requests.length, 4);
      const convert = requests[0]!.body.tools.find((tool: { name: string }) => tool.name === 'convert_units');
      assert.deepEqual(Object.keys(convert.input_schema.properties), ['value', 'from', 'to'], 'zod → input_schema');
      const [result] = requests[1]!.body.messages.at(-1).content;
      assert.equal(result.type, 'tool_result');
      assert.equal(result.is_error ?? false, false);
      assert.deepEqual(JSON.parse(result.content), { value: 42.1648128, unit: 'km' });
      const [failure] = requests[3]!.body.messages.at(-1).content;
      assert.equal(failure.is_error, true);
    } finally {
      assert.equal(await worker.stop(), 0, worker.output());
    }
  });

  test("the package's commands: npx … chat from a pipe and npx … gateway (HTTP + SSE) on the example's worker, with Web UI links", async (t) => {
    const app = example!.app;
    const taskQueue = `example-${randomUUID()}`;
    const ui = 'http://ui.example.test:8233';
    const env = { ...exampleEnv(taskQueue), ...npmEnv(), TEMPORAL_UI_URL: ui };
    const npx = (args: string[], options: { input?: string; env?: NodeJS.ProcessEnv } = {}) =>
      runWithInput('npx', ['--no-install', ...args], { cwd: app, env: options.env ?? env, input: options.input });

    const help = await npx(['claude-temporal-orchestrator', '--help']);
    assert.equal(help.code, 0, help.output);
    assert.match(help.stdout, /^usage: claude-temporal-orchestrator <command>/);
    assert.doesNotMatch(help.stdout, /\.ts\b|npm run/, 'help names only what ships');
    // Every bin answers --help and --version with nothing configured (no token, no server).
    const bare = Object.fromEntries(
      Object.entries(npmEnv()).filter(([name]) => !/^(TEMPORAL|GATEWAY|MESSAGES_API|ANTHROPIC)_/.test(name)),
    );
    for (const bin of [
      'claude-temporal-orchestrator-gateway',
      'claude-temporal-orchestrator-messages-api',
      'claude-temporal-orchestrator-dev-server',
    ]) {
      const shown = await npx([bin, '--help'], { env: bare });
      assert.equal(shown.code, 0, shown.output);
      assert.match(shown.stdout, new RegExp(`^usage: ${bin} `));
      assert.equal((await npx([bin, '--version'], { env: bare })).stdout, '0.1.0\n');
    }
    // The local Messages API as a command, with a script file: what a dev loop points its worker at.
    const scripts = path.join(app, 'scripts.json');
    const scripted = [{ reply: { content: [{ type: 'text', text: 'From the file.' }], stop_reason: 'end_turn' } }];
    fs.writeFileSync(scripts, JSON.stringify({ '[dev-loop]': scripted }));
    const bin = path.join(app, 'node_modules', '.bin', 'claude-temporal-orchestrator-messages-api');
    const messagesApi = startWithOutput(bin, ['--port', '0', '--script-file', scripts], { cwd: app, env: bare });
    try {
      const url = await messagesApi.waitFor(/listening on (http:\/\/\S+)/);
      const answer = await fetch(`${url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'local', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({
          model: 'claude-sonnet-5-5',
          max_tokens: 64,
          messages: [{ role: 'user', content: 'Hello [dev-loop]' }],
        }),
      });
      assert.equal(answer.status, 200, await answer.clone().text());
      assert.equal(((await answer.json()) as { content: { text: string }[] }).content[0]!.text, 'From the file.');
    } finally {
      assert.equal(await messagesApi.stop(), 0, messagesApi.output());
    }

    const worker = await startExampleWorker(app, exampleEnv(taskQueue));
    try {
      // chat: every line of the pipe is a message; the tools default to what the queue's worker runs.
      const tag = `[bin-${randomUUID().slice(0, 8)}]`;
      mock!.script(tag, [
        {
          reply: {
            content: [{ type: 'tool_use', name: 'convert_units', input: { value: 1, from: 'mi', to: 'km' } }],
            stop_reason: 'tool_use',
          },
        },
        { demo: true },
      ]);
      const id = `bin-chat-${randomUUID().slice(0, 8)}`;
      const chat = await npx(['claude-temporal-orchestrator', 'chat', id], { input: `How far is a mile? ${tag}\n` });
      assert.equal(chat.code, 0, chat.output);
      assert.match(chat.stdout, /convert_units/);
      assert.match(chat.stdout, /1\.609344/);
      assert.ok(chat.stderr.includes(`Web UI: ${ui}/namespaces/default/workflows/${id}`), chat.stderr);
      t.diagnostic(`chat: ${chat.stdout.split('\n').length} lines`);

      // gateway: the chat page's API and event stream, from the package's own command.
      // The bin itself (npx would pass SIGTERM on and exit at once, leaving the gateway to finish alone).
      const bin = path.join(app, 'node_modules', '.bin', 'claude-temporal-orchestrator');
      const gateway = startWithOutput(bin, ['gateway'], {
        cwd: app,
        env: { ...env, GATEWAY_TOKEN: 'a-token-of-sixteen-chars', GATEWAY_PORT: '0' },
      });
      try {
        const url = await gateway.waitFor(/Gateway listening on (http:\/\/\S+)/);
        const auth = { authorization: 'Bearer a-token-of-sixteen-chars' };
        const config = (await (await fetch(`${url}/api/config`, { headers: auth })).json()) as {
          temporalUiUrl: string;
        };
        assert.equal(config.temporalUiUrl, ui);
        const page = await fetch(`${url}/`);
        assert.equal(page.status, 200, 'the chat page ships with the package');
        const started = await fetch(`${url}/api/conversations`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ message: 'Hello from the gateway' }),
        });
        assert.equal(started.status, 201);
        const { id: gatewayId } = (await started.json()) as { id: string };
        const events = await fetch(`${url}/api/conversations/${gatewayId}/events?from=0`, { headers: auth });
        const reader = events.body!.getReader();
        let seen = '';
        while (!seen.includes('event: turn_finished')) {
          const { value, done } = await reader.read();
          assert.ok(!done, `the stream ended before the turn: ${seen}`);
          seen += Buffer.from(value).toString();
        }
        await reader.cancel();
      } finally {
        assert.equal(await gateway.stop(), 0, gateway.output());
      }
    } finally {
      assert.equal(await worker.stop(), 0, worker.output());
    }
  });

  test("the example's own tests pass: written with the testing entry point (startConversationTestEnv), one with an MCP server", async () => {
    const app = example!.app;
    const { stdout } = await run(
      process.execPath,
      [
        '--test',
        '--test-reporter=tap',
        path.join('dist', 'test', 'conversation.test.js'),
        path.join('dist', 'test', 'memory.test.js'),
      ],
      { cwd: app, env: { PATH: process.env.PATH, ...temporal }, timeoutMs: 180_000 },
    );
    assert.match(stdout, /^# pass 3$/m);
    assert.match(stdout, /^# fail 0$/m);
    assert.match(
      stdout,
      /^ok \d+ - the model converts with the service’s tool, keeps the result in the memory server/m,
    );
  });

  test('every TypeScript snippet in README.md compiles against the installed package', async () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const snippets = [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);
    assert.ok(snippets.length >= 5, `found ${snippets.length} snippets`);
    // They compile as the README says they must run: ES modules (top-level await, `./tools.js`), module nodenext.
    assert.match(readme, /examples below are ES modules, as `tsc` with `"module": "nodenext"`[^]*?`"type": "module"`/);
    // Each snippet names its file on its first line (`// src/worker.ts`), so that snippets can import each other.
    const dir = path.join(example!.app, 'readme');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'package.json'), '{ "type": "module" }\n');
    const files = snippets.map((code) => {
      const file = /^\/\/ (\S+\.ts)\n/.exec(code)?.[1];
      assert.ok(file, `a README snippet does not start with its file name:\n${code.slice(0, 200)}`);
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      fs.writeFileSync(path.join(dir, file), code);
      return file;
    });
    assert.equal(new Set(files).size, files.length, `two snippets name the same file: ${files.join(', ')}`);
    const tsc = path.join(example!.app, 'node_modules', 'typescript', 'bin', 'tsc');
    const options = ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--types', 'node'];
    await run(process.execPath, [tsc, ...options, '--skipLibCheck', ...files], { cwd: dir });
  });

  test('without the pre-built bundles the worker bundles the workflow code from node_modules at start', async (t) => {
    const bundles = path.join(example!.installedPackage, 'dist', 'workflow-bundles');
    const hidden = `${bundles}.hidden`;
    fs.renameSync(bundles, hidden);
    try {
      const taskQueue = `example-${randomUUID()}`;
      const worker = await startExampleWorker(example!.app, exampleEnv(taskQueue));
      t.diagnostic(`worker ready in ${Math.round(worker.readyMs)} ms (workflow code bundled at start)`);
      try {
        assert.match(worker.output(), /workflow bundle: built at start/);
        const stdout = await runStarter(taskQueue, [
          `Hello from a worker that bundled its workflows [${randomUUID()}]`,
        ]);
        assert.match(stdout, /assistant {2}You said: Hello from a worker that bundled its workflows/);
        assert.match(stdout, /status {5}completed after 1 turn\(s\)/);
      } finally {
        assert.equal(await worker.stop(), 0, worker.output());
      }
    } finally {
      fs.renameSync(hidden, bundles);
    }
  });
});
