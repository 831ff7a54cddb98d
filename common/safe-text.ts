// Strings that leave the workflow in a protobuf `string` field (a failure's message and stack trace) must be
// well-formed Unicode and small: the worker's core decodes them as UTF-8 and, on a lone surrogate, stops taking work
// for every conversation on its task queue; a message of megabytes exceeds gRPC's limit and fails the task for ever.
// Callers' and models' strings are checked with `wellFormedText` where they enter, and anything that quotes them is
// passed through `safeText`. One pass over the UTF-16 code units, no regex: pure and workflow-safe.
import { z } from 'zod';

/** What a text replaced by `safeText` is cut to, unless told otherwise. */
export const SAFE_TEXT_CHARS = 2_000;

const REPLACEMENT = '\ufffd';

/** True when `text` has no lone surrogate (what `String.prototype.isWellFormed` says, on every runtime). */
export function isWellFormed(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0xd800 || unit > 0xdfff) continue;
    if (unit > 0xdbff) return false; // a low surrogate without its high one
    const next = text.charCodeAt(i + 1);
    if (!(next >= 0xdc00 && next <= 0xdfff)) return false;
    i++;
  }
  return true;
}

/**
 * `text` well-formed (each lone surrogate becomes U+FFFD) and at most `maxChars` long, a cut marked as such; a cut
 * never splits a surrogate pair.
 */
export function safeText(text: string, maxChars = SAFE_TEXT_CHARS): string {
  let cut = text.length > maxChars ? maxChars : text.length;
  const beforeCut = text.charCodeAt(cut - 1);
  if (cut < text.length && beforeCut >= 0xd800 && beforeCut <= 0xdbff) cut--;
  let out = '';
  let start = 0;
  for (let i = 0; i < cut; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0xd800 || unit > 0xdfff) continue;
    const next = text.charCodeAt(i + 1);
    if (unit <= 0xdbff && i + 1 < cut && next >= 0xdc00 && next <= 0xdfff) {
      i++;
      continue;
    }
    out += text.slice(start, i) + REPLACEMENT;
    start = i + 1;
  }
  out += text.slice(start, cut);
  return cut < text.length ? `${out}… (${text.length - cut} more characters)` : out;
}

/** `text` with each lone surrogate replaced by U+FFFD (String.prototype.toWellFormed, on every runtime). */
export function wellFormed(text: string): string {
  return safeText(text, Infinity);
}

/** At most `max` characters in all (an ellipsis marks a cut), well-formed: for summaries and lists of problems. */
export function boundedText(text: string, max: number): string {
  return wellFormed(text.length > max ? `${text.slice(0, max - 1)}…` : text);
}

/** A string of at most `maxChars` characters with no lone surrogate; the error says which rule it broke, not the text. */
export function wellFormedText(maxChars: number, what = 'The text') {
  return z.string({ error: `${what} must be a string.` }).superRefine((text, ctx) => {
    if (text.length > maxChars) {
      ctx.addIssue({ code: 'custom', message: `${what} has ${text.length} characters; the limit is ${maxChars}.` });
    } else if (!isWellFormed(text)) {
      ctx.addIssue({ code: 'custom', message: `${what} is not well-formed Unicode (it has a lone surrogate).` });
    }
  });
}
