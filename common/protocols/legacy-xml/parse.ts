// Reading the legacy `<function_calls>` block out of a model reply. Index-based scanning only: no regexes over the
// reply, no recursion, every pass linear in the length of the block, and no input makes it throw.
//
// The grammar the model is asked to follow (`</function_calls>` is the stop sequence, so it is usually absent):
//
//   <function_calls>
//   <invoke>
//   <tool_name>NAME</tool_name>
//   <parameters>
//   <p1>value</p1>
//   <p2>value</p2>
//   </parameters>
//   </invoke>
//   … more <invoke>s …
//   </function_calls>
//
// Values are raw text: they may contain `<`, `&`, markup, even tags that look like the format's own. The rules that
// decide where things end (documented here):
//
// 1. The block is the first `<function_calls>` followed (after whitespace) by `<invoke>`; failing that, the last
//    `<function_calls>` in the text. It ends at the first `</function_calls>` after it, or at the end of the text. The
//    API stops generating at `</function_calls>`, so the model can never put that string inside a value.
// 2. An invoke ends at the first `</invoke>` or `</parameters>` that is followed
//      - after whitespace only, by another `<invoke>` or by the end of the block, or
//      - after any text, by an `<invoke>` that is itself followed (whitespace aside) by `<tool_name>`, or
//      - by no tag at all until the end of the block.
//    Its parameter section ends at that `</parameters>` (or at the `</parameters>` that is the tag right before that
//    `</invoke>`), or at the `</invoke>` itself when `</parameters>` is missing. Text between that end and the next
//    `<invoke>` is reported but does not spoil the invoke. With no such marker (output cut short) the invoke runs to
//    the end of the block. So a value may mention `</invoke>` and `<invoke>`, but not `</invoke>`, then `<invoke>`
//    right before `<tool_name>`: that reads as the start of the next call.
// 3. Inside the section, a parameter `<p>` ends at the first `</p>` that
//      (a) does not close a `<p>` opened inside the value (nesting of the same name is counted), and
//      (b) is followed, after whitespace only, by the end of the section or by the opening tag of another parameter
//          that can itself be closed by this rule.
//    Every `</p>` that fails (b) — followed by prose, by other markup, by a closing tag — is part of the value. Put
//    differently: the value runs to the LAST `</p>` before the next sibling parameter (or the end of the section),
//    and a sibling only counts as one if the rest of the section still reads as parameters. If no `</p>` meets (a)
//    and (b), the last `</p>` meeting (b) is used; if none meets (b), the first `</p>` is used and whatever follows it
//    is reported as unexpected text.
// 4. Tags are `<name>` / `</name>` exactly (no attributes, no spaces). `<![CDATA[…]]>` hides its content from the scan
//    and is unwrapped in values. There is no entity decoding: `&lt;` stays `&lt;`, the model writes values raw.
// 5. A value loses one leading and one trailing newline (`\n` or `\r\n`), nothing else; a tool name is trimmed.

export const FUNCTION_CALLS_OPEN = '<function_calls>';
export const FUNCTION_CALLS_CLOSE = '</function_calls>';

/** One `<invoke>` as written by the model. */
export interface ParsedInvoke {
  /** Position among the block's invokes, from 0. */
  index: number;
  /** The tool name, trimmed; '' when the invoke has none. */
  name: string;
  /** Each parameter's raw text (rule 5), keyed by the parameter's tag name. */
  parameters: Record<string, string>;
  /** Why this invoke cannot be trusted (no tool name, duplicate or unclosed parameter, stray text); absent when clean. */
  error?: string;
}

export interface ParsedFunctionCalls {
  /** The text before `<function_calls>`, untouched. */
  before: string;
  /** The invokes, in the model's order, including the broken ones (they carry `error`). */
  calls: ParsedInvoke[];
  /**
   * The problems found, block-level ones and each invoke's (prefixed `invoke N:`), at most 20 entries plus a count of
   * the rest; empty when all is clean.
   */
  errors: string[];
  /** Where the block ends in `text`: the index of `</function_calls>`, or `text.length` when it was not written. */
  end: number;
}

