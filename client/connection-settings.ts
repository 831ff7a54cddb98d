// How every command of the package reaches Temporal — the worker, the CLI and the gateway alike: the same environment
// variables, parsed by one schema, turned into Connection.connect options (plain, TLS, mTLS or an API key: Temporal
// Cloud) by one function.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { TLSConfig } from '@temporalio/client';
import { z } from 'zod';
import { ConfigError, parseEnvironment } from './environment-config';

const optionalText = z.string().trim().min(1).optional().catch(undefined);
/** Visible ASCII: what goes into a gRPC header or a TLS name as it is (a line break there fails far from its cause). */
const visibleAscii = z
  .string()
  .trim()
  .regex(/^[\x21-\x7e]+$/, 'must be visible ASCII characters only (no spaces, no control or non-ASCII characters)');

/** The variables, as a zod shape each command's own schema spreads (`z.object({ ...connectionSettingsShape, … })`). */
export const connectionSettingsShape = {
  TEMPORAL_ADDRESS: z
    .string()
    .trim()
    .max(1_000, 'must be at most 1,000 characters')
    .regex(/^[\x21-\x39\x3b-\x7e]+:\d{1,5}$/, 'must be host:port, e.g. localhost:7233')
    .default('localhost:7233'),
  TEMPORAL_NAMESPACE: z.string().trim().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().trim().min(1).default('claude-conversations'),
  /** Temporal Cloud's API key (sent as a bearer token); turns TLS on unless TEMPORAL_TLS=false. */
  TEMPORAL_API_KEY: visibleAscii.optional(),
  /** `true` for TLS with nothing else set (the system's CAs); `false` for none even with an API key. */
  TEMPORAL_TLS: z
    .enum(['true', 'false'], { error: 'must be true or false' })
    .transform((value) => value === 'true')
    .optional(),
  /** mTLS: the client certificate and its key, PEM files (both or neither). */
  TEMPORAL_TLS_CLIENT_CERT_PATH: optionalText,
  TEMPORAL_TLS_CLIENT_KEY_PATH: optionalText,
  /** The CA that signed the server's certificate, a PEM file (a private CA); default: the system's. */
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: optionalText,
  /** The name the server's certificate must carry, when it is not the address's host. */
  TEMPORAL_TLS_SERVER_NAME: visibleAscii.optional(),
};

export const connectionSettingsSchema = z.object(connectionSettingsShape);

export type ConnectionSettings = z.output<typeof connectionSettingsSchema>;

/** The settings that say how to connect (not which namespace or task queue). */
type ConnectionFields = Pick<
  ConnectionSettings,
  | 'TEMPORAL_ADDRESS'
  | 'TEMPORAL_API_KEY'
  | 'TEMPORAL_TLS'
  | 'TEMPORAL_TLS_CLIENT_CERT_PATH'
  | 'TEMPORAL_TLS_CLIENT_KEY_PATH'
  | 'TEMPORAL_TLS_SERVER_CA_CERT_PATH'
  | 'TEMPORAL_TLS_SERVER_NAME'
>;

/** What is wrong with settings that parsed one by one (a certificate without its key), one line per problem. */
export function connectionSettingsProblems(settings: ConnectionFields): string[] {
  return !settings.TEMPORAL_TLS_CLIENT_CERT_PATH !== !settings.TEMPORAL_TLS_CLIENT_KEY_PATH
    ? ['TEMPORAL_TLS_CLIENT_CERT_PATH, TEMPORAL_TLS_CLIENT_KEY_PATH: set both (mTLS) or neither.']
    : [];
}

/** A ConfigError naming each problem of settings that parsed one by one (connectionSettingsProblems), if any. */
export function assertConnectionSettings(settings: ConnectionFields): void {
  const problems = connectionSettingsProblems(settings);
  if (problems.length > 0) throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
}

/** The connection settings of the environment (for a command that needs no more), or a ConfigError naming what is wrong. */
export function loadConnectionSettings(env: Record<string, string | undefined> = process.env): ConnectionSettings {
  const settings = parseEnvironment(connectionSettingsSchema, env);
  assertConnectionSettings(settings);
  return settings;
}

/** Options both Connection.connect (@temporalio/client) and NativeConnection.connect (@temporalio/worker) take. */
export interface TemporalConnectionOptions {
  address: string;
  /** false: a plain connection. */
  tls: TLSConfig | false;
  apiKey?: string;
}

/**
 * Connection.connect / NativeConnection.connect options for the configured server: plain, TLS, mTLS (Temporal Cloud)
 * or an API key. Reads the PEM files now: one that cannot be read is a ConfigError naming its variable.
 */
export function connectionOptions(settings: ConnectionFields): TemporalConnectionOptions {
  assertConnectionSettings(settings);
  const certPath = settings.TEMPORAL_TLS_CLIENT_CERT_PATH;
  const keyPath = settings.TEMPORAL_TLS_CLIENT_KEY_PATH;
  const caPath = settings.TEMPORAL_TLS_SERVER_CA_CERT_PATH;
  const mtls =
    certPath && keyPath
      ? {
          crt: readPem(certPath, 'TEMPORAL_TLS_CLIENT_CERT_PATH', 'certificate'),
          key: readPem(keyPath, 'TEMPORAL_TLS_CLIENT_KEY_PATH', 'private key'),
        }
      : undefined;
  const wantsTls = settings.TEMPORAL_TLS ?? Boolean(mtls || settings.TEMPORAL_API_KEY || caPath);
  return {
    address: settings.TEMPORAL_ADDRESS,
    // tls: false when TEMPORAL_TLS=false (an API key alone would otherwise turn TLS on).
    tls: wantsTls
      ? {
          ...(mtls && { clientCertPair: mtls }),
          ...(caPath && {
            serverRootCACertificate: readPem(caPath, 'TEMPORAL_TLS_SERVER_CA_CERT_PATH', 'certificate'),
          }),
          ...(settings.TEMPORAL_TLS_SERVER_NAME && { serverNameOverride: settings.TEMPORAL_TLS_SERVER_NAME }),
        }
      : false,
    ...(settings.TEMPORAL_API_KEY && { apiKey: settings.TEMPORAL_API_KEY }),
  };
}

/**
 * The PEM file `variable` names, checked with Node's own parsers: a file that is not a certificate (or a key) would
 * otherwise fail only as "Failed to connect before the deadline", seconds later.
 */
function readPem(file: string, variable: string, holds: 'certificate' | 'private key'): Buffer {
  const refuse = (why: string) =>
    new ConfigError(`Invalid configuration:\n  ${variable}: ${JSON.stringify(file)} ${why}`);
  let pem: Buffer;
  try {
    pem = readFileSync(file);
  } catch (err) {
    throw refuse(`cannot be read (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
  try {
    if (holds === 'certificate') new X509Certificate(pem);
    else createPrivateKey(pem);
  } catch {
    throw refuse(`is not a PEM ${holds}`);
  }
  return pem;
}
