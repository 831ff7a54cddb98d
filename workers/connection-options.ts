// How a worker (or client) reaches the configured Temporal server: plain, TLS, mTLS (Temporal Cloud) or an API key.
import { readFileSync } from 'node:fs';
import type { NativeConnectionOptions } from '@temporalio/worker';
import type { WorkerConfig } from './config';

/** NativeConnection.connect options for the configured server: plain, TLS, mTLS (Temporal Cloud) or an API key. */
export function connectionOptions(
  config: Pick<
    WorkerConfig,
    | 'TEMPORAL_ADDRESS'
    | 'TEMPORAL_API_KEY'
    | 'TEMPORAL_TLS'
    | 'TEMPORAL_TLS_CLIENT_CERT_PATH'
    | 'TEMPORAL_TLS_CLIENT_KEY_PATH'
    | 'TEMPORAL_TLS_SERVER_CA_CERT_PATH'
    | 'TEMPORAL_TLS_SERVER_NAME'
  >,
): NativeConnectionOptions {
  const mtls =
    config.TEMPORAL_TLS_CLIENT_CERT_PATH && config.TEMPORAL_TLS_CLIENT_KEY_PATH
      ? {
          crt: readFileSync(config.TEMPORAL_TLS_CLIENT_CERT_PATH),
          key: readFileSync(config.TEMPORAL_TLS_CLIENT_KEY_PATH),
        }
      : undefined;
  const wantsTls =
    config.TEMPORAL_TLS ?? Boolean(mtls || config.TEMPORAL_API_KEY || config.TEMPORAL_TLS_SERVER_CA_CERT_PATH);
  return {
    address: config.TEMPORAL_ADDRESS,
    // tls: false when TEMPORAL_TLS=false (an API key alone would otherwise turn TLS on).
    tls: wantsTls
      ? {
          ...(mtls && { clientCertPair: mtls }),
          ...(config.TEMPORAL_TLS_SERVER_CA_CERT_PATH && {
            serverRootCACertificate: readFileSync(config.TEMPORAL_TLS_SERVER_CA_CERT_PATH),
          }),
          ...(config.TEMPORAL_TLS_SERVER_NAME && { serverNameOverride: config.TEMPORAL_TLS_SERVER_NAME }),
        }
      : false,
    ...(config.TEMPORAL_API_KEY && { apiKey: config.TEMPORAL_API_KEY }),
  };
}
