// The API's server tools: web search, web fetch, code execution and tool search, run by the Messages API itself. The
// conversation's option `serverTools` says which; the request offers them next to the conversation's own tools, and
// their blocks (`server_tool_use`, `web_search_tool_result`, …) stay in the assistant message they came in, as they
// came. Tool search keeps the schemas of the tools it defers (`defer_loading`) out of every request until the model
// finds them. Code execution runs in a container the API names in its reply; the conversation sends that id back in
// every later request (carried across continue-as-new). Pure and workflow-safe.
import type {
  CodeExecutionTool20250825,
  ContentBlockParam,
  ToolSearchToolBm25_20251119,
  ToolSearchToolRegex20251119,
  ToolUnion,
  WebFetchTool20250910,
  WebSearchTool20250305,
} from '@anthropic-ai/sdk/resources/messages';
import { z } from 'zod';
import { isWellFormed } from './safe-text';
import { sharedOnce } from './shared-once';

const domain = sharedOnce('serverTools.domain', () =>
  z
    .string()
    .min(1)
    .max(253)
    .regex(/^[a-zA-Z0-9.*-]+(\/[\x21-\x7e]*)?$/, 'a domain like "example.com" or "docs.example.com/api"'),
);
const domains = sharedOnce('serverTools.domains', () => z.array(domain).min(1).max(100));
const maxUses = sharedOnce('serverTools.maxUses', () => z.number().int().min(1).max(1_000));
const place = sharedOnce('serverTools.place', () =>
  z.string().min(1).max(255).refine(isWellFormed, 'must be well-formed text'),
);

function exclusiveDomains(value: { allowedDomains?: unknown; blockedDomains?: unknown }, ctx: z.RefinementCtx): void {
  if (value.allowedDomains !== undefined && value.blockedDomains !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['blockedDomains'],
      message: 'allowedDomains and blockedDomains cannot be used together (the API refuses both)',
    });
  }
}

const webSearchSchema = sharedOnce('serverTools.webSearchSchema', () =>
  z
    .strictObject({
      maxUses: maxUses.optional(),
      allowedDomains: domains.optional(),
      blockedDomains: domains.optional(),
      userLocation: z
        .strictObject({
          city: place.optional(),
          region: place.optional(),
          country: z
            .string()
            .regex(/^[A-Z]{2}$/, 'a two-letter ISO country code')
            .optional(),
          timezone: place.optional(),
        })
        .optional(),
    })
    .superRefine(exclusiveDomains),
);

const webFetchSchema = sharedOnce('serverTools.webFetchSchema', () =>
  z
    .strictObject({
      maxUses: maxUses.optional(),
      allowedDomains: domains.optional(),
      blockedDomains: domains.optional(),
      maxContentTokens: z.number().int().min(1).max(1_000_000).optional(),
      citations: z.boolean().optional(),
    })
    .superRefine(exclusiveDomains),
);

/** A tool name pattern: letters, digits, `_`, `-` and `*` (any run of characters). */
const toolPattern = sharedOnce('serverTools.toolPattern', () =>
  z.string().regex(/^[a-zA-Z0-9_*-]{1,64}$/, 'a tool name, or a pattern with * (e.g. "tickets__*")'),
);

const toolSearchSchema = sharedOnce('serverTools.toolSearchSchema', () =>
  z.strictObject({
    /** `regex`: the model writes regular expressions; `bm25`: natural-language queries. */
    type: z.enum(['regex', 'bm25']).default('regex'),
    /** The tools (the conversation's and its MCP servers') whose schemas stay out until the model finds them. */
    defer: z.array(toolPattern).min(1).max(100).default(['*']),
  }),
);

export const serverToolsSchema = sharedOnce('serverTools.serverToolsSchema', () =>
  z.strictObject({
    webSearch: webSearchSchema.optional(),
    webFetch: webFetchSchema.optional(),
    codeExecution: z.strictObject({}).optional(),
    toolSearch: toolSearchSchema.optional(),
  }),
);
export type ServerToolsOption = z.output<typeof serverToolsSchema>;

/** Whether the option offers any server tool at all. */
export function offersServerTools(option: ServerToolsOption | undefined): option is ServerToolsOption {
  return (
    option !== undefined &&
    (option.webSearch !== undefined ||
      option.webFetch !== undefined ||
      option.codeExecution !== undefined ||
      option.toolSearch !== undefined)
  );
}

/** The names the API gives the server tools, in the order the request offers them. */
export function serverToolNames(option: ServerToolsOption | undefined): string[] {
  if (!option) return [];
  return [
    ...(option.webSearch ? ['web_search'] : []),
    ...(option.webFetch ? ['web_fetch'] : []),
    ...(option.codeExecution ? ['code_execution'] : []),
    ...(option.toolSearch ? [`tool_search_tool_${option.toolSearch.type}`] : []),
  ];
}

/** What a model call's activity summary says of them in the Web UI: ` · server tools web_search, code_execution`. */
export function serverToolsNote(option: ServerToolsOption | undefined): string {
  const names = serverToolNames(option);
  return names.length > 0 ? ` · server tools ${names.join(', ')}` : '';
}

