// Identifiers shaped like the real API's: `msg_01…`, `toolu_01…`, `req_01…` followed by 24 base-62 characters.
// Random bytes are drawn from a pool refilled 8 KB at a time (one syscall per ~300 ids, not one per id).
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const LENGTH = 24;
let pool = randomBytes(8192);
let offset = 0;

function randomId(prefix: string): string {
  if (offset + LENGTH > pool.length) {
    pool = randomBytes(8192);
    offset = 0;
  }
  let out = prefix;
  for (let i = 0; i < LENGTH; i++) out += ALPHABET[(pool[offset + i] ?? 0) % ALPHABET.length];
  offset += LENGTH;
  return out;
}

export const messageId = (): string => randomId('msg_01');
export const toolUseId = (): string => randomId('toolu_01');
export const requestId = (): string => randomId('req_01');
