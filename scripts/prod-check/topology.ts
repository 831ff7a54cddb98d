// The production topology of docker-compose.yml, run natively (npm run prod-check): every service's settings are
// read from docker-compose.yml, deploy/example.env and the Dockerfile, and only what a container network gives for
// free is changed — host names become 127.0.0.1, fixed ports become free ones (other things run on this machine),
// container paths become the repository's files. Those changes are listed in NATIVE_OVERRIDES, which
// test/tooling/prod-check-settings.test.ts holds to: any other difference from the compose file is drift.
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';

export const ROOT = path.resolve(__dirname, '..', '..');

/** The compose variables' values: deploy/example.env (the documented .env) plus what the run supplies. */
export type Variables = Record<string, string | undefined>;

/** Per compose service, the settings a native run may set differently, and why. Nothing else may differ. */
export const NATIVE_OVERRIDES = {
  'temporal-schema': {
    POSTGRES_SEEDS: 'the compose host name "postgresql" is 127.0.0.1 here',
    DB_PORT: 'PostgreSQL listens on a free port',
    SCHEMA_ROOT: "the admin-tools image's schema folder is the server module's schema/postgresql/v12",
  },
  temporal: {
    POSTGRES_SEEDS: 'the compose host name "postgresql" is 127.0.0.1 here',
    DB_PORT: 'PostgreSQL listens on a free port',
    BIND_ON_IP: 'loopback only, as the compose file publishes it (127.0.0.1:7233)',
    DYNAMIC_CONFIG_FILE_PATH: 'the file the compose file mounts, by its path in the repository',
    FRONTEND_GRPC_PORT: 'free ports instead of 7233 and the services’ fixed ports',
    FRONTEND_HTTP_PORT: '',
    FRONTEND_MEMBERSHIP_PORT: '',
    INTERNAL_FRONTEND_HTTP_PORT: '',
    MATCHING_GRPC_PORT: '',
    MATCHING_MEMBERSHIP_PORT: '',
    HISTORY_GRPC_PORT: '',
    HISTORY_MEMBERSHIP_PORT: '',
    WORKER_GRPC_PORT: '',
    WORKER_MEMBERSHIP_PORT: '',
  },
  'temporal-setup': { TEMPORAL_ADDRESS: 'the frontend on 127.0.0.1 and its free port' },
  'codec-server': {
    CODEC_SERVER_HOST: 'loopback (in compose 0.0.0.0 inside the container, published on 127.0.0.1)',
    CODEC_SERVER_PORT: 'a free port',
  },
  worker: {
    TEMPORAL_ADDRESS: 'the frontend on 127.0.0.1 and its free port',
    WORKER_METRICS_ADDRESS: 'three replicas on one host need three ports (in compose each has its own address)',
    WORKER_LIVE_RELAY_ADDRESS: 'likewise: each replica a free port on loopback, where the gateway and readers run',
  },
} as const satisfies Record<string, Record<string, string>>;

export type NativeService = keyof typeof NATIVE_OVERRIDES;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a parsed YAML document
type Yaml = any;

export const readRepoFile = (file: string): string => fs.readFileSync(path.join(ROOT, file), 'utf8');

export function loadCompose(): Yaml {
  return parseYaml(readRepoFile('docker-compose.yml'));
}

/** `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?message}`, `${VAR?message}` and `$$`, as Compose reads them. */
const INTERPOLATION = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}/g;

export function interpolate(value: string, variables: Variables): string {
  return value
    .replace(INTERPOLATION, (_all, name: string, op: string | undefined, arg: string | undefined) => {
      const current = variables[name];
      const unset = op?.startsWith(':') ? !current : current === undefined;
      if (op?.endsWith('?') && unset) throw new Error(`required variable ${name}: ${arg}`);
      if (op?.endsWith('-') && unset) return arg ?? '';
      return current ?? '';
    })
    .replace(/\$\$/g, '$');
}

/** A service's `environment:` with the variables filled in, as Compose hands it to the container. */
export function composeEnvironment(compose: Yaml, service: string, variables: Variables): Record<string, string> {
  const env = compose.services?.[service]?.environment ?? {};
  const entries: [string, string][] = Array.isArray(env)
    ? env.map((entry: string) => [entry.split('=')[0]!, entry.slice(entry.indexOf('=') + 1)])
    : Object.entries(env).map(([key, value]) => [key, String(value ?? '')]);
  return Object.fromEntries(entries.map(([key, value]) => [key, interpolate(value, variables)]));
}

