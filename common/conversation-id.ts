// What a conversation id may be, written once: the client, the CLI and every other door check ids with this. An id is
// the conversation's Temporal workflow id, so Temporal's own rule bounds it (`limit.maxIDLength`: 1,000 bytes of
// UTF-8), and it must be a name a person can type and read back: no control characters (a NUL cannot even be passed
// on a command line), no line breaks, no lone surrogates (not encodable; a worker or the server refuses them).
import { z } from 'zod';
import { utf8Length } from './utf8-length';

/** Temporal's default limit for workflow ids (the server's `limit.maxIDLength`), in UTF-8 bytes. */
export const MAX_CONVERSATION_ID_BYTES = 1_000;

/** Why a string is not well-formed, printable text, or undefined when it is. Linear; stops at the first problem. */
export function unprintable(text: string): string | undefined {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c <= 0x1f || (c >= 0x7f && c <= 0x9f)) return `a control character (U+${hex(c)}) at position ${i}`;
    if (c === 0x2028 || c === 0x2029) return `a line break (U+${hex(c)}) at position ${i}`;
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
      else return `a lone surrogate (U+${hex(c)}) at position ${i}`;
    } else if (c >= 0xdc00 && c <= 0xdfff) return `a lone surrogate (U+${hex(c)}) at position ${i}`;
  }
  return undefined;
}

/** Whether the text holds no lone surrogate (String.prototype.isWellFormed, which the compile target lacks). */
export function isWellFormed(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return false;
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) return false;
  }
  return true;
}

function hex(code: number): string {
  return code.toString(16).toUpperCase().padStart(4, '0');
}

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
