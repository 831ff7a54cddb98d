// A private CA and two certificates it signed — a server's (for `serverName`) and a client's (CN `test-client`) — as
// PEM files in a temporary folder: what a TLS server and an mTLS client hold. Keys come from Node's crypto; the
// certificates are built and signed with node-forge (Node cannot issue certificates), so no openssl is needed.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import forge from 'node-forge';

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

interface KeyPair {
  /** PKCS#8 PEM, as TEMPORAL_TLS_CLIENT_KEY_PATH and a TLS server read it. */
  pem: string;
  privateKey: forge.pki.rsa.PrivateKey;
  publicKey: forge.pki.rsa.PublicKey;
}

function newKeyPair(): KeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return {
    pem: privateKey,
    privateKey: forge.pki.privateKeyFromPem(privateKey),
    publicKey: forge.pki.publicKeyFromPem(publicKey),
  };
}

/** A certificate for `subject`'s key, valid for a day, signed by `issuer` (itself, for the CA). */
function certificate(
  subject: { commonName: string; key: KeyPair },
  issuer: { certificate?: forge.pki.Certificate; key: KeyPair },
  extensions: object[],
): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = subject.key.publicKey;
  cert.serialNumber = `01${randomBytes(8).toString('hex')}`; // positive: a leading 0x01 byte
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 24 * 3_600_000);
  cert.setSubject([{ name: 'commonName', value: subject.commonName }]);
  cert.setIssuer(issuer.certificate?.subject.attributes ?? cert.subject.attributes);
  cert.setExtensions(extensions);
  cert.sign(issuer.key.privateKey, forge.md.sha256.create());
  return cert;
}

export function makeTestCertificates(serverName: string): TestCertificates {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'test-certificates-'));
  const file = (name: string) => path.join(dir, name);
  const write = (name: string, pem: string) => fs.writeFileSync(file(name), pem, { mode: 0o600 });

  const caKey = newKeyPair();
  const ca = certificate({ commonName: 'test CA', key: caKey }, { key: caKey }, [
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
  ]);
  write('ca.pem', forge.pki.certificateToPem(ca));
  for (const [name, commonName, extensions] of [
    [
      'server',
      serverName,
      [
        { name: 'subjectAltName', altNames: [{ type: 2, value: serverName }] }, // type 2: a DNS name
        { name: 'extKeyUsage', serverAuth: true },
      ],
    ],
    ['client', 'test-client', [{ name: 'extKeyUsage', clientAuth: true }]],
  ] as const) {
    const key = newKeyPair();
    const cert = certificate({ commonName, key }, { certificate: ca, key: caKey }, [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      ...extensions,
    ]);
    write(`${name}.pem`, forge.pki.certificateToPem(cert));
    write(`${name}.key`, key.pem);
  }
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
