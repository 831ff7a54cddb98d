// What an encrypted deployment refuses, and what it never says back: a payload written in plain text by a client
// without the keys, and the key material of a PAYLOAD_ENCRYPTION_KEYS value written the wrong way round.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import type { Payload } from '@temporalio/common';
import { AesGcmCodec, PayloadDecryptionError } from '../../codec/aes-gcm-codec';
import { dataConverterFromEnv } from '../../codec/data-converter';
import { parseKeyRing } from '../../codec/keys';
import { loadConfig } from '../../workers/config';

const b64 = (bytes: Buffer): string => bytes.toString('base64');
const KEY = randomBytes(32);
const RING = parseKeyRing(`k1:${b64(KEY)}`);
const plain = (value: unknown): Payload => ({
  metadata: { encoding: Buffer.from('json/plain') },
  data: Buffer.from(JSON.stringify(value)),
});

describe('a payload that is not encrypted, read in an encrypted deployment', () => {
  test('is refused by default, with an error that says where it came from and what to do', async () => {
    const codec = new AesGcmCodec(RING);
    await assert.rejects(
      codec.decode([plain({ approve: true })]),
      (error: Error) =>
        error instanceof PayloadDecryptionError &&
        /not encrypted/.test(error.message) &&
        /codec server/.test(error.message) &&
        /PAYLOAD_ENCRYPTION_PLAINTEXT=accept/.test(error.message),
    );
    // Encrypted payloads next to it still decode.
    const [encrypted] = await codec.encode([plain('fine')]);
    assert.equal(Buffer.from((await codec.decode([encrypted!]))[0]!.data!).toString(), '"fine"');
  });

  test("is read with a loud warning when the deployment says 'accept' (turning encryption on)", async () => {
    const warnings: string[] = [];
    const codec = new AesGcmCodec(RING, { plaintext: 'accept', warn: (message) => warnings.push(message) });
    const payload = plain('old history');
    assert.deepEqual(await codec.decode([payload, payload]), [payload, payload]);
    assert.equal(warnings.length, 1, 'once a minute at most, not once a payload');
    assert.match(warnings[0]!, /WARNING: read a payload that is not encrypted \(1 so far\)/);
  });

  test('workers and clients configured from the environment refuse unless told otherwise', async () => {
    const keys = `k1:${b64(KEY)}`;
    const base = { ANTHROPIC_BASE_URL: 'http://127.0.0.1:1', PAYLOAD_ENCRYPTION_KEYS: keys };
    assert.equal(loadConfig(base).PAYLOAD_ENCRYPTION_PLAINTEXT, 'refuse');
    assert.equal(
      loadConfig({ ...base, PAYLOAD_ENCRYPTION_PLAINTEXT: 'accept' }).PAYLOAD_ENCRYPTION_PLAINTEXT,
      'accept',
    );
    assert.throws(() => loadConfig({ ...base, PAYLOAD_ENCRYPTION_PLAINTEXT: 'yes' }), /PAYLOAD_ENCRYPTION_PLAINTEXT/);
    const [codec] = dataConverterFromEnv({ PAYLOAD_ENCRYPTION_KEYS: keys })!.payloadCodecs!;
    await assert.rejects(codec!.decode([plain(1)]), PayloadDecryptionError);
  });
});

describe('a key written the wrong way round in PAYLOAD_ENCRYPTION_KEYS', () => {
  const key = b64(randomBytes(32));
  const keyUrl = key.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  for (const [what, value] of [
    ['base64:id', `${key}:k1`],
    ['base64url without padding:id', `${keyUrl}:k1`],
    ['a second entry', `k0:${b64(randomBytes(32))},${key}:k1`],
  ]) {
    test(`(${what}) is refused without quoting the key`, () => {
      assert.throws(
        () => parseKeyRing(value!),
        (error: Error) =>
          /wrong way round/.test(error.message) && !error.message.includes(key) && !error.message.includes(keyUrl),
      );
      assert.throws(
        () => loadConfig({ ANTHROPIC_BASE_URL: 'http://127.0.0.1:1', PAYLOAD_ENCRYPTION_KEYS: value }),
        (error: Error) =>
          /PAYLOAD_ENCRYPTION_KEYS/.test(error.message) &&
          !error.message.includes(key.slice(0, 16)) &&
          !error.message.includes(keyUrl.slice(0, 16)),
      );
    });
  }

  test('an id that is not one (part of a key, a typo) is not quoted back either', () => {
    const half = `${b64(randomBytes(24))}+/=`;
    assert.throws(
      () => parseKeyRing(`${half}:${key}`),
      (error: Error) => /entry 1/.test(error.message) && !error.message.includes(half),
    );
  });
});
