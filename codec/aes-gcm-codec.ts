// A PayloadCodec that encrypts every payload with AES-256-GCM before it leaves the process (client, worker, codec
// server), so the Temporal server stores only ciphertext: workflow and activity inputs and results, update and query
// arguments, the workflow's static summary/details and activity summaries (user metadata), failure details.
//
// Encoded payload:
//   metadata.encoding           "binary/encrypted"
//   metadata.encryption-key-id  the id of the key that encrypted it (any configured key decrypts by id: rotation)
//   data                        12-byte random IV | ciphertext of the whole original Payload protobuf | 16-byte GCM tag
// The key id is also the GCM additional authenticated data, so a payload cannot be passed off as another key's.
//
// A payload that is NOT encrypted was written by something without the keys (the Temporal CLI or Web UI without the
// codec server, a client without PAYLOAD_ENCRYPTION_KEYS): its text is already stored in plain on the server. Workers
// and clients refuse it ('refuse', the default): a warning in a log is easy to miss while secrets keep flowing, a
// refusal shows at the first such payload, with the cause, where the caller looks (the workflow task failure in the
// Web UI, the client's error). 'accept' (PAYLOAD_ENCRYPTION_PLAINTEXT=accept) is for turning encryption on in a
// deployment whose histories still hold plain payloads: they are read, and a warning says so. The codec server, which
// only shows what is stored, passes them through either way.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { KeyRing } from './keys';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const ALGORITHM = 'aes-256-gcm';

const ProtoPayload = temporal.api.common.v1.Payload;
const utf8 = (text: string): Uint8Array => Buffer.from(text, 'utf8');
const text = (bytes: Uint8Array | null | undefined): string => (bytes ? Buffer.from(bytes).toString('utf8') : '');

/** A payload that cannot be decrypted; the message names the key id and the reason, never key material. */
export class PayloadDecryptionError extends Error {
  override name = 'PayloadDecryptionError';
}

/** What decoding does with a payload that is not encrypted. */
export type PlaintextPolicy = 'refuse' | 'accept';

export interface AesGcmCodecOptions {
  /** Default 'refuse'. */
  plaintext?: PlaintextPolicy;
  /** Where 'accept' reports a plain payload (default: console.warn, at most once a minute with a count). */
  warn?: (message: string) => void;
}

export const PLAINTEXT_REFUSED =
  'Refusing a payload that is not encrypted: this deployment encrypts payloads (PAYLOAD_ENCRYPTION_KEYS), and this one ' +
  'was written by a client without the keys (e.g. the Temporal CLI or Web UI without --codec-endpoint / the codec ' +
  'server), so its content is stored in plain text. Send it through a client with PAYLOAD_ENCRYPTION_KEYS or the ' +
  'codec server; while migrating a deployment that still holds plain payloads, set PAYLOAD_ENCRYPTION_PLAINTEXT=accept.';

export function isEncrypted(payload: Payload): boolean {
  return text(payload.metadata?.encoding) === ENCRYPTED_ENCODING;
}

export class AesGcmCodec implements PayloadCodec {
  private readonly plaintext: PlaintextPolicy;
  private readonly warn: (message: string) => void;
  private plainSeen = 0;
  private lastWarnedAt = -Infinity;

  constructor(
    private readonly keys: KeyRing,
    options: AesGcmCodecOptions = {},
  ) {
    this.plaintext = options.plaintext ?? 'refuse';
    this.warn = options.warn ?? ((message) => console.warn(message));
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.encrypt(payload));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => (isEncrypted(payload) ? this.decrypt(payload) : this.acceptPlain(payload)));
  }

  private acceptPlain(payload: Payload): Payload {
    if (this.plaintext === 'refuse') throw new PayloadDecryptionError(PLAINTEXT_REFUSED);
    this.plainSeen++;
    const now = Date.now();
    if (now - this.lastWarnedAt >= 60_000) {
      this.lastWarnedAt = now;
      this.warn(
        `WARNING: read a payload that is not encrypted (${this.plainSeen} so far) in a deployment that encrypts ` +
          'payloads: PAYLOAD_ENCRYPTION_PLAINTEXT=accept. Its content is stored in plain text on the server.',
      );
    }
    return payload;
  }

  encrypt(payload: Payload): Payload {
    const { id, key } = this.keys.current;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(utf8(id));
    const plain = ProtoPayload.encode(payload).finish();
    const data = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    return { metadata: { encoding: utf8(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: utf8(id) }, data };
  }

  decrypt(payload: Payload): Payload {
    const id = text(payload.metadata?.[KEY_ID_METADATA]);
    if (!id) throw new PayloadDecryptionError(`Encrypted payload has no ${KEY_ID_METADATA} metadata.`);
    const key = this.keys.get(id);
    if (!key) {
      throw new PayloadDecryptionError(
        `Cannot decrypt payload: encryption key "${id}" is not configured (configured: ${this.keys.ids.join(', ')}). ` +
          'Add it to PAYLOAD_ENCRYPTION_KEYS (after the current key) to read data written with it.',
      );
    }
    const data = Buffer.from(payload.data ?? new Uint8Array());
    if (data.length < IV_BYTES + TAG_BYTES)
      throw new PayloadDecryptionError(`Encrypted payload (key "${id}") is truncated.`);
    const decipher = createDecipheriv(ALGORITHM, key, data.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(utf8(id));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    let plain: Buffer;
    try {
      plain = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new PayloadDecryptionError(
        `Cannot decrypt payload with key "${id}": authentication failed (wrong key material, or the data was altered).`,
      );
    }
    const decoded = ProtoPayload.decode(plain);
    return { metadata: decoded.metadata, data: decoded.data };
  }
}
