// A one-step workflow that asks a worker of the task queue which tools it registers and which MCP servers it is
// configured with: how a client that imports no tool code learns what a conversation may ask for.
import { proxyLocalActivities } from '@temporalio/workflow';
import type { ToolCatalog } from '../common/activity-contracts';

const { listTools, listMcpServers } = proxyLocalActivities<{
  listTools(): Promise<string[]>;
  listMcpServers(): Promise<string[]>;
}>({ startToCloseTimeout: '10 seconds' });

export async function toolCatalog(): Promise<ToolCatalog> {
  const [tools, mcpServers] = await Promise.all([listTools(), listMcpServers()]);
  return { tools, mcpServers };
}
