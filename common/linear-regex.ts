// The regular expressions of a typed-answer schema (`pattern`, `patternProperties`, the formats) run on RE2's
// linear-time engine (re2js: a pure-JavaScript port, deterministic, no I/O, so workflow-safe), never on the
// backtracking RegExp: one crafted answer string against `^(a+)+$` would hold a workflow task past its timeout.
// A pattern is ECMA-262 syntax (JSON Schema's dialect); the ones RE2 cannot run, or would read differently
// (backreferences, lookaround, escapes that mean one thing in JavaScript and another in RE2), are refused by name.
import { RE2JS } from 're2js';

/** JSON Schema patterns are short in practice; a long one is a cost the caller controls. */
export const MAX_PATTERN_CHARS = 1_000;
/** RE2's own measure of a compiled pattern's cost (its instruction count): matching is O(text × program). */
export const MAX_PATTERN_PROGRAM = 5_000;

/** Escaped letters that mean the same in JavaScript and RE2 (as translated by re2js); any other is refused. */
const SAME_ESCAPES = new Set('dDwWsSbBnrtfvxucpP0');

/** What a match costs, charged before it runs; throws to stop a check that has spent its budget. */
export type Meter = (units: number) => void;

/** What zod's string checks call: `test` and `lastIndex` (zod resets it), `source` and `toString` for messages. */
export interface LinearRegex {
  readonly source: string;
  readonly flags: string;
  lastIndex: number;
  test(text: string): boolean;
  toString(): string;
}

/** `program`: the pattern's RE2 instruction count, what compiling it cost (a schema bounds the sum). */
export type CompiledPattern = { ok: true; regex: LinearRegex; program: number } | { ok: false; error: string };

/**
 * Compiles a JSON Schema pattern for RE2, or says why it cannot be (without repeating the pattern). `meter` is
 * charged for each match by the length of the text times the program's size in hundreds of instructions.
 */
export function compilePattern(pattern: string, meter: Meter = () => {}): CompiledPattern {
  if (pattern.length > MAX_PATTERN_CHARS) {
    return { ok: false, error: `it has ${pattern.length} characters; the limit is ${MAX_PATTERN_CHARS}` };
  }
  const unsupported = unsupportedSyntax(pattern);
  if (unsupported) return { ok: false, error: unsupported };
  if (!isEcmaScriptPattern(pattern)) return { ok: false, error: 'it is not a valid ECMA-262 regular expression' };
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(RE2JS.translateRegExp(pattern));
  } catch (error) {
    const reason = (error as { error?: unknown }).error;
    return { ok: false, error: `RE2 cannot run it (${typeof reason === 'string' ? reason : 'a syntax it lacks'})` };
  }
  const program = compiled.programSize();
  if (program > MAX_PATTERN_PROGRAM) {
    return { ok: false, error: `it compiles to ${program} RE2 instructions; the limit is ${MAX_PATTERN_PROGRAM}` };
  }
  const weight = Math.ceil(program / 100);
  const regex: LinearRegex = {
    source: pattern,
    flags: '',
    lastIndex: 0,
    test(text: string) {
      meter((text.length + 1) * weight);
      return compiled.test(text);
    },
    toString: () => `/${pattern}/`,
  };
  return { ok: true, regex, program };
}

/** Either JavaScript mode is enough: z.toJSONSchema writes a `u` regex's source without its flag. */
function isEcmaScriptPattern(pattern: string): boolean {
  for (const flags of ['', 'u']) {
    try {
      new RegExp(pattern, flags); // parsing only; it never runs
      return true;
    } catch {
      // try the other mode
    }
  }
  return false;
}

/**
 * One pass over the pattern (linear): what RE2 lacks or would read differently, named for the caller.
 * Backreferences and lookaround RE2 cannot run; `\k<name>` re2js would turn into the letters `k<name>`; an escaped
 * surrogate half would become a code point no text contains; `[[:alpha:]]` is a POSIX class only in RE2.
 */
function unsupportedSyntax(pattern: string): string | undefined {
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!;
    if (char === '\\') {
      const next = pattern[i + 1] ?? '';
      if (next === 'k' || (next >= '1' && next <= '9')) return 'backreferences (\\1, \\k<name>) are not supported';
      if (/[a-zA-Z]/.test(next) && !SAME_ESCAPES.has(next)) {
        return `the escape \\${next} means different things in JavaScript and RE2`;
      }
      if (next === 'u' && /^[dD][89abAB][0-9a-fA-F]{2}$/.test(pattern.slice(i + 2, i + 6))) {
        return 'escaped surrogate halves (\\uD83D\\uDE00) are not supported; write the code point as \\u{1F600}';
      }
      i++;
    } else if (inClass) {
      if (char === ']') inClass = false;
      else if (char === '[' && pattern[i + 1] === ':') return 'POSIX classes ([[:alpha:]]) are not ECMA-262';
    } else if (char === '[') {
      if (pattern[i + 1] === '^') i++;
      if (pattern[i + 1] === ']')
        i++; // `[]` and `[^]`: JavaScript's empty and full classes (re2js translates them)
      else inClass = true;
    } else if (char === '(' && pattern[i + 1] === '?') {
      const group = pattern.slice(i + 2, i + 4);
      if (group[0] === '=' || group[0] === '!' || group === '<=' || group === '<!') {
        return 'lookaround ((?=…), (?!…), (?<=…), (?<!…)) is not supported';
      }
    }
  }
  return undefined;
}
