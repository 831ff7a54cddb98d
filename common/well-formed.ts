// Text from a caller or the model that goes into a message the worker sends (a failure, a detail, a correction):
// lone surrogates replaced by U+FFFD, since Temporal encodes messages as UTF-8 and cannot encode a lone surrogate,
// and the length bounded.

/** `text` with lone surrogates replaced (String.prototype.toWellFormed: Node ≥ 20). */
export function wellFormed(text: string): string {
  return (text as string & { toWellFormed(): string }).toWellFormed();
}

/** At most `max` characters (an ellipsis marks the cut), well-formed. */
export function boundedText(text: string, max: number): string {
  return wellFormed(text.length > max ? `${text.slice(0, max - 1)}…` : text);
}
