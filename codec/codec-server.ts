// The codec server: the Temporal Web UI and CLI send it encrypted payloads and get them back readable (and the other
// way round), so neither the Temporal server nor the UI ever holds a key. The protocol (temporalio/samples-go
// codec-server/protocol.md, and the Web UI's data-encoder service):
//
//   POST <anything>/decode and POST <anything>/encode      only the last path segment counts
//     Content-Type: application/json, X-Namespace: <namespace>
//     body {"payloads": [{"metadata": {"encoding": "<base64>"}, "data": "<base64>"}]}   (proto3 JSON: bytes are base64)
//   200 with the same shape; 400 for bad JSON or a payload that cannot be decoded; 415 for another content type.
//
// Access: every /encode and /decode needs `Authorization: Bearer <token>` (the CLI: `--codec-auth "Bearer <token>"`)
// or the session cookie that `POST /login` sets. The Web UI cannot send a static header: it sends the Authorization
// header only with "Pass the user access token" (the user's OIDC token, to an https endpoint), and cookies with
// "Include cross-origin credentials" (TEMPORAL_CODEC_INCLUDE_CREDENTIALS=true) — that is what /login is for, the
// "own login page and session cookies" Temporal's docs recommend. The session cookie is its issue time and an HMAC
// of it under the token, so it holds for every replica, ends when the token changes, and ends after its lifetime
// (8 hours by default), checked here on every request as well as by the browser (Max-Age). /login takes a few
// attempts per client address per minute (login-attempts.ts), then answers 429 with Retry-After.
//
// Hostile input (test/hostile/codec-server-http.test.ts) gets a 4xx that says what was wrong without quoting it:
// /encode and /decode take application/json only, payload bytes must be base64, bodies are bounded.
//
// CORS: only the configured Web UI origins get CORS headers (with credentials allowed); a request from any other
// Origin is refused with 403, preflight included. Preflight (OPTIONS) needs no credentials, as browsers send none.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { isWellFormed, truncate } from '../common/safe-text';
import { KEY_ID_METADATA } from './aes-gcm-codec';
import { KEY_ID } from './keys';
import { LoginAttempts } from './login-attempts';

export interface CodecServerOptions {
  codec: PayloadCodec;
  /** Required secret: `Authorization: Bearer <token>`, or the cookie from POST /login. */
  token: string;
  /** Web UI origins allowed to call from a browser, e.g. `http://localhost:8080`. */
  allowedOrigins: readonly string[];
  /** Default 127.0.0.1 (a container sets 0.0.0.0). */
  host?: string;
  /** Default 0: any free port. */
  port?: number;
  /** Largest request body; default 8 MiB (above Temporal's 2 MB payload limit, with base64 overhead). */
  maxBodyBytes?: number;
  /** One line per request: method, path, status, namespace, payload count. Never bodies, tokens or keys. */
  log?: (line: string) => void;
  /** How long a login lasts: the cookie's Max-Age, and checked on every request. Default 8 hours. */
  sessionMaxAgeSeconds?: number;
  /** Logins a client address may try per minute (a successful one clears its count). Default 5. */
  loginAttemptsPerMinute?: number;
  /** The clock, in ms (tests). Default Date.now. */
  now?: () => number;
}

export interface CodecServer {
  /** `http://host:port` — the endpoint for the Web UI / CLI (they append /decode and /encode). */
  url: string;
  port: number;
  close(): Promise<void>;
}

export const SESSION_COOKIE = 'codec_session';
export const DEFAULT_SESSION_MAX_AGE_S = 8 * 60 * 60;
const DEFAULT_LOGIN_ATTEMPTS_PER_MINUTE = 5;
/** A session issued this far in the future is refused: clocks of replicas may differ by this much. */
const CLOCK_SKEW_S = 60;
/** What a log line shows of a path or a header at most. */
const MAX_LOGGED_CHARS = 200;
/** A codec error's message is the codec's, but may quote a payload's metadata (an unknown key id): bounded. */
const MAX_ERROR_CHARS = 300;
/** Proto3 JSON bytes: standard or URL-safe base64, padding optional. */
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

