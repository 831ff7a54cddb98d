// The codec server for the Temporal Web UI and CLI (see codec/codec-server.ts): decrypts payloads for people who
// may read them, with the same keys as the workers.
//
//   PAYLOAD_ENCRYPTION_KEYS=k1:… CODEC_SERVER_TOKEN=… npx tsx codec/server-main.ts
//   … --check      validate the configuration and exit (no server)
//
// Environment: PAYLOAD_ENCRYPTION_KEYS (required), CODEC_SERVER_TOKEN (required), CODEC_SERVER_HOST (127.0.0.1),
// CODEC_SERVER_PORT (8081), CODEC_SERVER_CORS_ORIGINS (comma-separated Web UI origins), CODEC_SERVER_SESSION_MAX_AGE
// (how long a browser's login lasts, "8 hours").
// Then: `temporal workflow show -w <id> --codec-endpoint http://127.0.0.1:8081 --codec-auth "Bearer $CODEC_SERVER_TOKEN"`,
// or the Web UI with TEMPORAL_CODEC_ENDPOINT / `--ui-codec-endpoint` (log in once at http://…:8081/login).
import { AesGcmCodec } from './aes-gcm-codec';
import { startCodecServer } from './codec-server';
import { loadCodecServerConfig } from './server-config';

async function main(): Promise<void> {
  const config = loadCodecServerConfig();
  const summary =
    `keys ${config.PAYLOAD_ENCRYPTION_KEYS.ids.join(', ')} (current ${config.PAYLOAD_ENCRYPTION_KEYS.current.id}); ` +
    `CORS origins ${config.CODEC_SERVER_CORS_ORIGINS.join(', ')}`;
  if (process.argv.includes('--check')) {
    console.log(`Codec server configuration OK: ${config.CODEC_SERVER_HOST}:${config.CODEC_SERVER_PORT}; ${summary}`);
    return;
  }
  const server = await startCodecServer({
    // It shows what is stored: a plain payload is shown as it is (the workers refuse it, see aes-gcm-codec.ts).
    codec: new AesGcmCodec(config.PAYLOAD_ENCRYPTION_KEYS, { plaintext: 'accept', warn: () => undefined }),
    token: config.CODEC_SERVER_TOKEN,
    allowedOrigins: config.CODEC_SERVER_CORS_ORIGINS,
    host: config.CODEC_SERVER_HOST,
    port: config.CODEC_SERVER_PORT,
    sessionMaxAgeSeconds: config.CODEC_SERVER_SESSION_MAX_AGE,
    log: (line) => console.log(`[codec-server] ${line}`),
  });
  console.log(`Codec server listening on ${config.CODEC_SERVER_HOST}:${server.port}; ${summary}`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
