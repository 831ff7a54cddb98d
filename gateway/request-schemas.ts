// What the gateway accepts, one zod schema per body and path parameter. Conversation options are checked again by
// the client with the conversations' own schema (common/options.ts); here only their outer shape.
import { z } from 'zod';
import { FINAL_STATUSES, OPEN_STATUSES } from '../common/conversation-types';
import { approvalDecisionSchema, userMessageSchema } from '../common/workflow-messages';
import { forkAtSchema } from '../common/fork';
import { prioritySchema } from '../common/fairness';
import { principalSchema } from './gateway-config';

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
  /** This message's turn's priority, 1 (first) to 5 (last) (docs/fairness.md). */
  priority: prioritySchema.optional(),
});

export const approvalBodySchema = approvalDecisionSchema;

/**
 * POST /api/conversations/:id/fork (docs/fork.md): where to fork, the options that change (checked again by the
 * client), the fork's first message and id. The fork's owner is the caller, whatever the body says.
 */
export const forkBodySchema = z.strictObject({
  at: forkAtSchema,
  options: optionsSchema.optional(),
  message: userMessageSchema.optional(),
  id: conversationIdSchema.optional(),
  /** The fork's priority (its tenant is the caller's, as its owner). */
  priority: prioritySchema.optional(),
});

/** `?from=N` and `Last-Event-ID: N` (the last offset the reader has: it resumes after it). */
export const offsetSchema = z.coerce.number({ error: 'must be a number' }).int().min(0).max(Number.MAX_SAFE_INTEGER);

/** `?agents=`: which of its sub-agents' events an event stream carries too (EventsOptions.agents). */
export const agentsModeSchema = z.enum(['steps', 'all', 'none'], { error: 'agents must be steps, all or none' });

/** The most conversations one list answers with. */
const MAX_LIST_LIMIT = 100;

/**
 * GET /api/conversations' query. Each value goes into a visibility query only through the client's quoting
 * (client/conversation-client.ts list); an owner is a principal's name besides, and a model printable and short.
 */
export const listQuerySchema = z.strictObject({
  limit: z.coerce
    .number({ error: 'limit must be a number' })
    .int('limit must be a whole number')
    .min(1, 'limit must be at least 1')
    .max(MAX_LIST_LIMIT, `limit must be at most ${MAX_LIST_LIMIT}`)
    .default(50),
  status: z.enum([...OPEN_STATUSES, ...FINAL_STATUSES], { error: 'status must be a conversation status' }).optional(),
  model: z
    .string()
    .min(1, 'model must not be empty')
    .max(256, { error: 'model must be at most 256 characters', abort: true })
    .regex(/^[\x20-\x7e]+$/, 'model must be printable ASCII')
    .optional(),
  /** Admins only: this principal's conversations. */
  owner: principalSchema.optional(),
  /** Admins only: every conversation, whoever started it (and those without an owner). */
  all: z.enum(['1', 'true'], { error: 'all must be 1 or true' }).optional(),
});