/** The server tools as the request's `tools` entries. */
export function serverToolParams(option: ServerToolsOption | undefined): ToolUnion[] {
  if (!option) return [];
  const out: ToolUnion[] = [];
  const { webSearch, webFetch, codeExecution, toolSearch } = option;
  if (webSearch) {
    out.push({
      type: 'web_search_20250305',
      name: 'web_search',
      ...(webSearch.maxUses !== undefined && { max_uses: webSearch.maxUses }),
      ...(webSearch.allowedDomains && { allowed_domains: webSearch.allowedDomains }),
      ...(webSearch.blockedDomains && { blocked_domains: webSearch.blockedDomains }),
      ...(webSearch.userLocation && { user_location: { type: 'approximate', ...webSearch.userLocation } }),
    } satisfies WebSearchTool20250305);
  }
  if (webFetch) {
    out.push({
      type: 'web_fetch_20250910',
      name: 'web_fetch',
      ...(webFetch.maxUses !== undefined && { max_uses: webFetch.maxUses }),
      ...(webFetch.allowedDomains && { allowed_domains: webFetch.allowedDomains }),
      ...(webFetch.blockedDomains && { blocked_domains: webFetch.blockedDomains }),
      ...(webFetch.maxContentTokens !== undefined && { max_content_tokens: webFetch.maxContentTokens }),
      ...(webFetch.citations !== undefined && { citations: { enabled: webFetch.citations } }),
    } satisfies WebFetchTool20250910);
  }
  if (codeExecution) {
    out.push({ type: 'code_execution_20250825', name: 'code_execution' } satisfies CodeExecutionTool20250825);
  }
  if (toolSearch?.type === 'bm25') {
    out.push({
      type: 'tool_search_tool_bm25_20251119',
      name: 'tool_search_tool_bm25',
    } satisfies ToolSearchToolBm25_20251119);
  } else if (toolSearch) {
    out.push({
      type: 'tool_search_tool_regex_20251119',
      name: 'tool_search_tool_regex',
    } satisfies ToolSearchToolRegex20251119);
  }
  return out;
}

/** Whether `name` matches one of the patterns (`*`: any run of characters). Linear: no regex built from input. */
export function matchesToolPattern(name: string, patterns: readonly string[]): boolean {
  return patterns.some((pattern) => globMatch(name, pattern));
}

function globMatch(text: string, pattern: string): boolean {
  const parts = pattern.split('*');
  if (parts.length === 1) return text === pattern;
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (!text.startsWith(first) || !text.endsWith(last) || text.length < first.length + last.length) return false;
  let at = first.length;
  const end = text.length - last.length;
  for (const middle of parts.slice(1, -1)) {
    const found = text.indexOf(middle, at);
    if (found < 0 || found + middle.length > end) return false;
    at = found + middle.length;
  }
  return true;
}

/** Whether the conversation's tool `name` is deferred by tool search. */
export function isDeferred(name: string, option: ServerToolsOption | undefined): boolean {
  return option?.toolSearch !== undefined && matchesToolPattern(name, option.toolSearch.defer);
}

/** The block types of server tools' results (the local Messages API writes the same ones). */
export const SERVER_TOOL_RESULT_TYPES = [
  'web_search_tool_result',
  'web_fetch_tool_result',
  'code_execution_tool_result',
  'bash_code_execution_tool_result',
  'text_editor_code_execution_tool_result',
  'tool_search_tool_result',
] as const;

/** The block types the API's server tools put into a reply; they go back in place, as they came. */
export const SERVER_TOOL_BLOCK_TYPES: ReadonlySet<string> = new Set([
  'server_tool_use',
  ...SERVER_TOOL_RESULT_TYPES,
  'container_upload',
]);

/**
 * A server tool's block as it goes back to the API, or undefined when it is not one: `server_tool_use` needs its id,
 * name and input, a result its `tool_use_id` and content. Fields the response set to null are left out.
 */
export function serverToolBlock(block: Record<string, unknown>): ContentBlockParam | undefined {
  const type = block['type'];
  if (typeof type !== 'string' || !SERVER_TOOL_BLOCK_TYPES.has(type)) return undefined;
  if (type === 'server_tool_use') {
    if (typeof block['id'] !== 'string' || typeof block['name'] !== 'string' || !('input' in block)) return undefined;
  } else if (type === 'container_upload') {
    if (typeof block['file_id'] !== 'string') return undefined;
  } else if (typeof block['tool_use_id'] !== 'string' || !('content' in block)) {
    return undefined;
  }
  const kept = Object.entries(block).filter(
    ([key, value]) => value !== null && !(key === 'caller' && (value as { type?: string }).type === 'direct'),
  );
  return Object.fromEntries(kept) as unknown as ContentBlockParam;
}

/** Checks of the option against the rest of the conversation's options (zod issues with their paths). */
export function serverToolsProblems(options: {
  serverTools?: ServerToolsOption | undefined;
  protocol: string;
  tools: readonly string[];
  mcpServers: readonly unknown[];
}): { path: (string | number)[]; message: string }[] {
  const option = options.serverTools;
  if (!offersServerTools(option)) return [];
  const problems: { path: (string | number)[]; message: string }[] = [];
  if (options.protocol !== 'native') {
    problems.push({
      path: ['serverTools'],
      message: 'server tools need the native protocol (their blocks are not text the legacy XML protocol can carry)',
    });
  }
  if (option.toolSearch && options.tools.length === 0 && options.mcpServers.length === 0) {
    problems.push({
      path: ['serverTools', 'toolSearch'],
      message: 'tool search needs tools to search: give tools or mcpServers',
    });
  }
  return problems;
}
