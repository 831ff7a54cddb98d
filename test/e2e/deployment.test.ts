// The production stack without Docker: docker-compose.yml against the Compose Specification's JSON schema and this
// project's own invariants (every env var a service sets is one its program reads, the search attributes match
// workflows/search-attributes.ts, workers can scale), deploy/setup-namespace.sh against the dev server, and the
// Dockerfile's stages replayed in temp copies — the build stage (npm ci, npm run build), the image (npm ci --omit=dev
// and the compiled dist/) — then the image's worker command, configuration dry run first and then a real conversation
// with payload encryption, SIGTERM at the end.
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import Ajv from 'ajv';
import { parse as parseYaml } from 'yaml';
import { ConversationClient } from '../../client/conversation-client';
import { encryptingDataConverter } from '../../codec/data-converter';
import { parseKeyRing } from '../../codec/keys';
import { codecServerConfigSchema, loadCodecServerConfig } from '../../codec/server-config';
import { startMessagesApi } from '../../testing/messages-api/server';
import type { MessagesApi } from '../../testing/messages-api/types';
import { configSchema, loadConfig } from '../../workers/config';
import { registeredSearchAttributes } from '../../common/search-attributes';

const ROOT = path.resolve(__dirname, '..', '..');
const read = (file: string): string => fs.readFileSync(path.join(ROOT, file), 'utf8');
const run = promisify(execFile);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a parsed YAML document
type Yaml = any;
const compose: Yaml = parseYaml(read('docker-compose.yml'));
const services: Record<string, Yaml> = compose.services;

/** `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?message}`, `${VAR?message}` and `$$`, as Compose reads them. */
const INTERPOLATION = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}/g;

function variablesIn(text: string): string[] {
  return [...text.matchAll(INTERPOLATION)].map((match) => match[1]!);
}

function interpolate(value: string, env: Record<string, string | undefined>): string {
  return value
    .replace(INTERPOLATION, (_all, name: string, op: string | undefined, arg: string | undefined) => {
      const current = env[name];
      const unset = op?.startsWith(':') ? !current : current === undefined;
      if (op?.endsWith('?') && unset) throw new Error(`required variable ${name}: ${arg}`);
      if (op?.endsWith('-') && unset) return arg ?? '';
      return current ?? '';
    })
    .replace(/\$\$/g, '$');
}

function environmentOf(service: string): Record<string, string> {
  const env = services[service]?.environment ?? {};
  if (Array.isArray(env))
    return Object.fromEntries(env.map((entry: string) => [entry.split('=')[0], entry.slice(entry.indexOf('=') + 1)]));
  return Object.fromEntries(Object.entries(env).map(([key, value]) => [key, String(value ?? '')]));
}

function effectiveEnvironment(service: string, env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(environmentOf(service)).map(([key, value]) => [key, interpolate(value, env)]),
  );
}

/** What deploy/example.env (the documented .env) sets, with sample values for the secrets. */
const SAMPLE_ENV = {
  ANTHROPIC_API_KEY: `sk-ant-api03-${randomBytes(24).toString('base64url')}`,
  PAYLOAD_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
  CODEC_SERVER_TOKEN: randomBytes(24).toString('base64url'),
};

