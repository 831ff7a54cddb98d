// Strings that leave the workflow in a protobuf `string` field (a failure's message and stack trace) must be
// well-formed Unicode and small: the worker's core decodes them as UTF-8 and, on a lone surrogate, stops taking work
// for every conversation on its task queue; a message of megabytes exceeds gRPC's limit and fails the task for ever.
// Callers' and models' strings are checked with `wellFormedText` where they enter, and anything that quotes them is
// passed through `truncate` (or `wellFormed`). One pass over the UTF-16 code units, no regex: pure and workflow-safe.
import { z } from 'zod';

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
 * At most `max` characters, well-formed. A longer text is cut and ends with
 * `[output truncated: N of M characters omitted]`; the result is exactly `max` characters, marker included.
 */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return wellFormed(text);
  const kept = keptBefore(text.length, max);
  return wellFormed(text.slice(0, kept)) + truncationMarker(text.length, kept);
}

/** `\n[output truncated: N of M characters omitted]` */
export function truncationMarker(total: number, kept: number): string {
  return `\n[output truncated: ${total - kept} of ${total} characters omitted]`;
}

/** How much of a text of `total` characters fits in `max` with the marker (which counts what was left out). */
export function keptBefore(total: number, max: number): number {
  let kept = max;
  for (let i = 0; i < 3; i++) kept = Math.max(0, max - truncationMarker(total, kept).length);
  return kept;
}

/** `text` with each lone surrogate replaced by U+FFFD (String.prototype.toWellFormed, on every runtime). */
export function wellFormed(text: string): string {
  if (isWellFormed(text)) return text;
  let out = '';
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0xd800 || unit > 0xdfff) continue;
    const next = text.charCodeAt(i + 1);
    if (unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      i++;
      continue;
    }
    out += text.slice(start, i) + REPLACEMENT;
    start = i + 1;
  }
  return out + text.slice(start);
}

/** At most `max` characters in all (an ellipsis marks a cut), well-formed: for summaries and lists of problems. */
export function boundedText(text: string, max: number): string {
  return wellFormed(text.length > max ? `${text.slice(0, max - 1)}…` : text);
}

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

function hex(code: number): string {
  return code.toString(16).toUpperCase().padStart(4, '0');
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
