// The codec server: the Temporal Web UI and CLI send it encrypted payloads and get them back readable (and the other
// way round), so neither the Temporal server nor the UI ever holds a key. The protocol (temporalio/samples-go
// codec-server/protocol.md, and the Web UI's data-encoder service):
//
//   POST <anything>/decode and POST <anything>/encode      only the last path segment counts
//     Content-Type: application/json, X-Namespace: <namespace>
//     body {"payloads": [{"metadata": {"encoding": "<base64>"}, "data": "<base64>"}]}   (proto3 JSON: bytes are base64)
//   200 with the same shape; 400 for bad JSON or a payload that cannot be decoded.
//
// Access: every /encode and /decode needs `Authorization: Bearer <token>` (the CLI: `--codec-auth "Bearer <token>"`)
// or the session cookie that `POST /login` sets. The Web UI cannot send a static header: it sends the Authorization
// header only with "Pass the user access token" (the user's OIDC token, to an https endpoint), and cookies with
// "Include cross-origin credentials" (TEMPORAL_CODEC_INCLUDE_CREDENTIALS=true) — that is what /login is for, the
// "own login page and session cookies" Temporal's docs recommend. The session cookie is an HMAC of the token, so it
// holds for every replica and ends when the token changes.
//
// CORS: only the configured Web UI origins get CORS headers (with credentials allowed); a request from any other
// Origin is refused with 403, preflight included. Preflight (OPTIONS) needs no credentials, as browsers send none.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Payload, PayloadCodec } from '@temporalio/common';

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
}

export interface CodecServer {
  /** `http://host:port` — the endpoint for the Web UI / CLI (they append /decode and /encode). */
  url: string;
  port: number;
  close(): Promise<void>;
}

export const SESSION_COOKIE = 'codec_session';
const SESSION_MAX_AGE_S = 12 * 60 * 60;

interface JsonPayload {
  metadata?: Record<string, string> | null;
  data?: string | null;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function fromJson(value: unknown, index: number): Payload {
  if (typeof value !== 'object' || value === null) throw new HttpError(400, `payloads[${index}] is not an object`);
  const { metadata, data } = value as JsonPayload;
  if (metadata != null && typeof metadata !== 'object')
    throw new HttpError(400, `payloads[${index}].metadata is not an object`);
  if (data != null && typeof data !== 'string')
    throw new HttpError(400, `payloads[${index}].data is not a base64 string`);
  const entries = Object.entries(metadata ?? {}).map(([key, encoded]): [string, Uint8Array] => {
    if (typeof encoded !== 'string')
      throw new HttpError(400, `payloads[${index}].metadata.${key} is not a base64 string`);
    return [key, Buffer.from(encoded, 'base64')];
  });
  return { metadata: Object.fromEntries(entries), data: Buffer.from(data ?? '', 'base64') };
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

function sessionValue(token: string): string {
  return createHmac('sha256', token).update('codec-server-session-v1').digest('base64url');
}

function cookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return undefined;
}

async function readBody(req: http.IncomingMessage, max: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > max) throw new HttpError(413, `request body over ${max} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > max) throw new HttpError(413, `request body over ${max} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
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
  const session = sessionValue(token);

  const authorized = (req: http.IncomingMessage): boolean => {
    const header = req.headers.authorization;
    if (header?.startsWith('Bearer ') && sameSecret(header.slice('Bearer '.length).trim(), token)) return true;
    const sent = cookie(req.headers.cookie, SESSION_COOKIE);
    return sent !== undefined && sameSecret(sent, session);
  };

  const handle = async (
    req: http.IncomingMessage,
    res: http.ServerResponse,
  ): Promise<{ namespace?: string; count?: number }> => {
    const url = new URL(req.url ?? '/', 'http://codec.invalid');
    const action = url.pathname.replace(/\/+$/, '').split('/').pop() ?? '';
    const origin = req.headers.origin;
    if (origin !== undefined) {
      if (!allowed.has(origin)) throw new HttpError(403, `origin ${origin} is not allowed (CODEC_SERVER_CORS_ORIGINS)`);
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Allow-Credentials', 'true');
    }
    res.setHeader('Vary', 'Origin');

    if (url.pathname === '/health') {
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok\n');
      return {};
    }
    if (url.pathname === '/login' || url.pathname === '/login/') {
      if (req.method === 'GET') {
        res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' }).end(LOGIN_PAGE);
        return {};
      }
      if (req.method !== 'POST') throw new HttpError(405, 'use GET or POST');
      const form = new URLSearchParams((await readBody(req, 64 * 1024)).toString('utf8'));
      if (!sameSecret(form.get('token') ?? '', token)) throw new HttpError(401, 'wrong token');
      const secure = req.headers['x-forwarded-proto'] === 'https' || (req.socket as { encrypted?: boolean }).encrypted;
      res.setHeader(
        'Set-Cookie',
        `${SESSION_COOKIE}=${session}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${SESSION_MAX_AGE_S}${secure ? '; Secure' : ''}`,
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
    if (req.method !== 'POST') throw new HttpError(405, 'use POST');
    if (!authorized(req)) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="codec-server"');
      throw new HttpError(
        401,
        'missing or wrong credentials: Authorization: Bearer <CODEC_SERVER_TOKEN>, or log in at /login',
      );
    }
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
    let converted: Payload[];
    try {
      converted = action === 'decode' ? await codec.decode(payloads) : await codec.encode(payloads);
    } catch (error) {
      throw new HttpError(400, `cannot ${action}: ${(error as Error).message}`);
    }
    res
      .writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' })
      .end(JSON.stringify({ payloads: converted.map(toJson) }));
    return { namespace, count: payloads.length };
  };

  const server = http.createServer((req, res) => {
    const started = Date.now();
    handle(req, res).then(
      ({ namespace, count }) => {
        options.log?.(
          `${req.method} ${req.url?.split('?')[0]} ${res.statusCode}${namespace ? ` ns=${namespace}` : ''}` +
            `${count !== undefined ? ` payloads=${count}` : ''} ${Date.now() - started}ms`,
        );
      },
      (error: unknown) => {
        const status = error instanceof HttpError ? error.status : 500;
        const message = error instanceof HttpError ? error.message : 'internal error';
        if (!res.headersSent) res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end(`${message}\n`);
        options.log?.(`${req.method} ${req.url?.split('?')[0]} ${status} ${message}`);
        if (!(error instanceof HttpError))
          options.log?.(`codec server error: ${(error as Error)?.stack ?? String(error)}`);
      },
    );
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
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
