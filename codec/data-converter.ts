// The data converter for clients and workers when payload encryption is configured (PAYLOAD_ENCRYPTION_KEYS).
import type { DataConverter } from '@temporalio/common';
import { z } from 'zod';
import { AesGcmCodec, type PlaintextPolicy } from './aes-gcm-codec';
import { type KeyRing, parseKeyRing } from './keys';

/** This folder's failure converter, for `bundleWorkflowCode({ failureConverterPath })` and the worker. */
export const FAILURE_CONVERTER_PATH = require.resolve('./failure-converter');

/**
 * Encrypts every payload with the ring's current key (decrypts with any of its keys) and moves failure messages and
 * stack traces into an encrypted payload. Pass the same to `new Client({ dataConverter })` and
 * `Worker.create({ dataConverter })`; a pre-built workflow bundle must be built with `FAILURE_CONVERTER_PATH`.
 */
export function encryptingDataConverter(keys: KeyRing, plaintext: PlaintextPolicy = 'refuse'): DataConverter {
  return { payloadCodecs: [new AesGcmCodec(keys, { plaintext })], failureConverterPath: FAILURE_CONVERTER_PATH };
}

/** PAYLOAD_ENCRYPTION_PLAINTEXT: what a reader does with a payload that is not encrypted (aes-gcm-codec.ts). */
export const plaintextPolicySchema = z.enum(['refuse', 'accept']).default('refuse');

/**
 * The data converter for `PAYLOAD_ENCRYPTION_KEYS` (and `PAYLOAD_ENCRYPTION_PLAINTEXT`), or undefined when no keys
 * are set (no encryption).
 */
export function dataConverterFromEnv(env: Record<string, string | undefined> = process.env): DataConverter | undefined {
  const text = env.PAYLOAD_ENCRYPTION_KEYS?.trim();
  const policy = plaintextPolicySchema.safeParse(env.PAYLOAD_ENCRYPTION_PLAINTEXT?.trim() || undefined);
  if (!policy.success) throw new Error('PAYLOAD_ENCRYPTION_PLAINTEXT: must be refuse or accept');
  return text ? encryptingDataConverter(parseKeyRing(text), policy.data) : undefined;
}