interface Tag {
  open: boolean;
  name: string;
  start: number;
  end: number;
}

const MAX_NAME = 256;
const CDATA_OPEN = '<![CDATA[';
const CDATA_CLOSE = ']]>';

function isWsCode(c: number): boolean {
  return (
    c === 32 ||
    c === 9 ||
    c === 10 ||
    c === 13 ||
    c === 12 ||
    c === 11 ||
    c === 0xa0 ||
    c === 0xfeff ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0x1680 ||
    c === 0x85
  );
}

/** Whether text[from, to) is whitespace only. Stops at the first other character. */
function isWs(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (!isWsCode(text.charCodeAt(i))) return false;
  return true;
}

function skipWs(text: string, from: number): number {
  let i = from;
  while (i < text.length && isWsCode(text.charCodeAt(i))) i++;
  return i;
}

function isNameCode(c: number, first: boolean): boolean {
  if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 /* _ */ || c === 36 /* $ */ || c === 58 /* : */) {
    return true;
  }
  if (c >= 0x80) return !isWsCode(c);
  return !first && ((c >= 48 && c <= 57) || c === 45 /* - */ || c === 46); /* . */
}

/** Reads `<name>` or `</name>` at `lt` (which holds '<'), within text[.., to). */
function readTag(text: string, lt: number, to: number): Tag | null {
  let j = lt + 1;
  let open = true;
  if (j < to && text.charCodeAt(j) === 47 /* / */) {
    open = false;
    j++;
  }
  const nameStart = j;
  while (j < to && j - nameStart <= MAX_NAME && isNameCode(text.charCodeAt(j), j === nameStart)) j++;
  if (j === nameStart || j - nameStart > MAX_NAME) return null;
  if (j >= to || text.charCodeAt(j) !== 62 /* > */) return null;
  return { open, name: text.slice(nameStart, j), start: lt, end: j + 1 };
}

/** Every tag in text[from, to), in order, skipping CDATA sections (an unterminated one hides the rest). */
function tokenize(text: string, from: number, to: number): Tag[] {
  const tags: Tag[] = [];
  let i = from;
  while (i < to) {
    const lt = text.indexOf('<', i);
    if (lt < 0 || lt >= to) break;
    const c = text.charCodeAt(lt + 1);
    if (c === 33 /* ! */ && text.startsWith(CDATA_OPEN, lt)) {
      const close = text.indexOf(CDATA_CLOSE, lt + CDATA_OPEN.length);
      if (close < 0 || close + CDATA_CLOSE.length > to) break;
      i = close + CDATA_CLOSE.length;
      continue;
    }
    const tag = c === 47 /* / */ || isNameCode(c, true) ? readTag(text, lt, to) : null;
    if (tag) {
      tags.push(tag);
      i = tag.end;
    } else {
      i = lt + 1;
    }
  }
  return tags;
}

/** Rule 5, plus CDATA unwrapping. */
export function cleanValue(raw: string): string {
  let from = 0;
  let to = raw.length;
  if (raw.startsWith('\r\n')) from = 2;
  else if (raw.startsWith('\n')) from = 1;
  if (to - from >= 2 && raw.endsWith('\r\n')) to -= 2;
  else if (to - from >= 1 && raw.endsWith('\n')) to -= 1;
  const value = raw.slice(from, to);
  if (!value.includes(CDATA_OPEN)) return value;
  let out = '';
  let i = 0;
  for (;;) {
    const open = value.indexOf(CDATA_OPEN, i);
    if (open < 0) return out + value.slice(i);
    const close = value.indexOf(CDATA_CLOSE, open + CDATA_OPEN.length);
    if (close < 0) return out + value.slice(i, open) + value.slice(open + CDATA_OPEN.length);
    out += value.slice(i, open) + value.slice(open + CDATA_OPEN.length, close);
    i = close + CDATA_CLOSE.length;
  }
}

