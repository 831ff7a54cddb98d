// The activities that make MCP servers a tool source:
//   listMcpServers  which servers the worker is configured with (the client's tool catalog asks);
//   listMcpTools    a conversation's MCP tools, named for the API, with how to schedule them: recorded in the
//                   history, so replays and model calls never depend on a live server;
//   callMcpTool     one `tools/call`, heartbeating (with the server's progress notifications as details).
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Tool as McpSdkTool } from '@modelcontextprotocol/sdk/types.js';
import { truncate } from '../../common/safe-text';
import { FailureType } from '../../common/failure-types';
import {
  IDEMPOTENCY_KEY_META,
  type ListMcpToolsInput,
  type ListMcpToolsResult,
  type McpCallPolicy,
  type McpTool,
  type McpToolCallInput,
  type McpToolCallResult,
} from '../../common/mcp';
import { keepAlive } from '../keep-alive';
import { DEFAULT_MAX_OUTPUT_CHARS, type ToolActivityOptions } from '../tool-activities';
import { matchesPattern } from './matches-pattern';
import { type McpClientPool, McpToolListTooLongError } from './mcp-client-pool';
import { toMcpFailure } from './mcp-failure';
import { toToolResultBlocks } from './mcp-result-content';
import { mcpToolName } from './mcp-tool-name';
import { McpToolSets } from './mcp-tool-sets';

export interface McpActivityOptions extends ToolActivityOptions {
  /** Base64 characters of images one result may carry; past it an image is replaced by a line saying so. */
  maxImageChars?: number;
}

/** About 225 KB of image: well under the payload limit, and a transcript can hold a few. */
export const DEFAULT_MAX_IMAGE_CHARS = 300_000;
/** The message of a progress notification, as a heartbeat carries it (the Web UI shows it). */
export const MAX_PROGRESS_MESSAGE_CHARS = 1_000;

export function createMcpActivities(pool: McpClientPool, toolSets: McpToolSets, options: McpActivityOptions = {}) {
  const limits = {
    maxTextChars: options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS,
    maxImageChars: options.maxImageChars ?? DEFAULT_MAX_IMAGE_CHARS,
  };

  async function listMcpServers(): Promise<string[]> {
    return pool.serverNames;
  }

  async function listMcpTools({ servers, reserved }: ListMcpToolsInput): Promise<ListMcpToolsResult> {
    const context = Context.current();
    const stopHeartbeats = keepAlive(context);
    const taken = new Set(reserved);
    const tools: McpTool[] = [];
    const policies: Record<string, McpCallPolicy> = {};
    const unknownServers: string[] = [];
    const unknownTools: string[] = [];
    try {
      for (const { server, tools: wanted } of servers) {
        const config = pool.config(server);
        if (!config) {
          unknownServers.push(server);
          continue;
        }
        let listed: McpSdkTool[];
        try {
          listed = await pool.listTools(server, context.cancellationSignal);
        } catch (err) {
          if (context.cancellationSignal.aborted) throw err;
          const failure = toMcpFailure(err, server, 'tools/list', limits.maxTextChars);
          throw ApplicationFailure.create({
            type: FailureType.McpToolsUnavailable,
            message: `The tools of MCP server "${server}" could not be listed: ${failure.message}`,
            // A server that lists without end would do so again.
            nonRetryable: err instanceof McpToolListTooLongError,
          });
        }
        const names = new Set(listed.map((tool) => tool.name));
        for (const name of wanted ?? []) if (!names.has(name)) unknownTools.push(`${server}/${name}`);
        for (const tool of listed) {
          if (wanted && !wanted.includes(tool.name)) continue;
          const name = mcpToolName(server, tool.name, taken);
          taken.add(name);
          tools.push({
            name,
            server,
            tool: tool.name,
            description:
              tool.description ?? tool.title ?? tool.annotations?.title ?? `${tool.name} (MCP server ${server})`,
            input_schema: inputSchema(tool),
            requiresApproval: matchesPattern(tool.name, config.requireApproval),
          });
        }
        policies[server] = {
          startToCloseTimeout: config.timeout,
          heartbeatTimeout: config.heartbeatTimeout,
          maximumAttempts: config.maxAttempts,
          initialInterval: config.retryInitialInterval,
        };
      }
    } finally {
      stopHeartbeats();
    }
    const digest = McpToolSets.digestOf(tools);
    toolSets.remember(digest, tools);
    return { tools, digest, policies, unknownServers, unknownTools, configured: pool.serverNames };
  }

  async function callMcpTool(input: McpToolCallInput): Promise<McpToolCallResult> {
    const context = Context.current();
    let progress: { progress: number; total?: number; message?: string } | undefined;
    const stopHeartbeats = keepAlive(context, () => progress);
    try {
      const result = await pool.callTool(
        input.server,
        { name: input.tool, arguments: input.arguments, _meta: { [IDEMPOTENCY_KEY_META]: input.idempotencyKey } },
        {
          signal: context.cancellationSignal,
          ...(context.info.startToCloseTimeoutMs && { timeout: callTimeoutMs(context.info.startToCloseTimeoutMs) }),
          // Each progress notification is a heartbeat carrying it: the Web UI shows how far a long tool got.
          onprogress: ({ progress: done, total, message }) => {
            // The server writes the message: bounded, like all it sends (heartbeat details have a size limit too).
            const said = message ? truncate(message, MAX_PROGRESS_MESSAGE_CHARS) : undefined;
            progress = { progress: done, ...(total !== undefined && { total }), ...(said && { message: said }) };
            context.heartbeat(progress);
          },
        },
      );
      return { ok: result.isError !== true, content: toToolResultBlocks(result, limits) };
    } catch (err) {
      if (context.cancellationSignal.aborted) throw err; // cancelled or timed out: Temporal already knows why
      throw toMcpFailure(err, input.server, input.tool, limits.maxTextChars);
    } finally {
      stopHeartbeats();
    }
  }

  return { listMcpServers, listMcpTools, callMcpTool };
}

/**
 * The MCP request gives up before the attempt's own timeout: the model then reads the server's timeout (and the server
 * is told to cancel), not Temporal's. The margin is a quarter of the attempt, up to 2 s: Temporal's clock starts when
 * the task is handed to the worker, this one when the activity's code runs, and a busy worker starts it late (with a
 * 3 s timeout and a 0.3 s margin, Temporal's timeout won in a loaded test run).
 */
function callTimeoutMs(attemptMs: number): number {
  return attemptMs - Math.min(2_000, attemptMs / 4);
}

/** The tool's JSON Schema as `input_schema`: an object schema, without the `$schema` dialect line. */
function inputSchema(tool: McpSdkTool): McpTool['input_schema'] {
  const { $schema: _dialect, ...schema } = tool.inputSchema as Record<string, unknown>;
  return { ...schema, type: 'object' } as McpTool['input_schema'];
}
