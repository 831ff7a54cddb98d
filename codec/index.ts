// `claude-temporal-orchestrator/codec`: payload encryption (AES-256-GCM with a key ring) for workers and clients,
// and the codec server the Web UI and CLI decrypt through.
export { AesGcmCodec, PayloadDecryptionError } from './aes-gcm-codec';
export { type CodecServer, type CodecServerOptions, startCodecServer } from './codec-server';
export { dataConverterFromEnv, encryptingDataConverter, FAILURE_CONVERTER_PATH } from './data-converter';
export { type EncryptionKey, generateKeyBase64, KeyRing, parseKeyRing } from './keys';
export { type CodecServerConfig, loadCodecServerConfig } from './server-config';