/** A short, quoted excerpt for error messages. */
export function excerpt(s: string, max = 60): string {
  const t = s.trim();
  return JSON.stringify(t.length > max ? `${t.slice(0, max)}…` : t);
}

function isTag(t: Tag | undefined, open: boolean, name: string): boolean {
  return t !== undefined && t.open === open && t.name === name;
}

/** Finds the block (rule 1). Returns the index of `<function_calls>`, or -1. */
function findBlock(text: string): number {
  let last = -1;
  for (let i = text.indexOf(FUNCTION_CALLS_OPEN); i >= 0; i = text.indexOf(FUNCTION_CALLS_OPEN, i + 1)) {
    last = i;
    if (text.startsWith('<invoke>', skipWs(text, i + FUNCTION_CALLS_OPEN.length))) return i;
  }
  return last;
}

/**
 * Finds the `<function_calls>` block in a reply and reads its invokes. Null when there is no block. Never throws;
 * problems are reported in `errors` and on the invokes they concern.
 */
export function parseFunctionCalls(text: string): ParsedFunctionCalls | null {
  try {
    return parseBlock(text);
  } catch (e) {
    // Defensive only: the scanner has no known failure mode. A reply we cannot read must not fail the workflow.
    const t = typeof text === 'string' ? text : '';
    return {
      before: t,
      calls: [],
      errors: [`could not read the <function_calls> block (${String(e)})`],
      end: t.length,
    };
  }
}

function parseBlock(text: string): ParsedFunctionCalls | null {
  if (typeof text !== 'string') return null;
  const blockStart = findBlock(text);
  if (blockStart < 0) return null;
  const from = blockStart + FUNCTION_CALLS_OPEN.length;
  const closeAt = text.indexOf(FUNCTION_CALLS_CLOSE, from);
  const end = closeAt < 0 ? text.length : closeAt;
  const T = tokenize(text, from, end);
  const n = T.length;
  const errors = new Problems(MAX_BLOCK_ERRORS);
  const calls: ParsedInvoke[] = [];

  // nextAdj[k]: the next tag when only whitespace separates them; n when only whitespace is left before `end`; -1.
  const nextAdj = new Int32Array(n);
  for (let k = 0; k < n; k++) {
    const t = T[k]!;
    const next = T[k + 1];
    if (next) nextAdj[k] = isWs(text, t.end, next.start) ? k + 1 : -1;
    else nextAdj[k] = isWs(text, t.end, end) ? n : -1;
  }
  // nextMarker[k]: the first invoke-end marker (rule 2) at or after k; nextOpenInvoke[k]: the first `<invoke>`.
  const nextMarker = new Int32Array(n + 1);
  const nextOpenInvoke = new Int32Array(n + 1);
  nextMarker[n] = n;
  nextOpenInvoke[n] = n;
  for (let k = n - 1; k >= 0; k--) {
    const t = T[k]!;
    const isMarker =
      !t.open &&
      (t.name === 'invoke' || t.name === 'parameters') &&
      (k + 1 === n ||
        (isTag(T[k + 1], true, 'invoke') &&
          (nextAdj[k] === k + 1 || (nextAdj[k + 1] === k + 2 && isTag(T[k + 2], true, 'tool_name')))));
    nextMarker[k] = isMarker ? k : nextMarker[k + 1]!;
    nextOpenInvoke[k] = isTag(t, true, 'invoke') ? k : nextOpenInvoke[k + 1]!;
  }

  let k = nextOpenInvoke[0]!;
  if (k === n) {
    errors.add(
      () =>
        'the <function_calls> block contains no <invoke>; write <invoke><tool_name>NAME</tool_name>' +
        '<parameters><PARAM>value</PARAM></parameters></invoke>',
    );
  } else if (!isWs(text, from, T[k]!.start)) {
    errors.add(() => `unexpected text before the first <invoke>: ${excerpt(text.slice(from, T[k]!.start))}`);
  }
  while (k < n) {
    const invokeOpen = T[k]!;
    const marker = nextMarker[k + 1]!;
    // Token range (k, hi) and text range [invokeOpen.end, contentEnd) of the invoke's content.
    let hi = marker;
    let contentEnd = marker < n ? T[marker]!.start : end;
    const afterInvoke = marker < n ? T[marker]!.end : end;
    const index = calls.length;
    // A marker `</invoke>` whose previous tag is `</parameters>`: the section stops before `</parameters>`.
    if (marker < n && T[marker]!.name === 'invoke' && marker - 1 > k && isTag(T[marker - 1], false, 'parameters')) {
      hi = marker - 1;
      contentEnd = T[hi]!.start;
      const gap = text.slice(T[hi]!.end, T[marker]!.start);
      if (!isWs(gap, 0, gap.length))
        errors.add(() => `unexpected text after </parameters> in invoke ${index + 1}: ${excerpt(gap)}`);
    }
    const invoke = readInvoke(text, T, nextAdj, k + 1, hi, invokeOpen.end, contentEnd, index);
    calls.push(invoke);
    if (invoke.error !== undefined) errors.add(() => `invoke ${index + 1}: ${invoke.error}`);
    if (marker >= n) break;
    const next = nextOpenInvoke[marker + 1]!;
    const nextStart = next < n ? T[next]!.start : end;
    if (!isWs(text, afterInvoke, nextStart)) {
      errors.add(() => `unexpected text after invoke ${index + 1}: ${excerpt(text.slice(afterInvoke, nextStart))}`);
    }
    k = next;
  }
  const list = errors.more > 0 ? [...errors.list, `and ${errors.more} more problems`] : errors.list;
  return { before: text.slice(0, blockStart), calls, errors: list, end };
}

