// An HTTP gateway for callers without a Temporal client (other languages, browsers): JSON endpoints over the client
// API and a server-sent-events endpoint over each conversation's event log. It keeps no conversation state: every
// answer comes from Temporal, and an SSE client that reconnects (to this process or a restarted one) resumes with
// `Last-Event-ID` from the offset it had. Bearer-token auth on /api; bodies are size-limited JSON checked with zod.
//
//   GET  /                                     the chat page (gateway/public/)
//   GET  /healthz                              200 when up
//   GET  /api/config                           { namespace, temporalUiUrl, principal, admin }
//   GET  /api/conversations?status=&model=&limit=&owner=&all=1
//                                              { conversations: [...] }: the caller's own, newest first (admins:
//                                              `all=1` every one, `owner=` someone's)
//   POST /api/conversations                    { id?, options?, message? } → 201 { id, turn?, offset? }
//   GET  /api/conversations/:id                the state
//   GET  /api/conversations/:id/transcript     the messages
//   POST /api/conversations/:id/messages       { text, start? } → 202 { turn, offset }
//   POST /api/conversations/:id/approvals      { callId, argumentsDigest, approve, reason? } → 204
//   POST /api/conversations/:id/end            → 202
//   GET  /api/conversations/:id/events?from=N  text/event-stream: `id: <cursor>`, `event: <type>`,
//                                              `data: { offset, live?, seen?, event }` (streaming/client/stream-cursor.ts)
//
// Input from anyone who can connect: a bad path, id, method, token, content type or body is a 4xx whose message quotes
// at most a little of what was sent (never a 500, never a stack in the log). Every answer carries security headers (a
// Content-Security-Policy that lets the chat page load only its own script, style and API, and no framing). Open event
// streams are capped per token and per conversation (429 with Retry-After), and a reader that falls too far behind is
// ended instead of buffered without bound: it resumes with Last-Event-ID like after any drop.
//
// Owners: each token is a principal's (gateway/gateway-config.ts). A conversation the gateway starts records its
// principal in the ConversationOwner search attribute (set with the start, never written again). Every
// /api/conversations/:id route looks the owner up (DescribeWorkflowExecution, remembered a little while per id) and
// answers another principal exactly as it answers for a conversation that does not exist (404 not_found); an admin
// sees every conversation, those without an owner (started by the CLI or the client directly) included. Ids are one
// space shared by everyone: a start with an id someone has used is 409 already_started, the same answer whoever has it,
// saying nothing of its owner or content.
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import type { z } from 'zod';
import { WorkflowNotFoundError } from '@temporalio/common';
import { ConversationError, type ConversationErrorCode, toConversationError } from '../client/errors';
import type { ConversationClient, StartOptions } from '../client/conversation-client';
import { describeIssues } from '../common/options';
import { ConversationOwner } from '../common/search-attributes';
import type { StreamItem } from '../streaming/stream-events';
import { parseCursor, type StreamCursor } from '../streaming/client/stream-cursor';
import { GrpcStatus, grpcStatusOf } from '../client/grpc-status';
import { EventFeeds } from './event-feeds';
import { DEFAULT_PRINCIPAL, type GatewayToken } from './gateway-config';
import {
  approvalBodySchema,
  conversationIdSchema,
  listQuerySchema,
  messageBodySchema,
  offsetSchema,
  startBodySchema,
} from './request-schemas';

export interface GatewayOptions {
  conversations: ConversationClient;
  /** One token: principal "default", an admin (what GATEWAY_TOKEN gives). */
  token?: string;
  /** Tokens and whose they are (GATEWAY_TOKENS); with `token`, both are taken. At least one in all. */
  tokens?: readonly GatewayToken[];
  host?: string;
  port?: number;
  maxBodyBytes?: number;
  /** Event streams open at once per token (default 16) and per conversation (default 8); over either: 429. */
  maxStreamsPerToken?: number;
  maxStreamsPerConversation?: number;
  /**
   * Bytes an event stream may have waiting for a reader that does not keep up (default 1 MiB); past it the stream is
   * ended and the reader resumes with Last-Event-ID.
   */
  maxStreamBufferBytes?: number;
  namespace: string;
  temporalUiUrl?: string;
}

