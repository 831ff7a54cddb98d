// How every command reaches Temporal: the worker, the CLI and the gateway read the same variables, by the same names,
// into the same Connection.connect options; a bad setting is refused naming its variable, before anything connects.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { connectionOptions, connectionSettingsSchema, loadConnectionSettings } from '../../client/connection-settings';
import { loadGatewayConfig } from '../../gateway/gateway-config';
import { loadConfig } from '../../workers/config';
import { makeTestCertificates } from '../support/test-certificates';

const certificates = makeTestCertificates('ns.acct.tmprl.cloud');
after(() => certificates.remove());

const cloud = {
  TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233',
  TEMPORAL_NAMESPACE: 'ns.acct',
  TEMPORAL_TASK_QUEUE: 'support',
  TEMPORAL_API_KEY: 'cloud-api-key',
  TEMPORAL_TLS: 'true',
  TEMPORAL_TLS_CLIENT_CERT_PATH: certificates.clientCertPath,
  TEMPORAL_TLS_CLIENT_KEY_PATH: certificates.clientKeyPath,
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: certificates.caCertPath,
  TEMPORAL_TLS_SERVER_NAME: 'ns.acct.tmprl.cloud',
};
/** Each command's loader, with what it needs besides (an API to talk to, a token to take). */
const loaders = {
  worker: (env: Record<string, string>) => loadConfig({ ANTHROPIC_BASE_URL: 'http://127.0.0.1:1', ...env }),
  gateway: (env: Record<string, string>) => loadGatewayConfig({ GATEWAY_TOKEN: 'a-token-of-sixteen-chars', ...env }),
  cli: (env: Record<string, string>) => loadConnectionSettings(env),
};

test('the worker, the gateway and the CLI read every connection variable, by the same name, to the same value', () => {
  assert.deepEqual(Object.keys(connectionSettingsSchema.shape).sort(), Object.keys(cloud).sort());
  const expected = loadConnectionSettings(cloud);
  for (const [command, load] of Object.entries(loaders)) {
    const config = load(cloud) as Record<string, unknown>;
    for (const name of Object.keys(cloud)) {
      assert.deepEqual(config[name], expected[name as keyof typeof expected], `${command}: ${name}`);
    }
    assert.deepEqual(connectionOptions(config as typeof expected), connectionOptions(expected), command);
  }
});

test('an API key turns TLS on; TEMPORAL_TLS=false turns it off; nothing set is a plain connection to localhost', () => {
  const withKey = connectionOptions(loadConnectionSettings({ TEMPORAL_API_KEY: 'cloud-api-key' }));
  assert.deepEqual(withKey, { address: 'localhost:7233', tls: {}, apiKey: 'cloud-api-key' });
  const off = connectionOptions(loadConnectionSettings({ TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: 'false' }));
  assert.equal(off.tls, false);
  assert.deepEqual(connectionOptions(loadConnectionSettings({})), { address: 'localhost:7233', tls: false });
  assert.deepEqual(connectionOptions(loadConnectionSettings({ TEMPORAL_TLS: 'true' })).tls, {});
});

test('mTLS: the client certificate pair, the CA and the server name are read from the configured files', () => {
  const { tls } = connectionOptions(loadConnectionSettings(cloud));
  assert.ok(tls);
  const read = (file: string) => fs.readFileSync(file, 'utf8');
  assert.equal(tls.clientCertPair?.crt.toString(), read(certificates.clientCertPath));
  assert.equal(tls.clientCertPair?.key.toString(), read(certificates.clientKeyPath));
  assert.equal(tls.serverRootCACertificate?.toString(), read(certificates.caCertPath));
  assert.equal(tls.serverNameOverride, 'ns.acct.tmprl.cloud');
});

test('bad settings stop every command with a message naming the variable, never quoting the API key', () => {
  const bad: [Record<string, string>, RegExp][] = [
    [{ TEMPORAL_ADDRESS: 'no port here' }, /TEMPORAL_ADDRESS: must be host:port/],
    [{ TEMPORAL_ADDRESS: 'local\u0001host:7233' }, /TEMPORAL_ADDRESS: must be host:port/],
    [{ TEMPORAL_TLS: 'yes' }, /TEMPORAL_TLS: must be true or false/],
    [{ TEMPORAL_API_KEY: 'secret-api-key\nx-injected: 1' }, /TEMPORAL_API_KEY: must be visible ASCII/],
    [{ TEMPORAL_API_KEY: 'secret-api-key \u00e9' }, /TEMPORAL_API_KEY: must be visible ASCII/],
    [{ TEMPORAL_TLS_SERVER_NAME: 'a name' }, /TEMPORAL_TLS_SERVER_NAME: must be visible ASCII/],
    [{ TEMPORAL_TLS_CLIENT_CERT_PATH: cloud.TEMPORAL_TLS_CLIENT_CERT_PATH }, /set both \(mTLS\) or neither/],
    [{ TEMPORAL_TLS_CLIENT_KEY_PATH: cloud.TEMPORAL_TLS_CLIENT_KEY_PATH }, /set both \(mTLS\) or neither/],
  ];
  for (const [command, load] of Object.entries(loaders)) {
    for (const [env, message] of bad) {
      assert.throws(
        () => load({ TEMPORAL_API_KEY: 'secret-api-key', ...env }),
        (err: Error) => err.name === 'ConfigError' && message.test(err.message) && !err.message.includes('secret'),
        `${command}: ${JSON.stringify(env)}`,
      );
    }
  }
});

test('a certificate or key file that cannot be read, or holds no PEM of its kind, is named with its variable', () => {
  const missing = path.join(certificates.dir, 'nowhere.pem');
  const garbage = path.join(certificates.dir, 'garbage.pem');
  fs.writeFileSync(garbage, 'not a certificate');
  const cases: [string, string, string][] = [
    ['TEMPORAL_TLS_SERVER_CA_CERT_PATH', missing, 'cannot be read (ENOENT)'],
    ['TEMPORAL_TLS_SERVER_CA_CERT_PATH', certificates.dir, 'cannot be read (EISDIR)'],
    ['TEMPORAL_TLS_SERVER_CA_CERT_PATH', garbage, 'is not a PEM certificate'],
    ['TEMPORAL_TLS_CLIENT_CERT_PATH', certificates.clientKeyPath, 'is not a PEM certificate'],
    ['TEMPORAL_TLS_CLIENT_KEY_PATH', certificates.clientCertPath, 'is not a PEM private key'],
  ];
  for (const [variable, file, why] of cases) {
    const settings = loadConnectionSettings({ ...cloud, [variable]: file });
    assert.throws(
      () => connectionOptions(settings),
      (err: Error) => err.name === 'ConfigError' && err.message.includes(`${variable}: ${JSON.stringify(file)} ${why}`),
      `${variable}=${file}`,
    );
  }
});