/** Reads one invoke whose content is tags (lo, hi) — lo inclusive — and text [from, to). */
function readInvoke(
  text: string,
  T: Tag[],
  nextAdj: Int32Array,
  lo: number,
  hi: number,
  from: number,
  to: number,
  index: number,
): ParsedInvoke {
  const problems = new Problems(MAX_PROBLEMS);
  let name = '';
  // The tool name: the first <tool_name> before any <parameters>.
  let t = lo;
  while (t < hi && !isTag(T[t], true, 'tool_name') && !isTag(T[t], true, 'parameters')) t++;
  let sectionLo: number;
  let sectionFrom: number;
  if (t < hi && T[t]!.name === 'tool_name') {
    let u = t + 1;
    while (u < hi && !isTag(T[u], false, 'tool_name')) u++;
    if (u >= hi) {
      problems.add(() => '<tool_name> is not closed');
      return finish(index, '', new Map(), problems);
    }
    name = text.slice(T[t]!.end, T[u]!.start).trim();
    if (name === '') problems.add(() => '<tool_name> is empty');
    sectionLo = u + 1;
    sectionFrom = T[u]!.end;
  } else {
    problems.add(() => 'it has no <tool_name>');
    sectionLo = t;
    sectionFrom = t < hi ? T[t]!.start : to;
  }
  if (sectionLo < hi && isTag(T[sectionLo], true, 'parameters')) {
    sectionFrom = T[sectionLo]!.end;
    sectionLo++;
  } else if (sectionLo < hi && !isWs(text, sectionFrom, T[sectionLo]!.start)) {
    // Text between </tool_name> and the first parameter, without a <parameters> wrapper.
    problems.add(() => `unexpected text after </tool_name>: ${excerpt(text.slice(sectionFrom, T[sectionLo]!.start))}`);
    sectionFrom = T[sectionLo]!.start;
  }
  const params = readParameters(text, T, nextAdj, sectionLo, hi, sectionFrom, to, problems);
  return finish(index, name, params, problems);
}

/** At most this many problems are spelled out per invoke, and this many entries in `errors`; the rest are counted. */
const MAX_PROBLEMS = 5;
const MAX_BLOCK_ERRORS = 20;

