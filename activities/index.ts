// `claude-temporal-orchestrator/tools`: define the tools a worker runs. Each becomes an activity of its own; the
// model is told its name, description and the JSON Schema of its zod input.
export { defineTool, describeTool, type ToolContext, type ToolDefinition, ToolError } from './tool-definition';
export { type ToolActivityOptions } from './tool-activities';
export { type AgentAnswerFormat, type AgentToolDefinition, defineAgentTool } from './agent-tool-definition';