describe('docker-compose.yml', () => {
  test('is valid against the Compose Specification JSON schema (deploy/compose-spec.schema.json)', () => {
    const schema = JSON.parse(read('deploy/compose-spec.schema.json'));
    delete schema.$schema; // "https://json-schema.org/draft-07/schema" (no '#'): Ajv knows draft-07 as http://…/schema#
    const ajv = new Ajv({ allErrors: true, strict: false });
    const validate = ajv.compile(schema);
    assert.ok(validate(compose), ajv.errorsText(validate.errors, { separator: '\n' }));
    // The schema really is strict about what it checks.
    const broken: Yaml = structuredClone(compose);
    broken.services.worker.depends_on['temporal-setup'].condition = 'service_finished';
    broken.services.worker.restart_policy = 'always';
    assert.equal(validate(broken), false);
  });

  test('every dependency, mount, build context and command file exists; one-shot jobs and health checks line up', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const [dependency, spec] of Object.entries<Yaml>(service.depends_on ?? {})) {
        const target = services[dependency];
        assert.ok(target, `${name} depends on unknown service ${dependency}`);
        if (spec.condition === 'service_healthy')
          assert.ok(target.healthcheck, `${dependency} has no healthcheck for ${name}`);
        if (spec.condition === 'service_completed_successfully')
          assert.match(target.restart ?? 'no', /^(no|on-failure(:\d+)?)$/, `${dependency} is a one-shot job`);
      }
      for (const volume of service.volumes ?? []) {
        const source = String(volume).split(':')[0]!;
        if (source.startsWith('.'))
          assert.ok(fs.existsSync(path.join(ROOT, source)), `${name} mounts missing ${source}`);
        else assert.ok(compose.volumes && source in compose.volumes, `${name} uses undeclared volume ${source}`);
      }
      if (service.build)
        assert.ok(
          fs.existsSync(
            path.join(ROOT, typeof service.build === 'string' ? service.build : service.build.context, 'Dockerfile'),
          ),
        );
      if (service.image)
        assert.doesNotMatch(interpolate(service.image, {}), /:latest$|^[^:]+$/, `${name}: pin the image tag`);
      for (const port of service.ports ?? [])
        assert.match(String(port), /^127\.0\.0\.1:/, `${name} publishes ${port} beyond loopback`);
    }
    // The image runs compiled code (it has no tsx): dist/X.js is built from X.ts.
    for (const service of ['codec-server', 'gateway']) {
      const compiled = String(services[service].command.at(-1));
      assert.match(compiled, /^dist\/.*\.js$/, `${service} runs ${compiled}`);
      assert.ok(fs.existsSync(path.join(ROOT, compiled.replace(/^dist\//, '').replace(/\.js$/, '.ts'))), compiled);
    }
    for (const script of ['deploy/setup-postgres.sh', 'deploy/setup-namespace.sh']) {
      assert.ok(fs.existsSync(path.join(ROOT, script)));
    }
  });

  test('the worker can scale: no container name, no host ports, and its environment is exactly what workers/config.ts reads', () => {
    const worker = services.worker;
    assert.equal(worker.container_name, undefined);
    assert.equal(worker.ports, undefined);
    const readByConfig = new Set(Object.keys(configSchema.shape));
    const set = Object.keys(environmentOf('worker'));
    for (const name of set)
      assert.ok(readByConfig.has(name), `worker sets ${name}, which workers/config.ts does not read`);
    for (const name of [
      'TEMPORAL_ADDRESS',
      'TEMPORAL_NAMESPACE',
      'TEMPORAL_TASK_QUEUE',
      'ANTHROPIC_API_KEY',
      'PAYLOAD_ENCRYPTION_KEYS',
    ]) {
      assert.ok(set.includes(name), `worker does not set ${name}`);
    }
    // With the documented .env, the worker's configuration loads (as the container would) and is the expected one.
    const config = loadConfig(effectiveEnvironment('worker', SAMPLE_ENV));
    assert.equal(config.TEMPORAL_ADDRESS, 'temporal:7233');
    assert.equal(config.TEMPORAL_TASK_QUEUE, 'claude-conversations');
    assert.equal(config.WORKER_METRICS_ADDRESS, '0.0.0.0:9464', 'metrics on, inside the network');
    assert.equal(config.PAYLOAD_ENCRYPTION_KEYS?.current.id, 'k1');
    assert.equal(config.ANTHROPIC_API_KEY, SAMPLE_ENV.ANTHROPIC_API_KEY);
    assert.throws(
      () => effectiveEnvironment('worker', { ...SAMPLE_ENV, PAYLOAD_ENCRYPTION_KEYS: undefined }),
      /PAYLOAD_ENCRYPTION_KEYS/,
    );
  });

  test('the codec server: its environment is what codec/server-config.ts reads; the UI points the browser at it', () => {
    const readByCodec = new Set(Object.keys(codecServerConfigSchema.shape));
    for (const name of Object.keys(environmentOf('codec-server')))
      assert.ok(readByCodec.has(name), `codec-server sets ${name}, which it does not read`);
    const config = loadCodecServerConfig(effectiveEnvironment('codec-server', SAMPLE_ENV));
    assert.equal(config.CODEC_SERVER_HOST, '0.0.0.0');
    const ui = effectiveEnvironment('temporal-ui', SAMPLE_ENV);
    const endpoint = new URL(ui.TEMPORAL_CODEC_ENDPOINT!);
    // The endpoint is fetched by the browser: a published host port of the codec server, not the compose DNS name.
    assert.ok(
      services['codec-server'].ports.some((p: string) => p.endsWith(`:${endpoint.port}:${config.CODEC_SERVER_PORT}`)),
    );
    assert.equal(ui.TEMPORAL_CODEC_INCLUDE_CREDENTIALS, 'true');
    const uiPort = String(services['temporal-ui'].ports[0]).split(':')[1];
    assert.ok(
      config.CODEC_SERVER_CORS_ORIGINS.includes(`http://localhost:${uiPort}`),
      'the UI origin may call the codec server',
    );
  });

  test('temporal-setup registers exactly the search attributes of common/search-attributes.ts', () => {
    const pairs = environmentOf('temporal-setup').SEARCH_ATTRIBUTES!.trim().split(/\s+/).sort();
    const expected = registeredSearchAttributes
      .map((key) => `${key.name}=${TypedSearchAttributes.toMetadataType(key.type)}`)
      .sort();
    assert.deepEqual(pairs, expected);
  });

  test('every variable the stack reads is documented (deploy/example.env and docs/deployment.md)', () => {
    const variables = new Set(variablesIn(read('docker-compose.yml')));
    const example = read('deploy/example.env');
    const docs = read('docs/deployment.md');
    for (const name of variables) {
      assert.match(example, new RegExp(`\\b${name}=`), `${name} is missing from deploy/example.env`);
      assert.ok(docs.includes(name), `${name} is missing from docs/deployment.md`);
    }
    for (const name of Object.keys(configSchema.shape)) {
      assert.ok(docs.includes(name), `workers/config.ts reads ${name}; docs/deployment.md does not mention it`);
    }
  });
});

describe('deploy/setup-namespace.sh against the dev server', () => {
  test(
    'creates the namespace and the search attributes, and a second run changes nothing',
    { skip: !process.env.TEMPORAL_CLI_PATH && 'no TEMPORAL_CLI_PATH' },
    async () => {
      const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'temporal-bin-'));
      after(() => fs.rmSync(bin, { recursive: true, force: true }));
      fs.symlinkSync(process.env.TEMPORAL_CLI_PATH!, path.join(bin, 'temporal'));
      const namespace = `deploy-${randomUUID().slice(0, 8)}`;
      const env = {
        ...process.env,
        PATH: `${bin}${path.delimiter}${process.env.PATH}`,
        TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS ?? 'localhost:7233',
        NAMESPACE: namespace,
        RETENTION: '24h',
        SEARCH_ATTRIBUTES: environmentOf('temporal-setup').SEARCH_ATTRIBUTES,
      };
      const first = await run('sh', [path.join(ROOT, 'deploy/setup-namespace.sh')], { env, timeout: 120_000 });
      assert.match(first.stdout, new RegExp(`Namespace ${namespace} is ready`));
      const second = await run('sh', [path.join(ROOT, 'deploy/setup-namespace.sh')], { env, timeout: 120_000 });
      assert.match(second.stdout, /Namespace .* exists\./);
      assert.equal(
        (second.stdout.match(/Search attribute \S+ exists\./g) ?? []).length,
        registeredSearchAttributes.length,
      );

      const connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS });
      try {
        const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
        for (const key of registeredSearchAttributes) {
          assert.equal(customAttributes?.[key.name], encodeSearchAttributeIndexedValueType(key.type), key.name);
        }
      } finally {
        await connection.close();
      }
    },
  );
});

