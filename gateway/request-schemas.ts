// What the gateway accepts, one zod schema per body and path parameter. Conversation options are checked again by
// the client with the conversations' own schema (common/options.ts); here only their outer shape.
import { z } from 'zod';
import { approvalDecisionSchema, userMessageSchema } from '../common/workflow-messages';

/** Ids as the client makes them (`conversation-<uuid>`) or as callers choose them: no slashes, no spaces. */
export const conversationIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/, 'a conversation id is 1-200 letters, digits, ".", "_", ":" or "-"');

const optionsSchema = z.record(z.string(), z.unknown(), { error: 'options must be an object' });

export const startBodySchema = z.strictObject({
  id: conversationIdSchema.optional(),
  options: optionsSchema.optional(),
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
