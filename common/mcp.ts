// MCP servers as a tool source: what a conversation asks for, what the worker answers (recorded in the history by
// the `listMcpTools` activity), and what one MCP tool call sends and returns. Workflow-safe: types, constants, zod.
//
// The servers themselves (commands, URLs, environment, headers) exist only in the worker's configuration
// (activities/mcp/mcp-server-config.ts): a conversation names servers, it never describes one.
import type { Tool } from '@anthropic-ai/sdk/resources/messages';
import { defineQuery } from '@temporalio/workflow';
import { z } from 'zod';
import type { ToolResultBlock } from './protocols/types';
import { toolCallSummary } from './summaries';
import { sharedOnce } from './shared-once';
import type { ToolPolicy } from './tool-policy';

export const LIST_MCP_SERVERS_ACTIVITY = 'listMcpServers';
export const LIST_MCP_TOOLS_ACTIVITY = 'listMcpTools';
export const CALL_MCP_TOOL_ACTIVITY = 'callMcpTool';

/** A server's name: short enough that `server__tool` leaves room for the tool within the API's 64 characters. */
export const MCP_SERVER_NAME = /^[a-zA-Z0-9_-]{1,32}$/;
export const mcpServerNameSchema = sharedOnce('mcp.mcpServerNameSchema', () =>
  z
    .string()
    .regex(MCP_SERVER_NAME, 'MCP server names match ^[a-zA-Z0-9_-]{1,32}$ (a server the worker is configured with)'),
);

/**
 * `mcpServers` of the conversation options: the servers (of those the worker is configured with) whose tools the
 * conversation may use, each by name, or with `tools` to offer only those of its tools (the server's own names).
 */
export const mcpServersOptionSchema = sharedOnce('mcp.mcpServersOptionSchema', () =>
  z
    .array(
      z.union(
        [
          mcpServerNameSchema.transform((server): { server: string; tools?: string[] } => ({ server })),
          z.strictObject({
            server: mcpServerNameSchema,
            tools: z
              .array(z.string().min(1).max(128))
              .min(1)
              .max(256)
              .refine((names) => new Set(names).size === names.length, 'tools are listed twice')
              .optional(),
          }),
        ],
        {
          error: (issue) =>
            typeof issue.input === 'string'
              ? 'MCP server names match ^[a-zA-Z0-9_-]{1,32}$ (a server the worker is configured with)'
              : undefined,
        },
      ),
    )
    .max(16)
    .refine((list) => new Set(list.map((s) => s.server)).size === list.length, 'a server is listed twice')
    .default([]),
);

export type McpServerSelection = z.output<typeof mcpServersOptionSchema>[number];

/** One MCP tool as a conversation offers it to the model. */
export interface McpTool {
  /** What the model calls it: `filesystem__read_file`, valid for the API and unique in the conversation. */
  name: string;
  server: string;
  /** The server's own name for the tool. */
  tool: string;
  description: string;
  input_schema: Tool.InputSchema;
  /** A name pattern of the server's configuration marks it: each call waits for a person's approval. */
  requiresApproval: boolean;
}

/** How the workflow schedules the calls of one server (from the worker's configuration). */
export type McpCallPolicy = Omit<ToolPolicy, 'name' | 'requiresApproval'>;

export interface ListMcpToolsInput {
  servers: McpServerSelection[];
  /** Names the conversation's other tools take: MCP tools get other names. */
  reserved: string[];
}

/** The `listMcpTools` activity's result: the tool list of a run, recorded in its history. */
export interface ListMcpToolsResult {
  tools: McpTool[];
  /** Identifies `tools`: model calls name it, and a worker that lacks the list reads it by query. */
  digest: string;
  policies: Record<string, McpCallPolicy>;
  /** Requested servers the worker is not configured with. */
  unknownServers: string[];
  /** Requested tools (`server/tool`) their server does not have. */
  unknownTools: string[];
  /** The servers the worker is configured with, for the error message. */
  configured: string[];
}

export interface McpToolCallInput {
  server: string;
  tool: string;
  arguments: Record<string, unknown>;
  /** The same for every attempt of this call (see ToolActivityInput); sent to the server in `_meta`. */
  idempotencyKey: string;
}

/** A result with `isError` comes back as data (`ok: false`); a call that could not be made throws. */
export interface McpToolCallResult {
  ok: boolean;
  content: ToolResultBlock[];
}

/** Where the idempotency key travels in a `tools/call` request's `_meta`. */
export const IDEMPOTENCY_KEY_META = 'io.github.claude-temporal-orchestrator/idempotency-key';

/** The MCP tools of this run, as `listMcpTools` recorded them: a worker whose model call lacks them reads them here. */
export const mcpToolsQuery = defineQuery<McpTool[]>('getMcpTools');

/** `filesystem · read_file(path="/notes.txt")`: the Web UI's summary of one MCP call, naming server and tool. */
export function mcpCallSummary(server: string, tool: string, input: Record<string, unknown>): string {
  return `${server} · ${toolCallSummary(tool, input)}`;
}