/** deploy/example.env as variables (KEY=value lines; comments and blank lines skipped). */
export function parseEnvFile(text: string): Variables {
  const variables: Variables = {};
  for (const line of text.split('\n')) {
    const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (match) variables[match[1]!] = match[2]!.trim().replace(/^(['"])(.*)\1$/, '$2');
  }
  return variables;
}

export interface Dockerfile {
  /** CMD, exec form. */
  command: string[];
  /** ENV settings, in order. */
  env: Record<string, string>;
  /** RUN steps, as shell text. */
  runs: string[];
}

export function parseDockerfile(text: string): Dockerfile {
  const lines = text.replace(/\\\n/g, ' ').split('\n');
  const env: Record<string, string> = {};
  const runs: string[] = [];
  let command: string[] = [];
  for (const line of lines) {
    const [instruction, ...rest] = line.trim().split(/\s+/);
    const argument = line
      .trim()
      .slice(instruction?.length ?? 0)
      .trim();
    if (instruction === 'ENV') {
      for (const pair of rest) {
        const [key, ...value] = pair.split('=');
        if (key && value.length) env[key] = value.join('=');
      }
    } else if (instruction === 'RUN') runs.push(argument);
    else if (instruction === 'CMD') command = JSON.parse(argument) as string[];
  }
  if (command.length === 0) throw new Error('The Dockerfile has no CMD in exec form (["node", …]).');
  return { command, env, runs };
}

/** The image tag a service's `image:` names once its variables are filled in (`temporalio/server:1.31.0` → 1.31.0). */
export function imageTag(compose: Yaml, service: string, variables: Variables = {}): string {
  const image = interpolate(String(compose.services?.[service]?.image ?? ''), variables);
  return image.slice(image.lastIndexOf(':') + 1);
}

export interface NativeSettings {
  ports: { postgres: number; codecServer: number; temporal: Record<string, number>; workerMetrics: number[] };
  /** Where the server module's schema/postgresql/v12 folder is. */
  schemaRoot: string;
  /** Values for the compose file's required variables (keys, token, the local Messages API). */
  variables: Variables;
}

export interface NativeTopology {
  serverVersion: string;
  env: Record<NativeService, Record<string, string>>;
  /** The `worker` replicas' environments (one metrics address each). */
  workers: Record<string, string>[];
  workerCommand: string[];
  codecServerCommand: string[];
  /**
   * The Dockerfile's build step (`npm run build`: dist/, with the pre-built workflow bundles the workers pick up),
   * run in the repository.
   */
  buildCommand: string[];
  /** The scripts the one-shot services run, repository paths. */
  scripts: { schema: string; namespace: string };
}

/** The compose file's container path of a mounted repository file, back to the repository path. */
function mountedRepoPath(compose: Yaml, service: string, containerPath: string): string {
  for (const volume of compose.services?.[service]?.volumes ?? []) {
    const [source, target] = String(volume).split(':') as [string, string];
    if (source.startsWith('./') && containerPath.startsWith(target))
      return path.join(ROOT, source, containerPath.slice(target.length));
  }
  throw new Error(`docker-compose.yml: ${containerPath} is not mounted from the repository in service ${service}`);
}

export function nativeTopology(settings: NativeSettings): NativeTopology {
  const compose = loadCompose();
  const dockerfile = parseDockerfile(readRepoFile('Dockerfile'));
  const variables: Variables = {
    ...Object.fromEntries(Object.entries(parseEnvFile(readRepoFile('deploy/example.env'))).filter(([, v]) => v)),
    ...settings.variables,
  };
  const env = (service: NativeService): Record<string, string> => composeEnvironment(compose, service, variables);
  const { ports } = settings;
  const frontend = `127.0.0.1:${ports.temporal.FRONTEND_GRPC_PORT}`;

  const temporal = env('temporal');
  // The server image runs in /etc/temporal: a relative DYNAMIC_CONFIG_FILE_PATH is relative to it.
  const dynamicConfig = path.posix.join('/etc/temporal', temporal.DYNAMIC_CONFIG_FILE_PATH ?? '');
  const worker = { ...dockerfile.env, ...env('worker'), TEMPORAL_ADDRESS: frontend };
  const buildStep = dockerfile.runs.find((run) => /^npm run build\b/.test(run));
  if (!buildStep) throw new Error('The Dockerfile has no build step (RUN npm run build).');
  const codecCommand = compose.services?.['codec-server']?.command;
  if (!Array.isArray(codecCommand)) throw new Error('docker-compose.yml: codec-server has no command in exec form.');

  return {
    serverVersion: imageTag(compose, 'temporal', variables),
    env: {
      'temporal-schema': {
        ...env('temporal-schema'),
        POSTGRES_SEEDS: '127.0.0.1',
        DB_PORT: String(ports.postgres),
        SCHEMA_ROOT: settings.schemaRoot,
      },
      temporal: {
        ...temporal,
        POSTGRES_SEEDS: '127.0.0.1',
        DB_PORT: String(ports.postgres),
        BIND_ON_IP: '127.0.0.1',
        DYNAMIC_CONFIG_FILE_PATH: mountedRepoPath(compose, 'temporal', dynamicConfig),
        ...Object.fromEntries(Object.entries(ports.temporal).map(([key, port]) => [key, String(port)])),
      },
      'temporal-setup': { ...env('temporal-setup'), TEMPORAL_ADDRESS: frontend },
      'codec-server': {
        ...env('codec-server'),
        CODEC_SERVER_HOST: '127.0.0.1',
        CODEC_SERVER_PORT: String(ports.codecServer),
      },
      worker,
    },
    workers: ports.workerMetrics.map((port) => ({
      ...worker,
      WORKER_METRICS_ADDRESS: `127.0.0.1:${port}`,
      WORKER_LIVE_RELAY_ADDRESS: '127.0.0.1:0',
    })),
    workerCommand: dockerfile.command,
    codecServerCommand: codecCommand.map(String),
    buildCommand: buildStep.split(/\s+/),
    scripts: {
      schema: mountedRepoPath(compose, 'temporal-schema', String(compose.services['temporal-schema'].command[0])),
      namespace: mountedRepoPath(compose, 'temporal-setup', String(compose.services['temporal-setup'].command[0])),
    },
  };
}

/** The ports the server's embedded configuration template reads (go.temporal.io/server common/config). */
export const TEMPORAL_PORT_VARIABLES = Object.keys(NATIVE_OVERRIDES.temporal).filter(
  (key) => key.endsWith('_PORT') && key !== 'DB_PORT',
);
