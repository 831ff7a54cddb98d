// The workflow's side of MCP tools: the run's tool list, listed once by an activity whose result the history keeps
// (a replay reads it from there, never from a server), and one `callMcpTool` activity per call.
import { ActivityFailure, type Priority } from '@temporalio/common';
import { isCancellation, proxyActivities, setCurrentDetails } from '@temporalio/workflow';
import type { ToolPolicy } from '../common/activity-contracts';
import type { TurnFailure } from '../common/conversation-types';
import { FailureType } from '../common/failure-types';
import {
  CALL_MCP_TOOL_ACTIVITY,
  type ListMcpToolsInput,
  type ListMcpToolsResult,
  type McpServerSelection,
  type McpTool,
  type McpToolCallInput,
  type McpToolCallResult,
} from '../common/mcp';
import type { Protocol, ToolCall } from '../common/protocols/types';

type McpActivities = {
  listMcpTools(input: ListMcpToolsInput): Promise<ListMcpToolsResult>;
  callMcpTool(input: McpToolCallInput): Promise<McpToolCallResult>;
};

/** Starting a server (`npx` may download it first) and listing its tools: a few tries before the conversation fails. */
const { listMcpTools } = proxyActivities<McpActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { maximumAttempts: 4, initialInterval: '1 second', backoffCoefficient: 2 },
});

/** A run's MCP tools: by the name the model calls them, with how each is scheduled. */
export interface McpToolbox {
  tools: ReadonlyMap<string, McpTool>;
  policies: ToolPolicy[];
  /** Names the list in model calls (ModelRequestOptions.mcpToolSet). */
  digest: string;
}

/** The MCP tools of the conversation's servers, or why the conversation cannot have them. */
export async function listConversationMcpTools(
  servers: McpServerSelection[],
  reserved: string[],
): Promise<{ toolbox: McpToolbox } | { failure: TurnFailure }> {
  let listed: ListMcpToolsResult;
  const summary = `MCP tools of ${servers.map((s) => s.server).join(', ')}`;
  setCurrentDetails(`Listing the ${summary}`);
  try {
    listed = await listMcpTools.executeWithOptions({ summary }, [{ servers, reserved }]);
  } catch (err) {
    if (isCancellation(err) || !(err instanceof ActivityFailure)) throw err;
    return { failure: { type: FailureType.McpToolsUnavailable, message: err.cause?.message ?? err.message } };
  }
  if (listed.unknownServers.length > 0 || listed.unknownTools.length > 0) {
    const problems = [
      ...(listed.unknownServers.length > 0
        ? [
            `unknown MCP servers: ${listed.unknownServers.join(', ')} (the workers are configured with: ${listed.configured.join(', ') || 'none'})`,
          ]
        : []),
      ...(listed.unknownTools.length > 0
        ? [`tools their server does not have: ${listed.unknownTools.join(', ')}`]
        : []),
    ];
    return {
      failure: { type: FailureType.UnknownMcpTools, message: `The conversation names ${problems.join('; ')}.` },
    };
  }
  return {
    toolbox: {
      tools: new Map(listed.tools.map((tool) => [tool.name, tool])),
      policies: listed.tools.map((tool) => ({
        name: tool.name,
        ...listed.policies[tool.server]!,
        requiresApproval: tool.requiresApproval,
      })),
      digest: listed.digest,
    },
  };
}

/**
 * One MCP tool call as its own activity. The input is decoded here against the recorded schema (the legacy
 * protocol's parameters arrive as text); input that cannot be read goes back to the model without a call.
 */
export async function callMcpTool(
  tool: McpTool,
  call: ToolCall,
  how: {
    policy: ToolPolicy;
    protocol: Protocol;
    summary: string;
    activityId: string;
    idempotencyKey: string;
    /** The turn's (workflows/task-priority.ts); absent, the activity inherits the workflow's. */
    priority?: Priority;
  },
): Promise<McpToolCallResult> {
  const decoded = how.protocol.decodeToolInput(call.input, tool.input_schema);
  if (!decoded.ok) return { ok: false, content: [{ type: 'text', text: `InvalidInput: ${decoded.error}` }] };
  const { policy } = how;
  const activity = proxyActivities<McpActivities>({
    startToCloseTimeout: policy.startToCloseTimeout,
    heartbeatTimeout: policy.heartbeatTimeout,
    retry: { maximumAttempts: policy.maximumAttempts, initialInterval: policy.initialInterval, backoffCoefficient: 2 },
  })[CALL_MCP_TOOL_ACTIVITY];
  const { summary, activityId, priority } = how;
  return activity.executeWithOptions({ summary, activityId, ...(priority && { priority }) }, [
    { server: tool.server, tool: tool.tool, arguments: decoded.value, idempotencyKey: how.idempotencyKey },
  ]);
}
