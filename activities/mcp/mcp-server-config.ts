// The MCP servers a worker may start or call, from its own configuration only: `MCP_SERVERS` (JSON), a file named by
// `MCP_SERVERS_FILE`, or runWorker's `mcpServers`. The shape is the one Claude Desktop and Claude Code use for
// `mcpServers`, so an existing file works as it is:
//
//   { "filesystem": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/data"],
//                     "requireApproval": ["write_file", "edit_file", "move_file", "create_directory"] },
//     "tickets":    { "type": "http", "url": "https://mcp.example.com/mcp",
//                     "headers": { "Authorization": "Bearer ${TICKETS_TOKEN}" } } }
//
// `${VAR}` (or `${VAR:-default}`) in any string is read from the worker's environment when the configuration is
// loaded: secrets stay in the worker's environment and never enter a conversation's input, its history or a payload.
import { z } from 'zod';
import { mcpServerNameSchema } from '../../common/mcp';
import { durationMs } from '../../common/options';

const duration = z.string().refine((text) => durationMs(text) !== undefined, 'must be a duration like "30 seconds"');

const scheduling = {
  /** The server's tool names (`*` matches any run of characters) whose calls wait for a person's approval. */
  requireApproval: z.array(z.string().min(1).max(128)).max(256).default([]),
  /** One call, one attempt. */
  timeout: duration.default('60 seconds'),
  /** A worker that stops heartbeating for this long is taken for dead, and the call runs again elsewhere. */
  heartbeatTimeout: duration.default('10 seconds'),
  /** Attempts in all, for calls that fail in a way worth retrying (the server died, a timeout). */
  maxAttempts: z.number().int().min(1).max(100).default(3),
  retryInitialInterval: duration.default('1 second'),
};

const stdioServerSchema = z.strictObject({
  type: z.literal('stdio').default('stdio'),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  /** Set on top of a minimal environment (HOME, PATH, …): the worker's own variables are not passed on. */
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().min(1).optional(),
  ...scheduling,
});

const httpServerSchema = z.strictObject({
  type: z.literal('http'),
  url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL (the Streamable HTTP endpoint, e.g. …/mcp)' }),
  headers: z.record(z.string(), z.string()).default({}),
  ...scheduling,
});

const serverSchema = z.union([httpServerSchema, stdioServerSchema]);

const serversSchema = z.record(mcpServerNameSchema, serverSchema);

/** The configuration of one server, as the worker uses it. */
export type McpServerConfig = z.output<typeof serverSchema> & { name: string };
export type McpStdioServerConfig = z.output<typeof stdioServerSchema> & { name: string };
export type McpHttpServerConfig = z.output<typeof httpServerSchema> & { name: string };
/** Servers by name, as written in a configuration (defaults may be left out). */
export type McpServersInput = Record<string, z.input<typeof serverSchema>>;

export class McpConfigError extends Error {
  override name = 'McpConfigError';
}

/**
 * The servers of a configuration: `{ name: server }`, or a file's `{ "mcpServers": { name: server } }`, with
 * `${VAR}` read from `env`. Throws McpConfigError naming each problem.
 */
export function parseMcpServers(input: unknown, env: Record<string, string | undefined>): McpServerConfig[] {
  const servers =
    input && typeof input === 'object' && 'mcpServers' in input ? (input as { mcpServers: unknown }).mcpServers : input;
  if (servers && typeof servers === 'object' && !Array.isArray(servers)) {
    const badNames = Object.keys(servers).filter((name) => !mcpServerNameSchema.safeParse(name).success);
    if (badNames.length > 0) {
      throw new McpConfigError(
        `Invalid MCP server configuration: ${badNames.map((n) => JSON.stringify(n)).join(', ')}: server names match ^[a-zA-Z0-9_-]{1,32}$`,
      );
    }
  }
  const expanded = expandVariables(servers, env, 'mcpServers');
  const parsed = serversSchema.safeParse(expanded);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${['mcpServers', ...issue.path].join('.')}: ${issue.message}`);
    throw new McpConfigError(`Invalid MCP server configuration: ${problems.join('; ')}`);
  }
  return Object.entries(parsed.data).map(([name, server]) => ({ ...server, name }));
}

/** Parses JSON text (an environment variable's value or a file's content), saying where it came from on failure. */
export function parseMcpServersJson(
  text: string,
  source: string,
  env: Record<string, string | undefined>,
): McpServerConfig[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new McpConfigError(`${source}: not valid JSON (${(err as Error).message})`);
  }
  return parseMcpServers(value, env);
}

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

function expandVariables(value: unknown, env: Record<string, string | undefined>, path: string): unknown {
  if (typeof value === 'string') {
    return value.replace(VARIABLE, (_, name: string, fallback: string | undefined) => {
      const found = env[name];
      if (found !== undefined && found !== '') return found;
      if (fallback !== undefined) return fallback;
      throw new McpConfigError(`Invalid MCP server configuration: ${path} uses \${${name}}, which is not set.`);
    });
  }
  if (Array.isArray(value)) return value.map((item, i) => expandVariables(item, env, `${path}.${i}`));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, expandVariables(item, env, `${path}.${key}`)]),
    );
  }
  return value;
}
