// Turns tool definitions into Temporal activities: one activity type per tool (so the history shows
// `get_ticker_symbol`, not a generic runner), plus `describeTools`, which tells the workflow how to schedule them.
import { Context } from '@temporalio/activity';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import type { DescribeToolsResult, ToolActivityInput, ToolActivityResult } from '../common/activity-contracts';
import { DEFAULT_MAX_RESULT_CHARS } from '../common/bounded-text';
import { truncate, wellFormed } from '../common/safe-text';
import { protocolFor } from '../common/protocols';
import type { ToolDescription } from '../common/protocols/types';
import { keepAlive } from './keep-alive';
import { describeTool, type ToolDefinition, ToolError } from './tool-definition';

export interface ToolActivityOptions {
  /**
   * A longer result or error message is cut, with a visible marker, so it can never become an oversized payload. The
   * conversation's `limits.maxResultChars` (same default) bounds what enters its transcript.
   */
  maxOutputChars?: number;
}

export const DEFAULT_MAX_OUTPUT_CHARS = DEFAULT_MAX_RESULT_CHARS;
/** A stack trace recorded with a tool's failure. */
const MAX_STACK_CHARS = 10_000;
/** An error's name (its failure type): a word, not a text. */
const MAX_ERROR_NAME_CHARS = 100;

export { truncate };

export type ToolActivity = (input: ToolActivityInput) => Promise<ToolActivityResult>;

export function createToolActivities(tools: readonly ToolDefinition[], options: ToolActivityOptions = {}) {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  if (byName.size !== tools.length) throw new Error('Two tools share a name.');

  async function describeTools(names: string[]): Promise<DescribeToolsResult> {
    const known = names.map((name) => byName.get(name)).filter((tool) => tool !== undefined);
    return {
      unknown: names.filter((name) => !byName.has(name)),
      tools: known.map((tool) => ({
        name: tool.name,
        startToCloseTimeout: tool.timeout ?? '30 seconds',
        heartbeatTimeout: tool.heartbeatTimeout ?? '10 seconds',
        maximumAttempts: tool.maxAttempts ?? 3,
        initialInterval: tool.retryInitialInterval ?? '1 second',
        requiresApproval: tool.requiresApproval ?? false,
        ...(tool.agent && { agent: tool.agent }),
      })),
    };
  }

  async function listTools(): Promise<string[]> {
    return [...byName.keys()];
  }

  const activities: Record<string, ToolActivity> = {};
  for (const tool of tools) {
    if (tool.agent) continue; // a child conversation, started by the workflow itself: no activity
    // Rendered once per worker, not per call: the protocol may decode the input against it.
    const schema = describeTool(tool).input_schema;
    activities[tool.name] = (input) => runTool(tool, schema, input, options);
  }
  return { describeTools, listTools, ...activities };
}

async function runTool(
  tool: ToolDefinition,
  schema: ToolDescription['input_schema'],
  call: ToolActivityInput,
  options: ToolActivityOptions,
): Promise<ToolActivityResult> {
  const max = options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS;
  const parsed = parseInput(tool, schema, call);
  if (!parsed.ok) return { ok: false, content: truncate(parsed.error, max) };

  const context = Context.current();
  // Heartbeats while the tool runs, so a worker that dies mid-call is noticed within the heartbeat timeout.
  const stopHeartbeats = keepAlive(context);
  let value: unknown;
  try {
    value = await tool.run(parsed.value, {
      idempotencyKey: call.idempotencyKey,
      attempt: context.info.attempt,
      signal: context.cancellationSignal,
      heartbeat: (details) => context.heartbeat(details),
    });
  } catch (err) {
    if (context.cancellationSignal.aborted) throw err; // cancelled or timed out: Temporal already knows why
    throw toolFailure(err, max);
  } finally {
    stopHeartbeats();
  }
  return render(tool.name, value, max);
}

/**
 * A tool's error as the failure Temporal records and the model reads (`Name: message`), its name, message and stack
 * bounded and well-formed: a failure is encoded by the worker itself, and one with a lone surrogate stops the worker.
 */
function toolFailure(err: unknown, max: number): ApplicationFailure {
  let failure: ApplicationFailure;
  if (err instanceof ToolError) {
    // Benign: an answer, not an incident. The SDK logs it at DEBUG (not WARN) and records no failure metric, so its
    // message, which may quote the model's input, stays out of the logs even when payloads are encrypted.
    failure = ApplicationFailure.create({
      type: errorName(err.name),
      message: truncate(err.message, max),
      nonRetryable: !err.retryable,
      category: ApplicationFailureCategory.BENIGN,
    });
  } else if (err instanceof ApplicationFailure) {
    failure = ApplicationFailure.create({
      ...(err.type && { type: errorName(err.type) }),
      message: truncate(err.message, max),
      nonRetryable: err.nonRetryable === true,
      ...(err.details && { details: err.details }),
      ...(err.nextRetryDelay !== undefined && err.nextRetryDelay !== null && { nextRetryDelay: err.nextRetryDelay }),
      ...(err.category && { category: err.category }),
    });
  } else {
    // Unexpected: retried by the tool's policy, then reported to the model.
    failure = ApplicationFailure.create({
      type: errorName(err instanceof Error ? err.name : 'Error'),
      message: truncate(err instanceof Error ? err.message : describeThrown(err), max),
    });
  }
  if (err instanceof Error && typeof err.stack === 'string') failure.stack = truncate(err.stack, MAX_STACK_CHARS);
  return failure;
}

/**
 * The result as the model reads it: a string as it is, anything else as JSON (BigInt as its digits; a function or
 * `undefined` as `null`). A value JSON cannot hold (a circular structure) is an error the model reads, not a failure
 * to retry: running the tool again would give the same value, and repeat its side effects.
 */
function render(name: string, value: unknown, max: number): ToolActivityResult {
  if (typeof value === 'string') return { ok: true, content: truncate(value, max) };
  let json: string | undefined;
  try {
    json = JSON.stringify(value, (_key, item: unknown) => (typeof item === 'bigint' ? item.toString() : item));
  } catch (err) {
    const reason = err instanceof Error ? err.message : 'unknown reason';
    return {
      ok: false,
      content: truncate(
        `UnrenderableResult: ${name} returned a value that cannot be written as JSON (${reason}).`,
        max,
      ),
    };
  }
  return { ok: true, content: truncate(json ?? 'null', max) };
}

function errorName(name: string): string {
  return wellFormed(name.length > MAX_ERROR_NAME_CHARS ? `${name.slice(0, MAX_ERROR_NAME_CHARS)}…` : name);
}

/** What was thrown when it is not an Error (a string, a number, an object whose toString may throw). */
function describeThrown(thrown: unknown): string {
  try {
    return String(thrown);
  } catch {
    return `a thrown ${typeof thrown}`;
  }
}

function parseInput(
  tool: ToolDefinition,
  schema: ToolDescription['input_schema'],
  call: ToolActivityInput,
): { ok: true; value: Record<string, unknown> } | { ok: false; error: string } {
  const decoded = protocolFor(call.protocol).decodeToolInput(call.input, schema);
  if (!decoded.ok) return { ok: false, error: `InvalidInput: ${decoded.error}` };
  const result = tool.input.safeParse(decoded.value);
  if (result.success) return { ok: true, value: result.data };
  const problems = result.error.issues.map((issue) => `${issue.path.join('.') || 'input'}: ${issue.message}`);
  return { ok: false, error: `InvalidInput: ${tool.name} ${problems.join('; ')}` };
}
