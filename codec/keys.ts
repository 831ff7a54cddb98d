// Payload encryption keys: `PAYLOAD_ENCRYPTION_KEYS=key1:<base64 32 bytes>,key0:<base64 32 bytes>`. The first key is
// the current one (every new payload is encrypted with it); the others only decrypt what they once encrypted, so a
// key is rotated by putting a new one in front and dropping the old one once no history still needs it.
//
// A key ring never prints its key material: String(), JSON.stringify() and util.inspect() show only the key ids.
import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { z } from 'zod';

export const KEY_BYTES = 32; // AES-256
export const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;

export interface EncryptionKey {
  id: string;
  /** 32 raw bytes. */
  key: Buffer;
}

export class KeyRing {
  readonly current: EncryptionKey;
  private readonly byId: ReadonlyMap<string, Buffer>;

  constructor(keys: readonly EncryptionKey[]) {
    if (keys.length === 0) throw new Error('A key ring needs at least one key.');
    const byId = new Map<string, Buffer>();
    for (const [index, { id, key }] of keys.entries()) {
      // Not quoted back: a text that is not a valid id may be key material written in the wrong place.
      if (!KEY_ID.test(id))
        throw new Error(`Invalid key id in entry ${index + 1}: use 1-64 characters of A-Z a-z 0-9 . _ -`);
      if (key.length !== KEY_BYTES) throw new Error(`Key ${id} has ${key.length} bytes; AES-256 needs ${KEY_BYTES}.`);
      if (byId.has(id)) throw new Error(`Key id ${id} appears twice.`);
      byId.set(id, Buffer.from(key));
    }
    this.byId = byId;
    this.current = { id: keys[0]!.id, key: byId.get(keys[0]!.id)! };
  }

  /** The key with this id, or undefined. */
  get(id: string): Buffer | undefined {
    return this.byId.get(id);
  }

  get ids(): string[] {
    return [...this.byId.keys()];
  }

  toString(): string {
    return `KeyRing(current=${this.current.id}, ids=${this.ids.join(',')})`;
  }

  toJSON(): { current: string; ids: string[] } {
    return { current: this.current.id, ids: this.ids };
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

/** A fresh random key, base64 (for `PAYLOAD_ENCRYPTION_KEYS`). */
export function generateKeyBase64(): string {
  return randomBytes(KEY_BYTES).toString('base64');
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

const decodeBase64 = (text: string): Buffer | undefined => {
  const standard = text.trim().replace(/-/g, '+').replace(/_/g, '/');
  return BASE64.test(standard) ? Buffer.from(standard, 'base64') : undefined;
};

/**
 * Parses `id:base64,id:base64`. Errors name the key id (when it is one) and what is wrong, never the key material:
 * an entry written the wrong way round (`base64:id`) is named by its position only.
 * Whitespace around entries is ignored; standard base64 (with padding) or base64url is accepted.
 */
export function parseKeyRing(text: string): KeyRing {
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (entries.length === 0) throw new Error('no keys: expected id:base64key[,id:base64key...]');
  const keys = entries.map((entry, index) => {
    const colon = entry.indexOf(':');
    if (colon <= 0) throw new Error(`entry ${index + 1} is not id:base64key`);
    const id = entry.slice(0, colon).trim();
    const material = entry.slice(colon + 1).trim();
    // The part before the colon is a whole key: the entry is `base64key:id`.
    if (decodeBase64(id)?.length === KEY_BYTES)
      throw new Error(`entry ${index + 1} is written the wrong way round: write id:base64key, the id first`);
    if (!KEY_ID.test(id))
      throw new Error(`entry ${index + 1}: the key id must be 1-64 characters of A-Z a-z 0-9 . _ -`);
    const key = decodeBase64(material);
    if (!key) throw new Error(`key ${id} is not base64`);
    return { id, key };
  });
  return new KeyRing(keys);
}

/** `PAYLOAD_ENCRYPTION_KEYS` as a zod schema: a string in, a KeyRing out (workers/config.ts, the codec server). */
export const keyRingSchema = z.string().transform((text, ctx) => {
  try {
    return parseKeyRing(text);
  } catch (error) {
    ctx.addIssue({
      code: 'custom',
      message: `${(error as Error).message} (32-byte keys, base64; the first is current)`,
    });
    return z.NEVER;
  }
});
