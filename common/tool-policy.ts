// How the workflow schedules one tool. A leaf of common/: mcp.ts names it, and activity-contracts.ts (which imports
// mcp.ts for the MCP activity names) re-exports it, so neither has to import the other back.
import type { AgentPolicy } from './agents';

/** How the workflow schedules one tool: the worker's tool definition is the source of truth. */
export interface ToolPolicy {
  name: string;
  startToCloseTimeout: string;
  /** A worker that stops heartbeating for this long is taken for dead and the call runs again elsewhere. */
  heartbeatTimeout: string;
  maximumAttempts: number;
  initialInterval: string;
  requiresApproval: boolean;
  /** Set for an agent tool (activities/agent-tool-definition.ts): a call starts this child conversation. */
  agent?: AgentPolicy;
}
