// The data converter for clients and workers when payload encryption is configured (PAYLOAD_ENCRYPTION_KEYS).
import type { DataConverter } from '@temporalio/common';
import { AesGcmCodec } from './aes-gcm-codec';
import { type KeyRing, parseKeyRing } from './keys';

/** This folder's failure converter, for `bundleWorkflowCode({ failureConverterPath })` and the worker. */
export const FAILURE_CONVERTER_PATH = require.resolve('./failure-converter');

/**
 * Encrypts every payload with the ring's current key (decrypts with any of its keys) and moves failure messages and
 * stack traces into an encrypted payload. Pass the same to `new Client({ dataConverter })` and
 * `Worker.create({ dataConverter })`; a pre-built workflow bundle must be built with `FAILURE_CONVERTER_PATH`.
 */
export function encryptingDataConverter(keys: KeyRing): DataConverter {
  return { payloadCodecs: [new AesGcmCodec(keys)], failureConverterPath: FAILURE_CONVERTER_PATH };
}

/** The data converter for `PAYLOAD_ENCRYPTION_KEYS`, or undefined when it is not set (no encryption). */
export function dataConverterFromEnv(env: Record<string, string | undefined> = process.env): DataConverter | undefined {
  const text = env.PAYLOAD_ENCRYPTION_KEYS?.trim();
  return text ? encryptingDataConverter(parseKeyRing(text)) : undefined;
}
