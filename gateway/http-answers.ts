// How the gateway answers over HTTP: JSON bodies, the security headers every answer carries, and errors as
// `{ error: { code, message } }` with the status a caller can act on (a ConversationError's code, a Temporal limit as a
// 503 to try again, anything else a 500 logged here and never sent).
import type { ServerResponse } from 'node:http';
import { WorkflowNotFoundError } from '@temporalio/common';
import { ConversationError, type ConversationErrorCode, toConversationError } from '../client/errors';
import { GrpcStatus, grpcStatusOf } from '../client/grpc-status';

/** The longest error message sent: a message that quotes the caller (a zod issue naming an unknown key) is cut. */
const MAX_ERROR_MESSAGE_CHARS = 300;

/** On every answer: no sniffing, no referrer, no framing (X-Frame-Options for browsers without frame-ancestors). */
export const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  // JSON, event streams and errors: nothing in them may load or run anything.
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
} as const;

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

/** With a 503: when to try again, in seconds (a long poll frees its slot within 20 s; most limits clear sooner). */
export const RETRY_SOON = { 'retry-after': '5' };

/** An error with the HTTP status and code the caller gets. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** What another principal gets for a conversation: what anyone gets for one that does not exist. */
export function notFound(id: string): unknown {
  return toConversationError(new WorkflowNotFoundError('not found', id, undefined), id);
}

export function noSuchPath(): HttpError {
  return new HttpError(404, 'not_found', 'No such path.');
}

export function allow(method: string, methods: string[]): void {
  if (!methods.includes(method)) {
    throw new HttpError(405, 'method_not_allowed', `Use ${methods.join(' or ')} here.`, { allow: methods.join(', ') });
  }
}

export function describeError(err: unknown): {
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

export function sendError(res: ServerResponse, err: unknown): void {
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

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}