export interface Gateway {
  url: string;
  close(): Promise<void>;
}

/**
 * The gateway as a request handler, for a service's own HTTP server (node:http, or a framework's middleware):
 * `handle(req, res)` answers every request; with `next`, one for a path the gateway does not serve (anything but
 * `/`, `/chat.js`, `/chat.css`, `/healthz` and `/api/…`) goes to `next()` instead of a 404. `close()` ends its
 * event streams; the server stays the service's.
 */
export interface GatewayHandler {
  handle(req: IncomingMessage, res: ServerResponse, next?: () => void): void;
  close(): void;
}

const PUBLIC_DIR = path.join(__dirname, 'public');
const STATIC_FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/chat.js': { file: 'chat.js', type: 'text/javascript; charset=utf-8' },
  '/chat.css': { file: 'chat.css', type: 'text/css; charset=utf-8' },
};
/** A comment line this often keeps proxies from closing an idle event stream. */
const KEEP_ALIVE_MS = 15_000;
/** A stream ended for falling behind has this long to flush what it was given before its connection is dropped. */
const STALLED_STREAM_GRACE_MS = 5_000;
/** The longest error message sent: a message that quotes the caller (a zod issue naming an unknown key) is cut. */
const MAX_ERROR_MESSAGE_CHARS = 300;

/** On every answer: no sniffing, no referrer, no framing (X-Frame-Options for browsers without frame-ancestors). */
const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  // JSON, event streams and errors: nothing in them may load or run anything.
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
} as const;
/**
 * The chat page (gateway/public/): its own script (no inline script or style, no eval), its own style sheet, fetch to
 * its own API; no plugins, no framing, no <base>, forms only to itself (chat.js handles them without navigating).
 */
const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const STATUS_OF: Record<ConversationErrorCode, number> = {
  invalid_options: 400,
  invalid_message: 400,
  rejected: 409,
  not_found: 404,
  already_started: 409,
  turn_failed: 409,
  conversation_failed: 409,
  timeout: 504,
  unavailable: 503,
  busy: 503,
  // The namespace is not set up: the service cannot serve conversations, and will not by itself (no Retry-After).
  search_attributes_missing: 503,
};

/**
 * How long a conversation's owner, once looked up, is taken as known. An owner never changes; an id is reused only
 * after its conversation's retention ran out, so this only bounds how stale that can be.
 */
const OWNER_TTL_MS = 30_000;
/** Owners remembered at most; the oldest is forgotten first. */
const MAX_OWNERS_CACHED = 10_000;

/** Who is calling: the token's principal, and the key its event streams are counted under (the token's digest). */
interface Caller {
  principal: string;
  admin: boolean;
  key: string;
}

/** With a 503: when to try again, in seconds (a long poll frees its slot within 20 s; most limits clear sooner). */
const RETRY_SOON = { 'retry-after': '5' };

