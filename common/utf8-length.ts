// How many bytes a string takes in UTF-8, which is what Temporal's payload limits count. Pure and workflow-safe
// (no TextEncoder needed): one pass over the UTF-16 code units.

export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4; // a surrogate pair: one code point outside the BMP
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/** The UTF-8 size of a value's JSON, as a payload would carry it. */
export function jsonBytes(value: unknown): number {
  return utf8Length(JSON.stringify(value) ?? '');
}
