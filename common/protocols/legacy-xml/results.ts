// Tool outcomes → the `<function_results>` block the model reads next.
import type { ToolOutcome, ToolResultBlock } from '../types';

// Closing tags that would end our wrappers early. Only these are touched: the rest of a result is data the model
// must read exactly as the tool produced it.
const WRAPPER_CLOSERS = /<\/(stdout|result|error|function_results|tool_name)(\s*)>/gi;

/**
 * Makes a string safe to put inside `<stdout>` / `<error>` / `<tool_name>`: a literal `</stdout>`,
 * `</result>`, `</error>`, `</function_results>` or `</tool_name>` (any case, optional spaces before `>`) has its `<`
 * written as `&lt;`. Nothing else is escaped.
 */
export function neutraliseClosers(s: string): string {
  return s.replace(WRAPPER_CLOSERS, '&lt;/$1$2>');
}

/**
 * A result as text: this format has no place for images, so each one is described in words where it stood, and the
 * model learns that the tool returned an image it cannot see.
 */
export function resultText(content: string | ToolResultBlock[]): string {
  if (typeof content === 'string') return content;
  return content
    .map((block) => {
      if (block.type === 'text') return block.text;
      const source = block.source;
      const what =
        source.type === 'base64'
          ? `${source.media_type}, ${Math.floor((source.data.replace(/=+$/, '').length * 3) / 4)} bytes`
          : source.type === 'url'
            ? source.url
            : source.type;
      return `[image (${what}): not shown, this tool-use format carries text only]`;
    })
    .join('\n');
}

/**
 * One `<function_results>` block answering every outcome, in order. A success is
 * `<result><tool_name>NAME</tool_name><stdout>\nCONTENT\n</stdout></result>`; a failure is the documented
 * `<error>\nNAME: MESSAGE\n</error>` (just `MESSAGE` when the call had no readable name), directly inside
 * `<function_results>`, at the position of the call it answers.
 */
export function renderFunctionResults(outcomes: ToolOutcome[]): string {
  const parts = ['<function_results>'];
  for (const o of outcomes) {
    const name = neutraliseClosers(o.name);
    const content = neutraliseClosers(resultText(o.content));
    if (o.isError) {
      parts.push('<error>', name === '' ? content : `${name}: ${content}`, '</error>');
    } else {
      parts.push('<result>', `<tool_name>${name}</tool_name>`, '<stdout>', content, '</stdout>', '</result>');
    }
  }
  parts.push('</function_results>');
  return parts.join('\n');
}