/** An error with the HTTP status and code the caller gets. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** The gateway on a server of its own, listening on `host:port`. */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const gateway = createGatewayHandler(options);
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => gateway.handle(req, res));
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 0 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    async close() {
      gateway.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

/** Whether the gateway serves `pathname` (a mounted gateway leaves the rest to the service). */
function servesPath(pathname: string): boolean {
  return pathname in STATIC_FILES || pathname === '/healthz' || pathname === '/api' || pathname.startsWith('/api/');
}

export function createGatewayHandler(options: Omit<GatewayOptions, 'host' | 'port'>): GatewayHandler {
  const { conversations } = options;
  const maxBodyBytes = options.maxBodyBytes ?? 1_000_000;
  const grants = [
    ...(options.token !== undefined ? [{ token: options.token, principal: DEFAULT_PRINCIPAL, admin: true }] : []),
    ...(options.tokens ?? []),
  ].map(({ token, principal, admin }) => ({ digest: sha256(token), principal, admin }));
  if (grants.length === 0) throw new Error('startGateway: give `token` or `tokens` (no token, no access)');
  /** Conversation id → its owner (null: none recorded), until `expires`. Only conversations found are kept. */
  const owners = new Map<string, { owner: string | null; expires: number }>();
  const maxStreamsPerToken = options.maxStreamsPerToken ?? 16;
  const maxStreamsPerConversation = options.maxStreamsPerConversation ?? 8;
  const maxStreamBufferBytes = options.maxStreamBufferBytes ?? 1_048_576;
  const feeds = new EventFeeds(conversations.client);
  /** Open event streams per token (by its digest) and per conversation. */
  const streamsByToken = new Map<string, number>();
  const streamsByConversation = new Map<string, number>();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    const url = requestUrl(req);
    const method = req.method ?? 'GET';
    const page = STATIC_FILES[url.pathname];
    if (page) {
      allow(method, ['GET']);
      const body = await readFile(path.join(PUBLIC_DIR, page.file));
      res.writeHead(200, {
        'content-type': page.type,
        'cache-control': 'no-cache',
        'content-security-policy': PAGE_CSP,
      });
      return void res.end(body);
    }
    if (url.pathname === '/healthz') {
      allow(method, ['GET']);
      return sendJson(res, 200, { ok: true });
    }
    if (!url.pathname.startsWith('/api/')) throw noSuchPath();
    const caller = authenticate(req);

    const parts = url.pathname.split('/').slice(2).map(decodePathSegment); // ['conversations', id?, what?]
    if (parts[0] === 'config' && parts.length === 1) {
      allow(method, ['GET']);
      return sendJson(res, 200, {
        namespace: options.namespace,
        temporalUiUrl: options.temporalUiUrl ?? null,
        principal: caller.principal,
        admin: caller.admin,
      });
    }
    if (parts[0] === 'tools' && parts.length === 1) {
      // What a new conversation may use: the chat page's default, as the CLI's (asked of a worker once, then kept).
      allow(method, ['GET']);
      return sendJson(res, 200, { tools: await conversations.tools(), mcpServers: await conversations.mcpServers() });
    }
    if (parts[0] !== 'conversations' || parts.length > 3) throw noSuchPath();
    if (parts.length === 1) {
      allow(method, ['GET', 'POST']);
      if (method === 'GET') return sendJson(res, 200, { conversations: await list(url, caller) });
      const body = await readBody(req, startBodySchema);
      const id = await conversations.startConversation({
        ...(body.options as StartOptions | undefined),
        ...(body.id && { id: body.id }),
        ...(body.message !== undefined && { firstMessage: body.message }),
        // The caller's, whatever the options say.
        owner: caller.principal,
      });
      // A new conversation's log starts at offset 0; its first message is turn 1.
      return sendJson(res, 201, { id, ...(body.message !== undefined && { turn: 1, offset: 0 }) });
    }
    const id = parse(conversationIdSchema, parts[1], 'conversation id');
    if (parts[2] === 'messages') {
      allow(method, ['POST']);
      const body = await readBody(req, messageBodySchema);
      return sendJson(res, 202, await submit(id, body.text, body.start as StartOptions | undefined, caller));
    }
    // The method first (405 says nothing of the conversation), then whose the conversation is.
    switch (parts[2]) {
      case undefined:
        allow(method, ['GET']);
        await authorize(caller, id);
        return sendJson(res, 200, await conversations.getState(id));
      case 'transcript':
        allow(method, ['GET']);
        await authorize(caller, id);
        return sendJson(res, 200, await conversations.getTranscript(id));
      case 'approvals': {
        allow(method, ['POST']);
        await authorize(caller, id);
        await conversations.approveToolCall(id, await readBody(req, approvalBodySchema));
        res.writeHead(204);
        return void res.end();
      }
      case 'end':
        allow(method, ['POST']);
        await authorize(caller, id);
        await conversations.end(id);
        return sendJson(res, 202, { ending: id });
      case 'events':
        allow(method, ['GET']);
        await authorize(caller, id);
        return streamEvents(req, res, id, url, caller.key);
      default:
        throw noSuchPath();
    }
  }

  /**
   * Checks the bearer token; returns whose it is. Every configured token is compared (in constant time, digest with
   * digest), so how long a refusal takes says nothing about which token came close.
   */
  function authenticate(req: IncomingMessage): Caller {
    const header = req.headers.authorization;
    const challenge = { 'www-authenticate': 'Bearer realm="gateway"' };
    if (!header) throw new HttpError(401, 'unauthenticated', 'Send Authorization: Bearer <token>.', challenge);
    const token = /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
    const digest = sha256(token ?? '');
    let match: (typeof grants)[number] | undefined;
    for (const grant of grants) {
      if (timingSafeEqual(digest, grant.digest) && !match) match = grant;
    }
    if (!token || !match) throw new HttpError(401, 'unauthenticated', 'The bearer token is not valid.', challenge);
    return { principal: match.principal, admin: match.admin, key: match.digest.toString('hex') };
  }

  /**
   * The conversation's owner (null: none recorded), or undefined when there is no such conversation. Remembered for
   * OWNER_TTL_MS once found.
   */
  async function ownerOf(id: string): Promise<string | null | undefined> {
    const known = owners.get(id);
    if (known && known.expires > Date.now()) return known.owner;
    let owner: string | null;
    try {
      const description = await conversations.client.workflow.getHandle(id).describe();
      owner = description.typedSearchAttributes.get(ConversationOwner) ?? null;
    } catch (err) {
      const mapped = toConversationError(err, id);
      if (mapped instanceof ConversationError && mapped.code === 'not_found') return undefined;
      throw mapped;
    }
    owners.delete(id);
    if (owners.size >= MAX_OWNERS_CACHED) owners.delete(owners.keys().next().value!);
    owners.set(id, { owner, expires: Date.now() + OWNER_TTL_MS });
    return owner;
  }

  /** The caller may use this conversation: an admin any; a principal its own. Otherwise as if there were none. */
  async function authorize(caller: Caller, id: string): Promise<void> {
    if (caller.admin) return;
    if ((await ownerOf(id)) !== caller.principal) throw notFound(id);
  }

  /**
   * A message; with `start`, the conversation is created if there is none. For a principal (not an admin), a
   * conversation that is not there is started by a start of its own (which fails if the id was taken meanwhile), so
   * that the message never lands in someone else's conversation created a moment before.
   */
  async function submit(id: string, text: string, start: StartOptions | undefined, caller: Caller) {
    const owned = start && { ...start, owner: caller.principal };
    if (caller.admin) return conversations.submitMessage(id, text, { start: owned });
    const owner = await ownerOf(id);
    if (owner === undefined && owned) {
      try {
        await conversations.startConversation({ ...owned, id, firstMessage: text });
        return { turn: 1, offset: 0 };
      } catch (err) {
        if (!(err instanceof ConversationError && err.code === 'already_started')) throw err;
        owners.delete(id);
        if ((await ownerOf(id)) !== caller.principal) throw notFound(id);
        return conversations.submitMessage(id, text, { start: owned });
      }
    }
    if (owner !== caller.principal) throw notFound(id);
    return conversations.submitMessage(id, text, { start: owned });
  }

  /** GET /api/conversations: the caller's own; an admin's `all=1` every one, `owner=` that principal's. */
  async function list(url: URL, caller: Caller) {
    const names = [...url.searchParams.keys()];
    const repeated = names.find((name, i) => names.indexOf(name) !== i);
    if (repeated !== undefined) throw new HttpError(400, 'invalid_request', 'Invalid query: a parameter is repeated.');
    const query = parse(listQuerySchema, Object.fromEntries(url.searchParams), 'query');
    if ((query.all || query.owner !== undefined) && !caller.admin) {
      throw new HttpError(403, 'forbidden', "Only an admin may list other principals' conversations.");
    }
    const owner = query.all ? undefined : (query.owner ?? caller.principal);
    const found = await conversations.list({
      limit: query.limit,
      ...(owner !== undefined && { owner }),
      ...(query.status !== undefined && { status: query.status }),
      ...(query.model !== undefined && { model: query.model }),
    });
    return found;
  }

  /** The body as JSON checked by `schema`; 415, 413 and 400 say what is wrong with it. */
  async function readBody<S extends z.ZodType>(req: IncomingMessage, schema: S): Promise<z.output<S>> {
    const type = req.headers['content-type'] ?? '';
    if (!/^application\/json\s*(;|$)/i.test(type)) {
      throw new HttpError(415, 'unsupported_media_type', 'Send the body as JSON (Content-Type: application/json).');
    }
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > maxBodyBytes) throw tooLarge();
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBodyBytes) throw tooLarge();
      chunks.push(chunk);
    }
    let json: unknown;
    try {
      json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch (err) {
      // V8's message quotes the body; only where it fails is said.
      const at = /at position (\d+)/.exec((err as Error).message)?.[1];
      throw new HttpError(400, 'invalid_json', `The body is not valid JSON${at ? ` (at character ${at})` : ''}.`);
    }
    return parse(schema, json, 'body');
  }

  function tooLarge(): HttpError {
    // The rest of the body is not read: the connection cannot carry another request.
    return new HttpError(413, 'body_too_large', `The body is larger than ${maxBodyBytes} bytes.`, {
      connection: 'close',
    });
  }

  function streamEvents(req: IncomingMessage, res: ServerResponse, id: string, url: URL, who: string): void {
    // Last-Event-ID (a reader reconnecting) is the cursor of the last event it has; `from` the first offset it wants.
    const lastEventId = req.headers['last-event-id'];
    let cursor: StreamCursor;
    if (typeof lastEventId === 'string' && lastEventId.trim() !== '') {
      const parsed = parseCursor(lastEventId);
      if (!parsed)
        throw new HttpError(400, 'invalid_request', 'Invalid Last-Event-ID: not an event id of this stream.');
      cursor = parsed;
    } else {
      const from = url.searchParams.has('from') ? parse(offsetSchema, url.searchParams.get('from'), 'from') : 0;
      cursor = { offset: from - 1 };
    }
    if ((streamsByToken.get(who) ?? 0) >= maxStreamsPerToken) {
      const message = `This token has ${maxStreamsPerToken} event streams open, the most it may; close one first.`;
      throw new HttpError(429, 'too_many_streams', message, RETRY_SOON);
    }
    if ((streamsByConversation.get(id) ?? 0) >= maxStreamsPerConversation) {
      const message = `This conversation has ${maxStreamsPerConversation} event streams open, the most it may; close one first.`;
      throw new HttpError(429, 'too_many_streams', message, RETRY_SOON);
    }
    count(streamsByToken, who, +1);
    count(streamsByConversation, id, +1);

    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    // What the response has not taken yet because the reader is behind: sent on 'drain', in order, up to a cap.
    const waiting: string[] = [];
    let waitingBytes = 0;
    let ended = false;
    const send = (text: string): void => {
      if (ended) return;
      if (waiting.length > 0 || res.writableNeedDrain) {
        waiting.push(text);
        waitingBytes += Buffer.byteLength(text);
        if (waitingBytes > maxStreamBufferBytes) fellBehind();
        return;
      }
      res.write(text);
    };
    const flush = (): void => {
      while (waiting.length > 0 && !ended && !res.writableNeedDrain) {
        const text = waiting.shift()!;
        waitingBytes -= Buffer.byteLength(text);
        res.write(text);
      }
    };
    // The reader falls too far behind: what waits is dropped and the stream ends after what it was given (whole
    // events), so the reader resumes after the last event it got. One that reads nothing at all is cut off.
    const fellBehind = (): void => {
      console.warn(
        `gateway: an event stream fell behind by more than ${maxStreamBufferBytes} bytes; ended (the reader resumes with Last-Event-ID)`,
      );
      finish();
      waiting.length = 0;
      waitingBytes = 0;
      res.end();
      setTimeout(() => res.destroy(), STALLED_STREAM_GRACE_MS).unref();
    };
    let stop = (): void => {};
    const keepAlive = setInterval(() => send(': keep-alive\n\n'), KEEP_ALIVE_MS);
    const finish = (): void => {
      if (ended) return;
      ended = true;
      clearInterval(keepAlive);
      stop();
    };
    res.on('drain', flush);
    res.once('close', () => {
      finish();
      count(streamsByToken, who, -1);
      count(streamsByConversation, id, -1);
    });
    send('retry: 1000\n\n');
    stop = feeds.watch(id, cursor, {
      item: ({ cursor: eventId, ...item }: StreamItem) => {
        send(`id: ${eventId}\nevent: ${item.event.type}\ndata: ${JSON.stringify(item)}\n\n`);
      },
      end: (error) => {
        if (error) {
          const { status, code, message } = describeError(error);
          send(`event: error\ndata: ${JSON.stringify({ status, code, message })}\n\n`);
        }
        if (ended) return;
        // After what still waits for the reader.
        const close = (): void => {
          if (ended) return;
          if (waiting.length > 0) return void res.once('drain', close);
          finish();
          res.end();
        };
        close();
      },
    });
    if (ended) stop();
  }

  return {
    handle(req, res, next) {
      if (next) {
        let pathname: string;
        try {
          pathname = new URL(req.url ?? '/', 'http://gateway').pathname;
        } catch {
          pathname = '';
        }
        if (!servesPath(pathname)) return next();
      }
      handle(req, res).catch((err: unknown) => sendError(res, err));
    },
    close() {
      feeds.close();
    },
  };
}

