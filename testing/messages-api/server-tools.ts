// The API's server tools, emulated offline: the tool definitions checked (known types, their fixed names, domain
// filters, `defer_loading` with tool search), scripted `server_tool_use` and result blocks sent as the API sends them,
// `usage.server_tool_use` counted from them, and code execution's container — issued by this server, reported in the
// reply, and expected back: an id it never issued is refused, and so is a conversation that ran code and comes back
// without its container (stricter than the API, which would start an empty one: an orchestrator that loses its
// container has a bug worth seeing). Nothing is searched, fetched or run: tests script what the tools return.
import { randomBytes } from 'node:crypto';
import { SERVER_TOOL_RESULT_TYPES } from '../../common/server-tools';

type Json = Record<string, unknown>;

/** The server tool types this server knows, with the name each must have. */
const SERVER_TOOLS: Record<string, string> = {
  web_search_20250305: 'web_search',
  web_search_20260209: 'web_search',
  web_search_20260318: 'web_search',
  web_fetch_20250910: 'web_fetch',
  web_fetch_20260209: 'web_fetch',
  web_fetch_20260309: 'web_fetch',
  web_fetch_20260318: 'web_fetch',
  code_execution_20250522: 'code_execution',
  code_execution_20250825: 'code_execution',
  code_execution_20260120: 'code_execution',
  code_execution_20260521: 'code_execution',
  tool_search_tool_regex_20251119: 'tool_search_tool_regex',
  tool_search_tool_regex: 'tool_search_tool_regex',
  tool_search_tool_bm25_20251119: 'tool_search_tool_bm25',
  tool_search_tool_bm25: 'tool_search_tool_bm25',
};

/** Block types of server tools' results; a script names them as the API does. */
export const SERVER_RESULT_TYPES = SERVER_TOOL_RESULT_TYPES;
export type ServerResultType = (typeof SERVER_RESULT_TYPES)[number];

const CODE_RESULT_TYPES = new Set([
  'code_execution_tool_result',
  'bash_code_execution_tool_result',
  'text_editor_code_execution_tool_result',
]);

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function toolsOf(body: Json): Json[] {
  return Array.isArray(body['tools']) ? (body['tools'] as unknown[]).filter(isObject) : [];
}

function isServerTool(tool: Json): boolean {
  return tool['type'] !== undefined && tool['type'] !== null && tool['type'] !== 'custom';
}

/** Whether the request offers code execution (a container comes with its reply). */
export function offersCodeExecution(body: Json): boolean {
  return toolsOf(body).some((tool) => SERVER_TOOLS[String(tool['type'])] === 'code_execution');
}

function messageBlocks(body: Json): Json[] {
  const messages = Array.isArray(body['messages']) ? (body['messages'] as unknown[]).filter(isObject) : [];
  return messages.flatMap((m) => (Array.isArray(m['content']) ? (m['content'] as unknown[]).filter(isObject) : []));
}

/** The containers this server issued, and when each expires. */
export class Containers {
  private readonly issued = new Map<string, number>();

  constructor(private readonly now: () => number) {}

  /** The container of a request that runs code: the one it names, or a new one. */
  containerFor(body: Json): { id: string; expires_at: string } {
    const named = typeof body['container'] === 'string' ? body['container'] : undefined;
    const id = named ?? `container_011${randomBytes(12).toString('hex')}`;
    // Thirty days after its last use, as the API's containers (refreshed on use).
    const expires = this.now() + 30 * 86_400_000;
    this.issued.set(id, expires);
    return { id, expires_at: new Date(expires).toISOString() };
  }

  /** The 400 a request with server tools gets, or undefined when they are in order. */
  check(body: Json, countTokens = false): string | undefined {
    const tools = toolsOf(body);
    let search = false;
    let deferred = 0;
    const defined = new Set<string>();
    for (const [i, tool] of (Array.isArray(body['tools']) ? (body['tools'] as unknown[]) : []).entries()) {
      if (!isObject(tool)) continue;
      if (typeof tool['name'] === 'string') defined.add(tool['name']);
      if (tool['defer_loading'] === true) deferred++;
      if (!isServerTool(tool)) continue;
      const type = String(tool['type']);
      const name = SERVER_TOOLS[type];
      if (!name) {
        return `tools.${i}: Input tag '${type}' found using 'type' does not match any of the expected tags: 'custom', ${Object.keys(
          SERVER_TOOLS,
        )
          .map((t) => `'${t}'`)
          .join(', ')}`;
      }
      if (tool['name'] !== name) return `tools.${i}.${type}.name: Input should be '${name}'`;
      if (tool['allowed_domains'] != null && tool['blocked_domains'] != null) {
        return `tools.${i}.${type}: Cannot specify both allowed_domains and blocked_domains`;
      }
      if (name.startsWith('tool_search_tool_')) {
        search = true;
        if (tool['defer_loading'] === true) return `tools.${i}.${type}: the tool search tool cannot be deferred`;
      }
    }
    if (deferred > 0 && !search) {
      return 'Tools with defer_loading require a tool search tool (tool_search_tool_regex or tool_search_tool_bm25) in tools';
    }
    if (deferred > 0 && deferred === tools.length) {
      return 'All tools have defer_loading set. At least one tool must be non-deferred.';
    }
    for (const block of messageBlocks(body)) {
      if (block['type'] !== 'tool_search_tool_result' || !isObject(block['content'])) continue;
      const refs = block['content']['tool_references'];
      for (const ref of Array.isArray(refs) ? refs : []) {
        const name = isObject(ref) ? ref['tool_name'] : undefined;
        if (typeof name === 'string' && !defined.has(name)) {
          return `Tool reference '${name}' has no corresponding tool definition`;
        }
      }
    }
    const container = body['container'];
    if (countTokens) return undefined; // count_tokens runs nothing: no container
    if (container !== undefined && container !== null) {
      if (typeof container !== 'string') return 'container: Input should be a valid string';
      const expires = this.issued.get(container);
      if (expires === undefined) return `container: Container '${container}' not found`;
      if (expires <= this.now()) return `container: Container '${container}' has expired`;
    } else if (offersCodeExecution(body) && messageBlocks(body).some((b) => CODE_RESULT_TYPES.has(String(b['type'])))) {
      return 'container: the conversation ran code in a container; send its id back as `container` (local server: stricter than the API, which would start an empty one)';
    }
    return undefined;
  }
}

/** `usage.server_tool_use` of a reply with these blocks (null when it ran no web search or fetch). */
export function serverToolUsage(
  content: readonly { type: string; json?: Json }[],
): { web_search_requests: number; web_fetch_requests: number } | null {
  let searches = 0;
  let fetches = 0;
  for (const block of content) {
    if (block.type !== 'server' || block.json?.['type'] !== 'server_tool_use') continue;
    if (block.json['name'] === 'web_search') searches++;
    if (block.json['name'] === 'web_fetch') fetches++;
  }
  return searches + fetches > 0 ? { web_search_requests: searches, web_fetch_requests: fetches } : null;
}

/** A `srvtoolu_` id, shaped like the API's. */
export function serverToolUseId(): string {
  return `srvtoolu_01${randomBytes(12).toString('hex')}`;
}
