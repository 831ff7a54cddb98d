// A tool, defined once: its name, what the model is told, a zod schema for its input (rendered to JSON
// Schema for `input_schema`), the handler, and how Temporal should run it (timeout, retries, approval).
import { z } from 'zod';
import { RESERVED_ACTIVITY_NAMES } from '../common/activity-contracts';
import { TOOL_NAME } from '../common/options';
import type { ToolDescription } from '../common/protocols/types';

export { TOOL_NAME };

export interface ToolContext {
  /** Stable across retries of the same call, unique to the call: use it to make side effects happen once. */
  idempotencyKey: string;
  attempt: number;
  /** Aborted when the activity is cancelled or times out. */
  signal: AbortSignal;
  heartbeat(details?: unknown): void;
}

export interface ToolDefinition<Input extends z.ZodObject = z.ZodObject> {
  name: string;
  description: string;
  input: Input;
  /** What the tool returns and which errors it raises: told to the model (the legacy prompt shows them). */
  returns?: string;
  raises?: string[];
  run(input: z.infer<Input>, context: ToolContext): Promise<unknown> | unknown;
  /** Per attempt. Default 30 seconds. */
  timeout?: string;
  /** Default 10 seconds; the worker heartbeats every second while the tool runs. */
  heartbeatTimeout?: string;
  /** Attempts in all, for errors that are worth retrying. Default 3. */
  maxAttempts?: number;
  retryInitialInterval?: string;
  /** A person must approve each call, with its exact arguments, before it runs. */
  requiresApproval?: boolean;
}

/**
 * An error a tool raises on purpose (`TickerNotFound`): the model gets `Name: message` as an error result.
 * Not retried unless `retryable` — asking again would give the same answer. Any other thrown error is retried.
 */
export class ToolError extends Error {
  readonly retryable: boolean;
  constructor(name: string, message: string, options: { retryable?: boolean } = {}) {
    super(message);
    this.name = name;
    this.retryable = options.retryable ?? false;
  }
}

export function defineTool<Input extends z.ZodObject>(definition: ToolDefinition<Input>): ToolDefinition<Input> {
  if (!TOOL_NAME.test(definition.name)) {
    throw new Error(`Tool name "${definition.name}" must match ${TOOL_NAME} (the Messages API's rule).`);
  }
  if (RESERVED_ACTIVITY_NAMES.includes(definition.name)) {
    throw new Error(`Tool name "${definition.name}" is reserved by the orchestrator.`);
  }
  return definition;
}

/** What the model is told about a tool. */
export function describeTool(tool: ToolDefinition): ToolDescription {
  const schema = z.toJSONSchema(tool.input, { target: 'draft-2020-12', io: 'input' }) as Record<string, unknown>;
  delete schema.$schema;
  return {
    name: tool.name,
    description: tool.description,
    input_schema: { ...schema, type: 'object' },
    ...(tool.returns && { returns: tool.returns }),
    ...(tool.raises && { raises: tool.raises }),
  };
}
