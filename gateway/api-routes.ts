// Routing: which path and method does what, in the order that keeps refusals from saying too much (the method before
// the conversation's owner, the owner before anything about the conversation). Each route reads and checks its input
// (request-reading.ts, request-schemas.ts), asks the client API, and answers JSON or an event stream.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ForkOptions, StartOptions } from '../client/call-options';
import type { ConversationClient } from '../client/conversation-client';
import { ConversationError } from '../client/errors';
import type { BearerTokens, Caller } from './bearer-tokens';
import type { ConversationOwners } from './conversation-owners';
import { callerPlacement } from './principal-tenant';
import type { EventFeeds } from './event-feeds';
import { requestedAgents, requestedCursor, sendEventStream } from './event-stream-response';
import { allow, HttpError, notFound, noSuchPath, SECURITY_HEADERS, sendJson } from './http-answers';
import type { OpenStreams } from './open-streams';
import { decodePathSegment, parse, readBody, requestUrl } from './request-reading';
import {
  approvalBodySchema,
  conversationIdSchema,
  forkBodySchema,
  listQuerySchema,
  messageBodySchema,
  startBodySchema,
} from './request-schemas';
import { sendPage, staticPage } from './static-pages';

/** What the routes use: the client API and the gateway's parts, each with its limits. */
export interface Routes {
  conversations: ConversationClient;
  tokens: BearerTokens;
  owners: ConversationOwners;
  streams: OpenStreams;
  feeds: EventFeeds;
  namespace: string;
  temporalUiUrl: string | undefined;
  maxBodyBytes: number;
  maxStreamBufferBytes: number;
}

/** Whether the gateway serves `pathname` (a mounted gateway leaves the rest to the service). */
export function servesPath(pathname: string): boolean {
  return (
    staticPage(pathname) !== undefined || pathname === '/healthz' || pathname === '/api' || pathname.startsWith('/api/')
  );
}