/** The request's path and query; a request target that is not one (`*`, an unparsable URL) is 400. */
function requestUrl(req: IncomingMessage): URL {
  const target = req.url ?? '/';
  try {
    if (target.startsWith('/')) return new URL(`http://gateway${target}`);
  } catch {
    // below
  }
  throw new HttpError(400, 'invalid_request', 'The request target is not a path.');
}

/** One path segment, percent-decoded; malformed percent-encoding (or encoded bytes that are not UTF-8) is 400. */
function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, 'invalid_request', 'The path is not valid percent-encoded UTF-8.');
  }
}

/** What another principal gets for a conversation: what anyone gets for one that does not exist. */
function notFound(id: string): unknown {
  return toConversationError(new WorkflowNotFoundError('not found', id, undefined), id);
}

function noSuchPath(): HttpError {
  return new HttpError(404, 'not_found', 'No such path.');
}

function count(counts: Map<string, number>, key: string, step: 1 | -1): void {
  const next = (counts.get(key) ?? 0) + step;
  if (next > 0) counts.set(key, next);
  else counts.delete(key);
}

function allow(method: string, methods: string[]): void {
  if (!methods.includes(method)) {
    throw new HttpError(405, 'method_not_allowed', `Use ${methods.join(' or ')} here.`, { allow: methods.join(', ') });
  }
}

