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
// The parts, one file each: routing (api-routes.ts), auth (bearer-tokens.ts), the owner cache
// (conversation-owners.ts), stream counts (open-streams.ts), SSE (event-stream-response.ts), answers and errors
// (http-answers.ts), reading requests (request-reading.ts), the chat page (static-pages.ts).
//
// Owners: each token is a principal's (gateway/gateway-config.ts). A conversation the gateway starts records its
// principal in the ConversationOwner search attribute (set with the start, never written again). Every
// /api/conversations/:id route looks the owner up (DescribeWorkflowExecution, remembered a little while per id) and
// answers another principal exactly as it answers for a conversation that does not exist (404 not_found); an admin
// sees every conversation, those without an owner (started by the CLI or the client directly) included. Ids are one
// space shared by everyone: a start with an id someone has used is 409 already_started, the same answer whoever has it,
// saying nothing of its owner or content.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { ConversationClient } from '../client/conversation-client';
import { route, servesPath } from './api-routes';
import { BearerTokens } from './bearer-tokens';
import { ConversationOwners } from './conversation-owners';
import { EventFeeds } from './event-feeds';
import { DEFAULT_GATEWAY_LIMITS, DEFAULT_PRINCIPAL, type GatewayToken } from './gateway-config';
import { sendError } from './http-answers';
import { OpenStreams } from './open-streams';

export interface GatewayOptions {
  /**
   * The client the gateway answers with: its task queue, tools and data converter are the conversations'.
   * @example await ConversationClient.connect({ address: 'localhost:7233', namespace: 'default', taskQueue: 'claude-conversations' })
   */
  conversations: ConversationClient;
  /**
   * One token: principal "default", an admin (what GATEWAY_TOKEN gives).
   * @default none: `tokens` must give one
   * @example process.env.GATEWAY_TOKEN
   */
  token?: string;
  /**
   * Tokens and whose they are (GATEWAY_TOKENS); with `token`, both are taken. At least one in all.
   * @default none: `token` must be given
   * @example [{ token: process.env.ALICE_TOKEN!, principal: 'alice', admin: false }]
   */
  tokens?: readonly GatewayToken[];
  /**
   * Where startGateway listens (createGatewayHandler has no server of its own).
   * @default '127.0.0.1'
   * @example '0.0.0.0'
   */
  host?: string;
  /**
   * The port startGateway listens on; 0 picks a free one (see `Gateway.url`).
   * @default 0
   * @example 8080
   */
  port?: number;
  /**
   * The largest JSON body taken, in bytes; a larger one is 413.
   * @default 1_000_000
   */
  maxBodyBytes?: number;
  /**
   * Event streams open at once per token; one more is 429 with Retry-After.
   * @default 16
   */
  maxStreamsPerToken?: number;
  /**
   * Event streams open at once per conversation, whoever reads them; one more is 429 with Retry-After.
   * @default 8
   */
  maxStreamsPerConversation?: number;
  /**
   * Bytes an event stream may have waiting for a reader that does not keep up; past it the stream is ended and the
   * reader resumes with Last-Event-ID.
   * @default 1_048_576 (1 MiB)
   */
  maxStreamBufferBytes?: number;
  /**
   * The Temporal namespace, shown by the chat page (GET /api/config).
   * @example 'default'
   */
  namespace: string;
  /**
   * The Temporal Web UI as a browser reaches it: the chat page links each conversation there.
   * @default none: no links
   * @example 'http://localhost:8233'
   */
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

export function createGatewayHandler(options: Omit<GatewayOptions, 'host' | 'port'>): GatewayHandler {
  const { conversations } = options;
  const tokens = new BearerTokens([
    ...(options.token !== undefined ? [{ token: options.token, principal: DEFAULT_PRINCIPAL, admin: true }] : []),
    ...(options.tokens ?? []),
  ]);
  const feeds = new EventFeeds(conversations.client);
  const routes = {
    conversations,
    tokens,
    owners: new ConversationOwners(conversations.client),
    streams: new OpenStreams(
      options.maxStreamsPerToken ?? DEFAULT_GATEWAY_LIMITS.maxStreamsPerToken,
      options.maxStreamsPerConversation ?? DEFAULT_GATEWAY_LIMITS.maxStreamsPerConversation,
    ),
    feeds,
    namespace: options.namespace,
    temporalUiUrl: options.temporalUiUrl,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_GATEWAY_LIMITS.maxBodyBytes,
    maxStreamBufferBytes: options.maxStreamBufferBytes ?? DEFAULT_GATEWAY_LIMITS.maxStreamBufferBytes,
  };
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
      route(routes, req, res).catch((err: unknown) => sendError(res, err));
    },
    close() {
      feeds.close();
    },
  };
}
