// A tool, defined once: its name, what the model is told, a zod schema for its input (rendered to JSON
// Schema for `input_schema`), the handler, and how Temporal should run it (timeout, retries, approval).
import { z } from 'zod';
import { RESERVED_ACTIVITY_NAMES } from '../common/activity-contracts';
import type { AgentPolicy } from '../common/agents';
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
  /**
   * The tool's name, as the model calls it and as its activity type shows in the history (`^[a-zA-Z0-9_-]{1,64}$`).
   * @example 'get_ticker_symbol'
   */
  name: string;
  /**
   * What the model is told the tool does, and when to use it.
   * @example 'Gets the stock ticker symbol for a company name.'
   */
  description: string;
  /**
   * The tool's input: a zod object, sent to the model as its JSON Schema and checked before `run` is called (an input
   * that does not match becomes an error result for the model, and the tool does not run).
   * @example z.object({ company_name: z.string().describe('The full name of the company') })
   */
  input: Input;
  /**
   * What the tool returns: told to the model (the legacy prompt shows it).
   * @example 'The ticker symbol, e.g. "GM".'
   */
  returns?: string;
  /**
   * Which errors it raises on purpose (ToolError): told to the model (the legacy prompt shows them).
   * @example ['TickerNotFound: no company has that name.']
   */
  raises?: string[];
  /**
   * Runs the tool with its checked input. What it returns is the tool's result (JSON); a thrown ToolError is an error
   * result for the model, any other error is retried up to `maxAttempts`.
   * @example async ({ company_name }, { signal }) => lookUpTicker(company_name, signal)
   */
  run(input: z.infer<Input>, context: ToolContext): Promise<unknown> | unknown;
  /**
   * How long one attempt may run (a Temporal duration).
   * @default '30 seconds'
   * @example '2 minutes'
   */
  timeout?: string;
  /**
   * How long the worker may go without a heartbeat before the attempt counts as lost; the worker heartbeats every third
   * of it while the tool runs (at most every 0.5 s).
   * @default '10 seconds'
   */
  heartbeatTimeout?: string;
  /**
   * Attempts in all, for errors that are worth retrying.
   * @default 3
   */
  maxAttempts?: number;
  /**
   * The wait before the first retry (Temporal's `initialInterval`; later waits double).
   * @default '1 second'
   */
  retryInitialInterval?: string;
  /**
   * A person must approve each call, with its exact arguments, before it runs.
   * @default false
   */
  requiresApproval?: boolean;
  /** Set by defineAgentTool (agent-tool-definition.ts): the call is a child conversation, and `run` never runs. */
  agent?: AgentPolicy;
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

/**
 * A tool for the worker's `tools`: checks its name (the Messages API's rule, and not a name the orchestrator uses) and
 * keeps the handler's input typed by the schema.
 * @example
 * const getTickerSymbol = defineTool({
 *   name: 'get_ticker_symbol',
 *   description: 'Gets the stock ticker symbol for a company name.',
 *   input: z.object({ company_name: z.string() }),
 *   run: async ({ company_name }) => (company_name === 'General Motors' ? 'GM' : 'UNKNOWN'),
 * });
 */
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
