// A sub-agent, defined as a tool: the model calls it with a task, and the orchestrator answers the call with a child
// conversation of its own (its system prompt, tools, MCP servers, model, thinking, protocol, budget and typed answer),
// started as a Temporal child workflow (workflows/agent-calls.ts).
//
// Why a function of its own rather than an option of defineTool: an agent tool has no handler, no retries and no
// heartbeat, and it has a conversation's options, which a plain tool must not have; one function per kind keeps each
// definition's type exact. Both make a ToolDefinition, so a worker registers them in one `tools` list and every door
// (the client's tool catalog, the CLI, the gateway) sees an agent tool like any other.
import { z } from 'zod';
import { type AgentPolicy, agentTaskSchema, DEFAULT_AGENT_TIMEOUT } from '../common/agents';
import { conversationOptionsSchema, type ConversationOptionsInput, describeIssues } from '../common/options';
import { outputSpecSchema } from '../common/structured-output';
import { defineTool, type ToolDefinition } from './tool-definition';

/** A typed answer for the child: its tool_result is then the answer as JSON. */
export interface AgentAnswerFormat {
  /** A zod schema, or a JSON Schema. @example z.object({ summary: z.string(), risks: z.array(z.string()) }) */
  schema: z.ZodType | Record<string, unknown>;
  /** @default 'native' */
  mode?: 'native' | 'tool';
  toolName?: string;
}

export interface AgentToolDefinition {
  /** The tool's name, as the model calls it (`^[a-zA-Z0-9_-]{1,64}$`). @example 'research_company' */
  name: string;
  /** What the model is told the sub-agent does, and when to hand it a task. */
  description: string;
  /**
   * The child conversation: the options a client gives a new conversation (system, tools, mcpServers, model,
   * thinking, effort, protocol, budget, limits, …), and `output` for a typed answer. The model's input never changes
   * them: it only writes the task.
   * @example { system: 'You research companies.', tools: ['get_ticker_symbol'], model: 'claude-haiku-4-5' }
   */
  agent: Omit<ConversationOptionsInput, 'output' | 'closeAfterFirstReply'> & { output?: AgentAnswerFormat };
  /**
   * How long the whole child conversation may run; past it the call is an error result for the model.
   * @default '10 minutes'
   */
  timeout?: string;
  /** The task queue the child runs on. @default the parent's */
  taskQueue?: string;
  /**
   * A person must approve each call (its task) before the child starts.
   * @default false
   */
  requiresApproval?: boolean;
}

/**
 * A sub-agent for the worker's `tools`. Its conversation options are checked here, so a mistake stops the worker at
 * start, not a conversation later.
 * @example
 * const researcher = defineAgentTool({
 *   name: 'research_company',
 *   description: 'Researches one company and answers with its ticker and price.',
 *   agent: { system: 'You are a careful analyst.', tools: ['get_ticker_symbol', 'get_current_stock_price'] },
 * });
 */
export function defineAgentTool(definition: AgentToolDefinition): ToolDefinition<typeof agentTaskSchema> {
  const { output, ...options } = definition.agent;
  const childOptions: ConversationOptionsInput = {
    ...options,
    ...(output && { output: outputSpecOf(definition.name, output) }),
    closeAfterFirstReply: true,
  };
  const parsed = conversationOptionsSchema.safeParse(childOptions);
  if (!parsed.success) {
    throw new Error(`Agent tool "${definition.name}": invalid agent options: ${describeIssues(parsed.error, 'agent')}`);
  }
  const agent: AgentPolicy = {
    options: childOptions,
    timeout: definition.timeout ?? DEFAULT_AGENT_TIMEOUT,
    ...(definition.taskQueue !== undefined && { taskQueue: definition.taskQueue }),
  };
  return defineTool({
    name: definition.name,
    description: definition.description,
    input: agentTaskSchema,
    returns: output ? "The sub-agent's answer, as JSON of the answer's schema." : "The sub-agent's answer.",
    raises: [
      'AgentFailed: the sub-agent could not finish (with its reason).',
      'BudgetExhausted: no budget is left for it.',
    ],
    requiresApproval: definition.requiresApproval ?? false,
    agent,
    run: () => {
      throw new Error(
        `${definition.name} is an agent tool: the conversation workflow runs it as a child conversation.`,
      );
    },
  });
}

function outputSpecOf(tool: string, format: AgentAnswerFormat) {
  let schema: unknown = format.schema;
  if (schema instanceof z.ZodType) schema = z.toJSONSchema(schema, { io: 'input' });
  const parsed = outputSpecSchema.safeParse({ ...format, schema });
  if (!parsed.success) {
    throw new Error(`Agent tool "${tool}": invalid answer schema: ${describeIssues(parsed.error, 'output')}`);
  }
  return parsed.data;
}