// ---- The Dockerfile, replayed in a temp directory (WORKDIR). ----

interface Instruction {
  op: string;
  args: string;
}

function dockerfile(): Instruction[] {
  const lines = read('Dockerfile')
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'));
  const joined = lines.join('\n').replace(/\\\n/g, ' ');
  return joined
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const [op, ...rest] = line.split(/\s+/);
      return { op: op!.toUpperCase(), args: rest.join(' ') };
    });
}

/** One FROM … of the Dockerfile: its own root (a temp directory) and WORKDIR. */
interface Stage {
  name: string | undefined;
  root: string;
  workdir: string;
}

describe('the Dockerfile, replayed without Docker', { timeout: 600_000 }, () => {
  const stages: Stage[] = [];
  /** The last stage: what the image holds, with WORKDIR as app. */
  let app: string;
  const imageEnv: Record<string, string> = {};
  let cmd: string[] = [];
  let mock: MessagesApi | undefined;
  const children: ChildProcess[] = [];
  /** A path inside a stage (absolute, or relative to its WORKDIR) → where the replay keeps it. */
  const inStage = (stage: Stage, file: string): string =>
    path.join(stage.root, path.posix.isAbsolute(file) ? file : path.posix.join(stage.workdir, file));

  before(async () => {
    for (const { op, args } of dockerfile()) {
      const stage = stages.at(-1);
      if (op === 'FROM') {
        const name = /\sAS\s+(\S+)$/i.exec(args)?.[1];
        stages.push({ name, root: fs.mkdtempSync(path.join(os.tmpdir(), `image-${name ?? 'final'}-`)), workdir: '/' });
        continue;
      }
      assert.ok(stage, `${op} before FROM`);
      if (op === 'USER') continue;
      if (op === 'WORKDIR') {
        stage.workdir = args;
        fs.mkdirSync(inStage(stage, '.'), { recursive: true });
      } else if (op === 'ENV') {
        const [key, ...value] = args.split('=');
        const text = value.join('=');
        imageEnv[key!] = text.startsWith('/') ? inStage(stage, text) : text;
      } else if (op === 'COPY') {
        const parts = args.split(/\s+/);
        const from = parts[0]!.startsWith('--from=') ? parts.shift()!.slice('--from='.length) : undefined;
        const source = from ? stages.find((s) => s.name === from) : undefined;
        assert.ok(!from || source, `COPY --from=${from}: no such stage`);
        const destination = parts.pop()!;
        for (const item of parts) {
          const origin = source ? inStage(source, item) : path.join(ROOT, item);
          // Docker's rules: a directory's contents go to the destination; a file goes into it when it ends with '/'.
          const isDirectory = fs.statSync(origin).isDirectory();
          const target =
            !isDirectory && destination.endsWith('/')
              ? path.join(inStage(stage, destination), path.basename(item))
              : inStage(stage, destination);
          fs.cpSync(origin, target, { recursive: true });
        }
      } else if (op === 'RUN') {
        // Not replayed: `npm cache clean --force` (it only slims the image, and here would wipe this machine's cache).
        const command = args.replace(/\s*&&\s*npm cache clean --force/, '');
        await run('sh', ['-c', command], {
          cwd: inStage(stage, '.'),
          env: { ...process.env, ...imageEnv, npm_config_prefer_offline: 'true' },
          timeout: 300_000,
          maxBuffer: 64 * 1024 * 1024,
        });
      } else if (op === 'CMD') {
        cmd = JSON.parse(args);
      } else {
        throw new Error(`The replay does not know Dockerfile instruction ${op}`);
      }
    }
    const image = stages.at(-1)!;
    app = inStage(image, '.');
  });

  after(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await mock?.close();
    for (const stage of stages) fs.rmSync(stage.root, { recursive: true, force: true });
  });

  test('the image holds the runtime dependencies without dev tools, and the compiled code with its workflow bundles', () => {
    assert.ok(fs.existsSync(path.join(app, 'node_modules/@temporalio/worker/package.json')));
    for (const devTool of ['typescript', 'tsx', 'eslint'])
      assert.ok(!fs.existsSync(path.join(app, 'node_modules', devTool)), `${devTool} is in the image`);
    assert.deepEqual(fs.readdirSync(app).sort(), ['dist', 'node_modules', 'package-lock.json', 'package.json']);
    assert.deepEqual(cmd, ['node', 'dist/workers/main.js']);
    assert.ok(fs.existsSync(path.join(app, cmd[1]!)));
    // The gateway's command and its chat page are in the image too (the compose file's gateway service runs them).
    assert.ok(fs.existsSync(path.join(app, String(services.gateway.command.at(-1)))));
    assert.ok(fs.existsSync(path.join(app, 'dist/gateway/public/index.html')));
    for (const bundle of ['default.js', 'encoded-failures.js', 'default-traced.js', 'encoded-failures-traced.js']) {
      const file = path.join(app, 'dist', 'workflow-bundles', bundle);
      assert.ok(fs.statSync(file).size > 100_000, file);
    }
    assert.ok(
      fs
        .readFileSync(path.join(app, 'dist/workflow-bundles/encoded-failures.js'), 'utf8')
        .includes('encodeCommonAttributes'),
      'the encrypting failure converter is bundled',
    );
  });

  test("the image's worker command: --check validates the configuration, prints no secret", async () => {
    const env = { ...imageEnv, PATH: process.env.PATH!, ...SAMPLE_ENV, TEMPORAL_ADDRESS: 'temporal:7233' };
    const { stdout } = await run(cmd[0]!, [...cmd.slice(1), '--check'], { cwd: app, env, timeout: 60_000 });
    assert.match(
      stdout,
      /Worker configuration OK: task queue "claude-conversations" \(temporal:7233, namespace default\); model: .*; tools: get_ticker_symbol, .*; workflow bundle: .*dist\/workflow-bundles\/encoded-failures\.js; payload encryption: on \(current key k1\)/,
    );
    for (const secret of [SAMPLE_ENV.ANTHROPIC_API_KEY, SAMPLE_ENV.PAYLOAD_ENCRYPTION_KEYS.slice(3)])
      assert.ok(!stdout.includes(secret));
    // A bad key is refused with the variable's name, not its value.
    const bad = `k1:${randomBytes(8).toString('base64')}`;
    const failed = await run(cmd[0]!, [...cmd.slice(1), '--check'], {
      cwd: app,
      env: { ...env, PAYLOAD_ENCRYPTION_KEYS: bad },
      timeout: 60_000,
    }).then(
      () => assert.fail('should exit 1'),
      (error: { code: number; stderr: string }) => error,
    );
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /PAYLOAD_ENCRYPTION_KEYS: Key k1 has 8 bytes/);
    assert.ok(!failed.stderr.includes(bad.slice(3)));

    // The compose file's codec-server command, in the image.
    const [codecFile, ...codecArgs] = services['codec-server'].command as string[];
    const codec = await run(codecFile!, [...codecArgs, '--check'], {
      cwd: app,
      env: { PATH: process.env.PATH!, ...effectiveEnvironment('codec-server', SAMPLE_ENV) },
      timeout: 60_000,
    });
    assert.match(codec.stdout, /Codec server configuration OK: 0\.0\.0\.0:8081; keys k1/);
    assert.ok(!codec.stdout.includes(SAMPLE_ENV.CODEC_SERVER_TOKEN));
  });

  test("the image's worker runs a conversation with payload encryption, then stops cleanly on SIGTERM", async () => {
    mock = await startMessagesApi();
    const taskQueue = `image-${randomUUID()}`;
    const keys = `k1:${randomBytes(32).toString('base64')}`;
    const apiKey = `sk-ant-api03-${randomBytes(24).toString('base64url')}`;
    const worker = spawn(cmd[0]!, cmd.slice(1), {
      cwd: app,
      env: {
        ...imageEnv,
        PATH: process.env.PATH!,
        TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS ?? 'localhost:7233',
        TEMPORAL_NAMESPACE: process.env.TEMPORAL_NAMESPACE ?? 'default',
        TEMPORAL_TASK_QUEUE: taskQueue,
        ANTHROPIC_API_KEY: apiKey,
        ANTHROPIC_BASE_URL: mock.url,
        PAYLOAD_ENCRYPTION_KEYS: keys,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(worker);
    let output = '';
    worker.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    worker.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code)));
    const deadline = Date.now() + 60_000;
    while (!output.includes('Worker ready') && Date.now() < deadline && worker.exitCode === null)
      await new Promise((r) => setTimeout(r, 100));
    assert.match(
      output,
      new RegExp(`Worker ready: task queue "${taskQueue}".*payload encryption: on \\(current key k1\\)`),
      output,
    );

    const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? 'localhost:7233' });
    try {
      const conversations = new ConversationClient({
        client: new Client({
          connection,
          namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
          dataConverter: encryptingDataConverter(parseKeyRing(keys)),
        }),
        taskQueue,
      });
      const reply = await conversations.sendMessage(
        `image-${randomUUID()}`,
        'What is the current stock price of General Motors?',
        {
          start: {
            tools: ['get_ticker_symbol', 'get_current_stock_price'],
            closeAfterFirstReply: true,
          },
        },
      );
      assert.match(reply.text, /38\.50/);
      assert.ok(
        mock.requests.some((r) => r.headers['x-api-key'] === apiKey || r.headers.authorization === `Bearer ${apiKey}`),
      );
    } finally {
      await connection.close();
    }
    worker.kill('SIGTERM');
    assert.equal(await exited, 0, output);
    assert.ok(!output.includes(apiKey), 'the API key is in the worker output');
    assert.ok(!output.includes(keys.slice(3)), 'the key material is in the worker output');
  });
});
