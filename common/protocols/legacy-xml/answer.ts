// The text a person should see: the `<answer>` when the model wrote one, otherwise the reply without its machinery.

const ANSWER_OPEN = '<answer>';
const ANSWER_CLOSE = '</answer>';

function isWsCode(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13;
}

/** Whether a `<function_calls>` at `i` starts a real block: `<invoke` or the end of the text follows it. */
function startsBlock(text: string, i: number, open: string): boolean {
  let j = i + open.length;
  while (j < text.length && isWsCode(text.charCodeAt(j))) j++;
  return j === text.length || text.startsWith('<invoke', j);
}

/**
 * Removes every `open … close` span (an unclosed one runs to the end), keeping those whose opening `accept` refuses
 * (a tag mentioned in prose). Linear.
 */
function strip(
  text: string,
  open: string,
  close: string,
  accept?: (text: string, i: number, open: string) => boolean,
): string {
  let out = '';
  let from = 0;
  let search = 0;
  for (;;) {
    const i = text.indexOf(open, search);
    if (i < 0) return out + text.slice(from);
    if (accept && !accept(text, i, open)) {
      search = i + open.length;
      continue;
    }
    out += text.slice(from, i);
    const c = text.indexOf(close, i + open.length);
    if (c < 0) return out;
    from = c + close.length;
    search = from;
  }
}

/**
 * The content of the last `<answer>` (to the end of the text when unclosed), trimmed. Without one: the text minus
 * `<function_calls>` blocks (a `<function_calls>` followed by `<invoke` or by the end of the text, up to its
 * `</function_calls>` or the end), `<function_results>`, `<scratchpad>` and `<thinking>` spans, trimmed. An answer
 * inside those spans (a file the model is writing, say) does not count.
 */
export function extractAnswer(text: string): string {
  if (typeof text !== 'string') return '';
  let rest = strip(text, '<function_calls>', '</function_calls>', startsBlock);
  rest = strip(rest, '<function_results>', '</function_results>');
  rest = strip(rest, '<scratchpad>', '</scratchpad>');
  rest = strip(rest, '<thinking>', '</thinking>');
  const open = rest.lastIndexOf(ANSWER_OPEN);
  if (open >= 0) {
    const from = open + ANSWER_OPEN.length;
    const close = rest.indexOf(ANSWER_CLOSE, from);
    return rest.slice(from, close < 0 ? rest.length : close).trim();
  }
  return rest.trim();
}