function parse<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new HttpError(400, 'invalid_request', `Invalid ${what}: ${describeIssues(parsed.error, what)}`);
  return parsed.data;
}

function describeError(err: unknown): {
  status: number;
  code: string;
  message: string;
  headers: Record<string, string>;
} {
  if (err instanceof HttpError)
    return { status: err.status, code: err.code, message: err.message, headers: err.headers };
  if (err instanceof ConversationError) {
    const status = STATUS_OF[err.code];
    const retrySoon = status === 503 && err.code !== 'search_attributes_missing';
    return { status, code: err.code, message: err.message, headers: retrySoon ? RETRY_SOON : {} };
  }
  // Temporal refused for now (a limit such as the updates a conversation may have in flight), or cannot be reached:
  // the caller may try again, unlike after a 500.
  const grpc = grpcStatusOf(err);
  if (grpc === GrpcStatus.RESOURCE_EXHAUSTED) {
    const message = 'The conversation is too busy to take this now (a Temporal limit); try again shortly.';
    return { status: 503, code: 'busy', message, headers: RETRY_SOON };
  }
  if (grpc === GrpcStatus.UNAVAILABLE) {
    const message = 'Temporal cannot be reached; try again shortly.';
    return { status: 503, code: 'unavailable', message, headers: RETRY_SOON };
  }
  return { status: 500, code: 'internal', message: 'The gateway failed to answer; see its log.', headers: {} };
}

function sendError(res: ServerResponse, err: unknown): void {
  const { status, code, message, headers } = describeError(err);
  if (status === 500) console.error('gateway: internal error', err);
  if (res.headersSent) return void res.destroy();
  sendJson(res, status, { error: { code, message: bounded(message) } }, headers);
}

/** At most MAX_ERROR_MESSAGE_CHARS characters (a message may quote a caller's key or value), not splitting a pair. */
function bounded(message: string): string {
  if (message.length <= MAX_ERROR_MESSAGE_CHARS) return message;
  let end = MAX_ERROR_MESSAGE_CHARS - 1;
  if (/[\ud800-\udbff]/.test(message[end - 1]!)) end -= 1;
  return `${message.slice(0, end)}…`;
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
