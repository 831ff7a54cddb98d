// The worker's copy of the MCP tool lists that model calls offer. A run's list is recorded once in its history (the
// `listMcpTools` result); each model call names it by digest, and the worker reads it from here, or, when this
// worker did not list it (another worker, a restart), from the workflow by query. So the schemas are not repeated
// in every model call's input, and a model call never asks a live server what the tools are.
import type { ConversationRun } from '../../common/activity-contracts';
import { digest } from '../../common/digest';
import type { McpTool } from '../../common/mcp';
import type { ToolDescription } from '../../common/protocols/types';

export type McpToolsReader = (conversation: ConversationRun) => Promise<McpTool[]>;

export class McpToolSets {
  private readonly sets = new Map<string, ReadonlyMap<string, ToolDescription>>();

  constructor(
    private readonly read: McpToolsReader,
    private readonly capacity = 500,
  ) {}

  /** The digest a set is known by (the same on every worker). */
  static digestOf(tools: readonly McpTool[]): string {
    return digest(tools);
  }

  remember(setDigest: string, tools: readonly McpTool[]): void {
    this.sets.delete(setDigest);
    this.sets.set(
      setDigest,
      new Map(
        tools.map((tool) => [
          tool.name,
          { name: tool.name, description: tool.description, input_schema: tool.input_schema },
        ]),
      ),
    );
    if (this.sets.size > this.capacity) this.sets.delete(this.sets.keys().next().value!);
  }

  /** The tools of set `setDigest`, by name, read from the conversation's workflow when this worker lacks them. */
  async get(conversation: ConversationRun, setDigest: string): Promise<ReadonlyMap<string, ToolDescription>> {
    const known = this.sets.get(setDigest);
    if (known) return known;
    const tools = await this.read(conversation);
    const found = McpToolSets.digestOf(tools);
    if (found !== setDigest) {
      throw new Error(`The workflow's MCP tool list has digest ${found}; the model call names ${setDigest}.`);
    }
    this.remember(setDigest, tools);
    return this.sets.get(setDigest)!;
  }
}
