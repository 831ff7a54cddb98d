// Checks on text from outside (a caller, a model, an API's error): is it printable, is it well-formed UTF-16 (a lone
// surrogate cannot be encoded as UTF-8: the worker or the server refuses it), and a well-formed, bounded copy to show
// in a message. Pure and linear; workflow-safe.

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

/** The text cut to `max` characters and made well-formed (a lone surrogate becomes U+FFFD): safe to put in a message. */
export function shownText(text: string, max: number): string {
  const cut = text.length > max ? `${text.slice(0, max - 1)}…` : text;
  let out = '';
  let from = 0;
  for (let i = 0; i < cut.length; i++) {
    const c = cut.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = cut.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
    } else if (!(c >= 0xdc00 && c <= 0xdfff)) continue;
    out += `${cut.slice(from, i)}\ufffd`;
    from = i + 1;
  }
  return out + cut.slice(from);
}