/** A list that keeps the first `max` messages and counts the rest (so garbage input does not allocate per problem). */
class Problems {
  readonly list: string[] = [];
  more = 0;
  constructor(private readonly max: number) {}
  get size(): number {
    return this.list.length + this.more;
  }
  add(message: () => string): void {
    if (this.list.length < this.max) this.list.push(message());
    else this.more++;
  }
  summary(): string {
    const shown = this.list.join('; ');
    return this.more > 0 ? `${shown}; and ${this.more} more problem${this.more === 1 ? '' : 's'}` : shown;
  }
}

function finish(index: number, name: string, params: Map<string, string>, problems: Problems): ParsedInvoke {
  // Object.fromEntries defines own properties, so a parameter called `__proto__` stays a parameter.
  const invoke: ParsedInvoke = { index, name, parameters: Object.fromEntries(params) };
  if (problems.size > 0) invoke.error = problems.summary();
  return invoke;
}

/** Rule 3 over the section whose tags are [lo, hi) and whose text is [from, to). */
function readParameters(
  text: string,
  T: Tag[],
  nextAdj: Int32Array,
  lo: number,
  hi: number,
  from: number,
  to: number,
  problems: Problems,
): Map<string, string> {
  const params = new Map<string, string>();
  // ok[k]: the closing tag k is followed by the end of the section or by a parameter that can be closed (rule 3b).
  // maxOk: per name, the last such closing tag. Right to left, so "can be closed" is already known when asked.
  const ok = new Uint8Array(Math.max(0, hi - lo));
  const maxOk = new Map<string, number>();
  for (let k = hi - 1; k >= lo; k--) {
    const t = T[k]!;
    if (t.open) continue;
    let isOk: boolean;
    if (k + 1 >= hi) {
      isOk = isWs(text, t.end, to);
    } else {
      const next = T[k + 1]!;
      isOk = next.open && nextAdj[k] === k + 1 && maxOk.has(next.name);
    }
    if (isOk) {
      ok[k - lo] = 1;
      if (!maxOk.has(t.name)) maxOk.set(t.name, k);
    }
  }

  let pos = from;
  let k = lo;
  for (;;) {
    const t = T[k];
    const nextStart = k < hi && t ? t.start : to;
    if (!isWs(text, pos, nextStart))
      problems.add(() => `unexpected text between parameters: ${excerpt(text.slice(pos, nextStart))}`);
    if (k >= hi || !t) break;
    if (!t.open) {
      problems.add(() => `unexpected </${t.name}>`);
      pos = t.end;
      k++;
      continue;
    }
    const close = chooseCloser(T, ok, maxOk, lo, hi, k);
    if (close < 0) {
      const truncated = to === text.length || isWs(text, to, text.length);
      problems.add(
        () => `parameter <${t.name}> is not closed${truncated ? ' (the output may have been cut short)' : ''}`,
      );
      break;
    }
    const value = cleanValue(text.slice(t.end, T[close]!.start));
    if (params.has(t.name)) problems.add(() => `parameter <${t.name}> is given more than once`);
    else params.set(t.name, value);
    pos = T[close]!.end;
    k = close + 1;
  }
  return params;
}

function chooseCloser(T: Tag[], ok: Uint8Array, maxOk: Map<string, number>, lo: number, hi: number, k: number): number {
  const name = T[k]!.name;
  const limit = maxOk.get(name);
  if (limit !== undefined && limit > k) {
    let depth = 0;
    for (let j = k + 1; j < limit; j++) {
      const t = T[j]!;
      if (t.name !== name) continue;
      if (t.open) depth++;
      else if (depth > 0) depth--;
      else if (ok[j - lo] === 1) return j;
    }
    return limit;
  }
  // Nothing after this parameter reads as parameters: take its first closing tag, the caller reports the rest.
  for (let j = k + 1; j < hi; j++) if (isTag(T[j], false, name)) return j;
  return -1;
}
