// `npm run prod-check` runs the production topology natively with settings it reads from docker-compose.yml,
// deploy/example.env and the Dockerfile (scripts/prod-check/topology.ts). These tests keep the two from drifting:
// the only differences allowed are the ones a host without Docker needs (addresses, ports, paths), listed in
// NATIVE_OVERRIDES; the server it builds is the version the compose file runs; the workers run the image's CMD.
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import {
  composeEnvironment,
  imageTag,
  loadCompose,
  NATIVE_OVERRIDES,
  type NativeService,
  nativeTopology,
  parseDockerfile,
  parseEnvFile,
  readRepoFile,
  ROOT,
  TEMPORAL_PORT_VARIABLES,
} from '../../scripts/prod-check/topology';

const compose = loadCompose();
const dockerfile = parseDockerfile(readRepoFile('Dockerfile'));
const variables = {
  ...parseEnvFile(readRepoFile('deploy/example.env')),
  PAYLOAD_ENCRYPTION_KEYS: 'k1:c2FtcGxl',
  CODEC_SERVER_TOKEN: 'a-sample-token-of-some-length',
  ANTHROPIC_BASE_URL: 'http://127.0.0.1:1',
};
const topology = nativeTopology({
  ports: {
    postgres: 15432,
    codecServer: 18081,
    temporal: Object.fromEntries(TEMPORAL_PORT_VARIABLES.map((key, i) => [key, 17000 + i])),
    workerMetrics: [19464, 19465, 19466],
  },
  schemaRoot: '/modules/go.temporal.io/server@v1.31.0/schema/postgresql/v12',
  variables,
});

describe('prod-check runs the compose topology with the compose settings', () => {
  for (const service of Object.keys(NATIVE_OVERRIDES) as NativeService[]) {
    test(`${service}: every setting is the compose file's, except the listed host-only ones`, () => {
      const fromCompose = composeEnvironment(compose, service, variables);
      const native = topology.env[service];
      const allowed = new Set(Object.keys(NATIVE_OVERRIDES[service]));
      for (const [key, value] of Object.entries(fromCompose)) {
        if (allowed.has(key)) continue;
        assert.equal(native[key], value, `${service}.${key}: prod-check uses ${native[key]}, compose ${value}`);
      }
      for (const key of Object.keys(native)) {
        const known = key in fromCompose || allowed.has(key) || (service === 'worker' && key in dockerfile.env);
        assert.ok(
          known,
          `${service}.${key} is set by prod-check but neither by the compose file nor listed as host-only`,
        );
      }
    });
  }

  test('the workers run the Dockerfile CMD, three replicas with the worker service environment', () => {
    assert.deepEqual(topology.workerCommand, dockerfile.command);
    assert.equal(topology.workers.length, 3);
    for (const env of topology.workers) {
      assert.equal(env.NODE_ENV, dockerfile.env.NODE_ENV);
      assert.equal(
        env.WORKER_SHUTDOWN_GRACE_TIME,
        parseEnvFile(readRepoFile('deploy/example.env')).WORKER_SHUTDOWN_GRACE_TIME,
      );
      assert.equal(env.TEMPORAL_TASK_QUEUE, composeEnvironment(compose, 'worker', variables).TEMPORAL_TASK_QUEUE);
    }
    assert.equal(new Set(topology.workers.map((env) => env.WORKER_METRICS_ADDRESS)).size, 3, 'one metrics port each');
  });

  test('the codec server runs the compose command; the build is the Dockerfile step', () => {
    assert.deepEqual(topology.codecServerCommand, compose.services['codec-server'].command);
    assert.deepEqual(topology.buildCommand, ['npm', 'run', 'build', '--', '--all-bundles']);
    assert.ok(dockerfile.runs.includes(topology.buildCommand.join(' ')));
  });

  test('the server built is the version the compose file runs, and the setup runs the mounted scripts', () => {
    assert.equal(topology.serverVersion, imageTag(compose, 'temporal'));
    assert.equal(imageTag(compose, 'temporal-schema'), topology.serverVersion, 'the SQL tool is of the same release');
    assert.equal(topology.scripts.schema, path.join(ROOT, 'deploy', 'setup-postgres.sh'));
    assert.equal(topology.scripts.namespace, path.join(ROOT, 'deploy', 'setup-namespace.sh'));
    assert.equal(
      topology.env.temporal.DYNAMIC_CONFIG_FILE_PATH,
      path.join(ROOT, 'deploy', 'dynamicconfig', 'development-sql.yaml'),
    );
    assert.equal(topology.env.temporal.DB, 'postgres12');
  });
});
