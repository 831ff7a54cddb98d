// What a conversation id may be, written once: the client, the CLI and every other door check ids with this. An id is
// the conversation's Temporal workflow id, so Temporal's own rule bounds it (`limit.maxIDLength`: 1,000 bytes of
// UTF-8), and it must be a name a person can type and read back: no control characters (a NUL cannot even be passed
// on a command line), no line breaks, no lone surrogates (not encodable; a worker or the server refuses them).
import { z } from 'zod';
import { unprintable } from './safe-text';
import { utf8Length } from './utf8-length';

/** Temporal's default limit for workflow ids (the server's `limit.maxIDLength`), in UTF-8 bytes. */
export const MAX_CONVERSATION_ID_BYTES = 1_000;

export const conversationIdSchema = z
  .string({ error: 'A conversation id is a string.' })
  .min(1, 'A conversation id is not empty.')
  // Characters first, so that a huge string is refused without a pass over it.
  .max(MAX_CONVERSATION_ID_BYTES, {
    error: `A conversation id has at most ${MAX_CONVERSATION_ID_BYTES} bytes of UTF-8.`,
    abort: true,
  })
  .superRefine((id, ctx) => {
    const bytes = utf8Length(id);
    if (bytes > MAX_CONVERSATION_ID_BYTES) {
      ctx.addIssue({
        code: 'custom',
        message: `A conversation id has at most ${MAX_CONVERSATION_ID_BYTES} bytes of UTF-8; this one has ${bytes}.`,
      });
      return;
    }
    const problem = unprintable(id);
    if (problem)
      ctx.addIssue({ code: 'custom', message: `A conversation id is printable text; this one has ${problem}.` });
  });
