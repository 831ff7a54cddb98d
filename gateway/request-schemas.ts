// What the gateway accepts, one zod schema per body and path parameter. Conversation options are checked again by
// the client with the conversations' own schema (common/options.ts); here only their outer shape.
import { z } from 'zod';
import { approvalDecisionSchema, userMessageSchema } from '../common/workflow-messages';

const MAX_GATEWAY_ID_CHARS = 200;
const ID_RULE = `a conversation id is 1-${MAX_GATEWAY_ID_CHARS} letters, digits, ".", "_", ":" or "-", starting with a letter or digit`;

/**
 * Ids as the client makes them (`conversation-<uuid>`) or as callers choose them, one segment of a URL path: no
 * slashes, no spaces, nothing that needs percent-encoding. A declared subset of the conversation-id rule every door
 * applies (common/conversation-id.ts: 1-1,000 bytes of printable UTF-8): 1-200 ASCII characters, none of them a control
 * character, so every id the gateway takes the client takes too, and every conversation it starts stays addressable
 * at /api/conversations/:id (one started elsewhere with an id outside the subset is not reachable here). The length
 * is checked first, so that a huge id is refused without a pass over it.
 */
export const conversationIdSchema = z
  .string({ error: 'a conversation id is a string' })
  .max(MAX_GATEWAY_ID_CHARS, { error: ID_RULE, abort: true })
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/, ID_RULE);

const optionsSchema = z.record(z.string(), z.unknown(), { error: 'options must be an object' });

/** A start's options: the same outer shape, with an id (when given) under the same rule as `id`. */
const startOptionsSchema = z.looseObject(
  { id: conversationIdSchema.optional() },
  { error: 'options must be an object' },
);

export const startBodySchema = z.strictObject({
  id: conversationIdSchema.optional(),
  options: startOptionsSchema.optional(),
  /** A first message: the conversation starts working on it at once. */
  message: userMessageSchema.optional(),
});

export const messageBodySchema = z.strictObject({
  text: userMessageSchema,
  /** Create the conversation with these options if it does not exist yet. */
  start: optionsSchema.optional(),
});

export const approvalBodySchema = approvalDecisionSchema;

/** `?from=N` and `Last-Event-ID: N` (the last offset the reader has: it resumes after it). */
export const offsetSchema = z.coerce.number({ error: 'must be a number' }).int().min(0).max(Number.MAX_SAFE_INTEGER);