/** Answers one request; what it throws is the caller's to send (http-answers.ts sendError). */
export async function route(routes: Routes, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { conversations, owners, maxBodyBytes } = routes;
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
  const url = requestUrl(req);
  const method = req.method ?? 'GET';
  const page = staticPage(url.pathname);
  if (page) {
    allow(method, ['GET']);
    return sendPage(res, page);
  }
  if (url.pathname === '/healthz') {
    allow(method, ['GET']);
    return sendJson(res, 200, { ok: true });
  }
  if (!url.pathname.startsWith('/api/')) throw noSuchPath();
  const caller = routes.tokens.authenticate(req);

  const parts = url.pathname.split('/').slice(2).map(decodePathSegment); // ['conversations', id?, what?]
  if (parts[0] === 'config' && parts.length === 1) {
    allow(method, ['GET']);
    return sendJson(res, 200, {
      namespace: routes.namespace,
      temporalUiUrl: routes.temporalUiUrl ?? null,
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
    if (method === 'GET') return sendJson(res, 200, { conversations: await list(routes, url, caller) });
    const body = await readBody(req, startBodySchema, maxBodyBytes);
    const id = await conversations.startConversation({
      ...(body.options as StartOptions | undefined),
      ...(body.id && { id: body.id }),
      ...(body.message !== undefined && { firstMessage: body.message }),
      // The caller's, whatever the options say; so is the tenant (a priority the caller may choose).
      owner: caller.principal,
      ...callerPlacement(caller.principal),
    });
    // A new conversation's log starts at offset 0; its first message is turn 1.
    return sendJson(res, 201, { id, ...(body.message !== undefined && { turn: 1, offset: 0 }) });
  }
  const id = parse(conversationIdSchema, parts[1], 'conversation id');
  if (parts[2] === 'messages') {
    allow(method, ['POST']);
    const body = await readBody(req, messageBodySchema, maxBodyBytes);
    const start = body.start as StartOptions | undefined;
    return sendJson(res, 202, await submit(routes, id, body.text, start, body.priority, caller));
  }
  // The method first (405 says nothing of the conversation), then whose the conversation is.
  switch (parts[2]) {
    case undefined:
      allow(method, ['GET']);
      await owners.authorize(caller, id);
      return sendJson(res, 200, await conversations.getState(id));
    case 'transcript':
      allow(method, ['GET']);
      await owners.authorize(caller, id);
      return sendJson(res, 200, await conversations.getTranscript(id));
    case 'approvals': {
      allow(method, ['POST']);
      await owners.authorize(caller, id);
      await conversations.approveToolCall(id, await readBody(req, approvalBodySchema, maxBodyBytes));
      res.writeHead(204);
      return void res.end();
    }
    case 'fork': {
      // A fork of a conversation the caller may read, owned by the caller (docs/fork.md).
      allow(method, ['POST']);
      await owners.authorize(caller, id);
      const body = await readBody(req, forkBodySchema, maxBodyBytes);
      const fork = await conversations.fork(id, {
        at: body.at,
        ...(body.options && { options: body.options as ForkOptions['options'] }),
        ...(body.message !== undefined && { message: body.message }),
        ...(body.id && { workflowId: body.id }),
        owner: caller.principal,
        ...callerPlacement(caller.principal),
        ...(body.priority !== undefined && { priority: body.priority }),
      });
      // A new conversation's log starts at offset 0; its first message, if any, is turn `fork.turn` (so is the turn a
      // fork at a step goes on with).
      const answering = body.message !== undefined || 'afterStep' in body.at;
      return sendJson(res, 201, { ...fork, ...(answering && { offset: 0 }) });
    }
    case 'end':
      allow(method, ['POST']);
      await owners.authorize(caller, id);
      await conversations.end(id);
      return sendJson(res, 202, { ending: id });
    case 'events': {
      allow(method, ['GET']);
      await owners.authorize(caller, id);
      const cursor = requestedCursor(req, url);
      const agents = requestedAgents(url);
      const closed = routes.streams.open(caller.key, id);
      const { feeds, maxStreamBufferBytes: maxBufferBytes } = routes;
      return sendEventStream(res, { feeds, id, cursor, agents, maxBufferBytes, closed });
    }
    default:
      throw noSuchPath();
  }
}

/**
 * A message; with `start`, the conversation is created if there is none. For a principal (not an admin), a
 * conversation that is not there is started by a start of its own (which fails if the id was taken meanwhile), so
 * that the message never lands in someone else's conversation created a moment before.
 */
async function submit(
  { conversations, owners }: Routes,
  id: string,
  text: string,
  start: StartOptions | undefined,
  priority: number | undefined,
  caller: Caller,
) {
  const owned = start && { ...start, owner: caller.principal, ...callerPlacement(caller.principal) };
  // The message's own priority, for its turn (docs/fairness.md).
  const turn = priority !== undefined ? { priority } : {};
  if (caller.admin) return conversations.submitMessage(id, text, { start: owned, ...turn });
  const owner = await owners.ownerOf(id);
  if (owner === undefined && owned) {
    try {
      // A first message's priority is its conversation's (the start's), unless the start names one.
      await conversations.startConversation({ ...turn, ...owned, id, firstMessage: text });
      return { turn: 1, offset: 0 };
    } catch (err) {
      if (!(err instanceof ConversationError && err.code === 'already_started')) throw err;
      owners.forget(id);
      if ((await owners.ownerOf(id)) !== caller.principal) throw notFound(id);
      return conversations.submitMessage(id, text, { start: owned, ...turn });
    }
  }
  if (owner !== caller.principal) throw notFound(id);
  return conversations.submitMessage(id, text, { start: owned, ...turn });
}

/** GET /api/conversations: the caller's own; an admin's `all=1` every one, `owner=` that principal's. */
async function list({ conversations }: Routes, url: URL, caller: Caller) {
  const names = [...url.searchParams.keys()];
  if (new Set(names).size !== names.length)
    throw new HttpError(400, 'invalid_request', 'Invalid query: a parameter is repeated.');
  const query = parse(listQuerySchema, Object.fromEntries(url.searchParams), 'query');
  if ((query.all || query.owner !== undefined) && !caller.admin) {
    throw new HttpError(403, 'forbidden', "Only an admin may list other principals' conversations.");
  }
  const owner = query.all ? undefined : (query.owner ?? caller.principal);
  return conversations.list({
    limit: query.limit,
    ...(owner !== undefined && { owner }),
    ...(query.status !== undefined && { status: query.status }),
    ...(query.model !== undefined && { model: query.model }),
  });
}
