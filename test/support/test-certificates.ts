// A private CA and two certificates it signed — a server's (for `serverName`) and a client's (CN `test-client`) — as
// PEM files in a temporary folder, made with openssl: what a TLS server and an mTLS client hold.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface TestCertificates {
  dir: string;
  caCertPath: string;
  serverCertPath: string;
  serverKeyPath: string;
  clientCertPath: string;
  clientKeyPath: string;
  /** Deletes the folder. */
  remove(): void;
}

export function makeTestCertificates(serverName: string): TestCertificates {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'test-certificates-'));
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const key = ['-newkey', 'rsa:2048', '-nodes'];
  openssl('req', '-x509', ...key, '-days', '1', '-subj', '/CN=test CA', '-keyout', 'ca.key', '-out', 'ca.pem');
  for (const [name, subject, extension] of [
    ['server', `/CN=${serverName}`, `subjectAltName=DNS:${serverName}`],
    ['client', '/CN=test-client', 'extendedKeyUsage=clientAuth'],
  ] as const) {
    openssl('req', ...key, '-subj', subject, '-keyout', `${name}.key`, '-out', `${name}.csr`);
    fs.writeFileSync(path.join(dir, `${name}.ext`), `${extension}\n`);
    openssl(
      ...['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '1'],
      ...['-extfile', `${name}.ext`, '-out', `${name}.pem`],
    );
  }
  const file = (name: string) => path.join(dir, name);
  return {
    dir,
    caCertPath: file('ca.pem'),
    serverCertPath: file('server.pem'),
    serverKeyPath: file('server.key'),
    clientCertPath: file('client.pem'),
    clientKeyPath: file('client.key'),
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
