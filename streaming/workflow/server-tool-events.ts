// The stream events of the API's server tools, from the reply blocks they came in: `server_tool_call` for a
// `server_tool_use` block (what the model asked the API to run: a search query, a URL, code), `server_tool_result`
// for its result block (which tool answered, and its error code when it failed). The result's content itself (pages,
// search results, program output) is in the model activity's result in the history; readers get a line for it.
// Pure and workflow-safe.
import type { StreamEvent } from '../stream-events';

type Positionless<E> = E extends unknown ? Omit<E, 'call' | 'attempt' | 'block'> : never;
export type ServerToolEvent = Positionless<Extract<StreamEvent, { type: 'server_tool_call' | 'server_tool_result' }>>;

const RESULT_TOOL: Record<string, string> = {
  web_search_tool_result: 'web_search',
  web_fetch_tool_result: 'web_fetch',
  code_execution_tool_result: 'code_execution',
  bash_code_execution_tool_result: 'bash_code_execution',
  text_editor_code_execution_tool_result: 'text_editor_code_execution',
  tool_search_tool_result: 'tool_search',
};

/** The event of a server tool's block, or undefined for any other block. */
export function serverToolEvent(block: unknown): ServerToolEvent | undefined {
  if (typeof block !== 'object' || block === null) return undefined;
  const b = block as Record<string, unknown>;
  const type = b['type'];
  if (type === 'server_tool_use') {
    if (typeof b['id'] !== 'string' || typeof b['name'] !== 'string') return undefined;
    return { type: 'server_tool_call', id: b['id'], name: b['name'], input: b['input'] ?? {} };
  }
  const tool = typeof type === 'string' ? RESULT_TOOL[type] : undefined;
  if (!tool || typeof b['tool_use_id'] !== 'string') return undefined;
  const error = errorCodeOf(b['content']);
  return { type: 'server_tool_result', toolUseId: b['tool_use_id'], name: tool, ...(error && { error }) };
}

/** A result's `error_code` (`{type: '…_error', error_code}`), when it is an error. */
function errorCodeOf(content: unknown): string | undefined {
  if (typeof content !== 'object' || content === null || Array.isArray(content)) return undefined;
  const c = content as Record<string, unknown>;
  const code = c['error_code'];
  return typeof c['type'] === 'string' && c['type'].endsWith('_error') && typeof code === 'string'
    ? code.slice(0, 100)
    : undefined;
}