interface JsonPayload {
  metadata?: Record<string, string> | null;
  data?: string | null;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

function base64(value: string, what: string): Buffer {
  if (!BASE64.test(value)) throw new HttpError(400, `${what} is not base64`);
  return Buffer.from(value, 'base64');
}

/** A string for a response or a log line: well-formed, control characters replaced, bounded. */
function printable(text: string, max: number): string {
  return truncate(text, max).replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
}

/** The media type of a request, without parameters (`application/json; charset=utf-8` → `application/json`). */
function mediaType(req: http.IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

function fromJson(value: unknown, index: number): Payload {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new HttpError(400, `payloads[${index}] is not an object`);
  const { metadata, data } = value as JsonPayload;
  if (metadata != null && typeof metadata !== 'object')
    throw new HttpError(400, `payloads[${index}].metadata is not an object`);
  if (data != null && typeof data !== 'string')
    throw new HttpError(400, `payloads[${index}].data is not a base64 string`);
  // Keys are the caller's: a failure names the payload, not the key.
  const entries = Object.entries(metadata ?? {}).map(([key, encoded]): [string, Uint8Array] => {
    if (!isWellFormed(key)) throw new HttpError(400, `payloads[${index}].metadata has a key that is not valid Unicode`);
    if (typeof encoded !== 'string')
      throw new HttpError(400, `payloads[${index}].metadata has a value that is not a string`);
    return [key, base64(encoded, `a value of payloads[${index}].metadata`)];
  });
  return { metadata: Object.fromEntries(entries), data: base64(data ?? '', `payloads[${index}].data`) };
}

function toJson(payload: Payload): JsonPayload {
  return {
    metadata: Object.fromEntries(
      Object.entries(payload.metadata ?? {}).map(([key, value]) => [
        key,
        Buffer.from(value ?? new Uint8Array()).toString('base64'),
      ]),
    ),
    data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64'),
  };
}

function sameSecret(a: string, b: string): boolean {
  // Hash first: timingSafeEqual needs equal lengths, and the lengths must not leak either.
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

/** `<issued at, unix seconds>.<HMAC-SHA256 of it under the token, base64url>`. */
function sessionValue(token: string, issuedAtS: number): string {
  const mac = createHmac('sha256', token).update(`codec-server-session-v2.${issuedAtS}`).digest('base64url');
  return `${issuedAtS}.${mac}`;
}

function validSession(sent: string, token: string, nowS: number, maxAgeS: number): boolean {
  const match = /^(\d{1,12})\.[\w-]{43}$/.exec(sent);
  if (!match) return false;
  const issuedAtS = Number(match[1]);
  if (issuedAtS > nowS + CLOCK_SKEW_S || nowS - issuedAtS >= maxAgeS) return false;
  return sameSecret(sent, sessionValue(token, issuedAtS));
}

function cookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return undefined;
}

/**
 * The body, up to `max` bytes. Past it, 413 — and the rest is read and dropped rather than the stream destroyed, which
 * would reset the connection before the refusal is sent (Node reads what is left after the response, within its
 * request timeout).
 */
function readBody(req: http.IncomingMessage, max: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > max) {
    return Promise.reject(new HttpError(413, `request body over ${max} bytes`));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      if (size > max) return;
      size += chunk.length;
      if (size > max) {
        chunks.length = 0;
        reject(new HttpError(413, `request body over ${max} bytes`));
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

const LOGIN_PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>Codec server login</title></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 3em auto">
<h1>Codec server</h1>
<p>Enter the codec server token (CODEC_SERVER_TOKEN) to let this browser decode payloads in the Temporal Web UI.
Then turn on <em>Include cross-origin credentials</em> in the Web UI's codec server settings
(or start the UI with TEMPORAL_CODEC_INCLUDE_CREDENTIALS=true).</p>
<form method="post" action="login"><input type="password" name="token" autocomplete="current-password" size="50" autofocus>
<button type="submit">Log in</button></form>
</body></html>
`;

export async function startCodecServer(options: CodecServerOptions): Promise<CodecServer> {
  if (!options.token) throw new Error('The codec server needs a token (CODEC_SERVER_TOKEN).');
  const { codec, token } = options;
  const allowed = new Set(options.allowedOrigins.map((origin) => origin.replace(/\/+$/, '')));
  const maxBody = options.maxBodyBytes ?? 8 * 1024 * 1024;
  const now = options.now ?? Date.now;
  const sessionMaxAgeS = options.sessionMaxAgeSeconds ?? DEFAULT_SESSION_MAX_AGE_S;
  if (!Number.isInteger(sessionMaxAgeS) || sessionMaxAgeS < 1)
    throw new Error('sessionMaxAgeSeconds: a whole number ≥ 1');
  const logins = new LoginAttempts(options.loginAttemptsPerMinute ?? DEFAULT_LOGIN_ATTEMPTS_PER_MINUTE, 60_000, now);
  const nowS = () => Math.floor(now() / 1000);

  const authorized = (req: http.IncomingMessage): boolean => {
    const header = req.headers.authorization;
    if (header?.startsWith('Bearer ') && sameSecret(header.slice('Bearer '.length).trim(), token)) return true;
    const sent = cookie(req.headers.cookie, SESSION_COOKIE);
    return sent !== undefined && validSession(sent, token, nowS(), sessionMaxAgeS);
  };

  const handle = async (
    req: http.IncomingMessage,
    res: http.ServerResponse,
  ): Promise<{ namespace?: string; count?: number }> => {
    const url = new URL(req.url ?? '/', 'http://codec.invalid');
    const action = url.pathname.replace(/\/+$/, '').split('/').pop() ?? '';
    const origin = req.headers.origin;
    if (origin !== undefined) {
      if (!allowed.has(origin)) throw new HttpError(403, 'this origin is not allowed (CODEC_SERVER_CORS_ORIGINS)');
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Allow-Credentials', 'true');
    }
    res.setHeader('Vary', 'Origin');

    if (url.pathname === '/health') {
      if (req.method !== 'GET' && req.method !== 'HEAD') throw new HttpError(405, 'use GET', { Allow: 'GET, HEAD' });
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok\n');
      return {};
    }
    if (url.pathname === '/login' || url.pathname === '/login/') {
      if (req.method === 'GET') {
        res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' }).end(LOGIN_PAGE);
        return {};
      }
      if (req.method !== 'POST') throw new HttpError(405, 'use GET or POST', { Allow: 'GET, POST' });
      if (mediaType(req) !== 'application/x-www-form-urlencoded')
        throw new HttpError(415, 'send the login form (application/x-www-form-urlencoded)');
      // Taken before the body is read: concurrent attempts count as they start.
      const address = req.socket.remoteAddress ?? 'unknown';
      const waitS = logins.take(address);
      if (waitS !== undefined) {
        throw new HttpError(429, 'too many login attempts from this address; try again later', {
          'Retry-After': String(waitS),
        });
      }
      const form = new URLSearchParams((await readBody(req, 64 * 1024)).toString('utf8'));
      if (!sameSecret(form.get('token') ?? '', token)) throw new HttpError(401, 'wrong token');
      logins.succeeded(address);
      const secure = req.headers['x-forwarded-proto'] === 'https' || (req.socket as { encrypted?: boolean }).encrypted;
      res.setHeader(
        'Set-Cookie',
        `${SESSION_COOKIE}=${sessionValue(token, nowS())}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${sessionMaxAgeS}${secure ? '; Secure' : ''}`,
      );
      res
        .writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' })
        .end(
          'Logged in: this browser may now decode payloads in the Temporal Web UI (turn on "Include cross-origin credentials").\n',
        );
      return {};
    }
    if (action !== 'encode' && action !== 'decode')
      throw new HttpError(404, 'not found: POST .../encode or .../decode');

    if (req.method === 'OPTIONS') {
      res
        .writeHead(204, {
          'Access-Control-Allow-Methods': 'POST, OPTIONS',
          'Access-Control-Allow-Headers': 'Content-Type, X-Namespace, Authorization',
          'Access-Control-Max-Age': '600',
        })
        .end();
      return {};
    }
    if (req.method !== 'POST') throw new HttpError(405, 'use POST', { Allow: 'POST, OPTIONS' });
    if (!authorized(req)) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="codec-server"');
      throw new HttpError(
        401,
        'missing or wrong credentials: Authorization: Bearer <CODEC_SERVER_TOKEN>, or log in at /login',
      );
    }
    if (mediaType(req) !== 'application/json') throw new HttpError(415, 'send the payloads as application/json');
    const namespace = typeof req.headers['x-namespace'] === 'string' ? req.headers['x-namespace'] : undefined;
    let body: unknown;
    try {
      body = JSON.parse((await readBody(req, maxBody)).toString('utf8'));
    } catch (error) {
      if (error instanceof HttpError) throw error;
      throw new HttpError(400, 'body is not JSON');
    }
    const raw = (body as { payloads?: unknown } | null)?.payloads;
    if (!Array.isArray(raw)) throw new HttpError(400, 'body must be {"payloads": [...]}');
    const payloads = raw.map(fromJson);
    // The codec names the key a payload asks for when it has no such key: only ever a key id, never caller text.
    payloads.forEach((payload, index) => {
      const id = payload.metadata?.[KEY_ID_METADATA];
      if (action === 'decode' && id && !KEY_ID.test(Buffer.from(id).toString('utf8')))
        throw new HttpError(400, `payloads[${index}].metadata.${KEY_ID_METADATA} is not a key id`);
    });
    let converted: Payload[];
    try {
      converted = action === 'decode' ? await codec.decode(payloads) : await codec.encode(payloads);
    } catch (error) {
      throw new HttpError(400, `cannot ${action}: ${printable(String((error as Error)?.message), MAX_ERROR_CHARS)}`);
    }
    res
      .writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' })
      .end(JSON.stringify({ payloads: converted.map(toJson) }));
    return { namespace, count: payloads.length };
  };

  const server = http.createServer((req, res) => {
    const started = Date.now();
    const path = printable(req.url?.split('?')[0] ?? '', MAX_LOGGED_CHARS);
    handle(req, res).then(
      ({ namespace, count }) => {
        options.log?.(
          `${req.method} ${path} ${res.statusCode}${namespace ? ` ns=${printable(namespace, MAX_LOGGED_CHARS)}` : ''}` +
            `${count !== undefined ? ` payloads=${count}` : ''} ${Date.now() - started}ms`,
        );
      },
      (error: unknown) => {
        const status = error instanceof HttpError ? error.status : 500;
        const message = error instanceof HttpError ? error.message : 'internal error';
        if (!res.headersSent) {
          res.writeHead(status, {
            'Content-Type': 'text/plain; charset=utf-8',
            ...(error instanceof HttpError && error.headers),
          });
        }
        res.end(`${message}\n`);
        options.log?.(`${req.method} ${path} ${status} ${message}`);
        if (!(error instanceof HttpError))
          options.log?.(`codec server error: ${(error as Error)?.stack ?? String(error)}`);
      },
    );
  });
  // CONNECT (a proxy request) has no place here: refused, instead of a dropped connection.
  server.on('connect', (_req, socket) => socket.end('HTTP/1.1 405 Method Not Allowed\r\nConnection: close\r\n\r\n'));
  const host = options.host ?? '127.0.0.1';
  server.listen(options.port ?? 0, host);
  await once(server, 'listening'); // rejects with the server's 'error' (a port in use) instead
  const { port } = server.address() as AddressInfo;
  const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
