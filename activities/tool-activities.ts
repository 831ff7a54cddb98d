// Turns tool definitions into Temporal activities: one activity type per tool (so the history shows
// `get_ticker_symbol`, not a generic runner), plus `describeTools`, which tells the workflow how to schedule them.
import { Context } from '@temporalio/activity';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import type { DescribeToolsResult, ToolActivityInput, ToolActivityResult } from '../common/activity-contracts';
import { protocolFor } from '../common/protocols';
import type { ToolDescription } from '../common/protocols/types';
import { keepAlive } from './keep-alive';
import { describeTool, type ToolDefinition, ToolError } from './tool-definition';

export interface ToolActivityOptions {
  /** A longer result is cut, with a visible marker, so it can never become an oversized payload. */
  maxOutputChars?: number;
}

export const DEFAULT_MAX_OUTPUT_CHARS = 100_000;

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
      })),
    };
  }

  async function listTools(): Promise<string[]> {
    return [...byName.keys()];
  }

  const activities: Record<string, ToolActivity> = {};
  for (const tool of tools) {
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
  const parsed = parseInput(tool, schema, call);
  if (!parsed.ok) return { ok: false, content: parsed.error };

  const context = Context.current();
  // Heartbeats while the tool runs, so a worker that dies mid-call is noticed within the heartbeat timeout.
  const stopHeartbeats = keepAlive(context);
  try {
    const value = await tool.run(parsed.value, {
      idempotencyKey: call.idempotencyKey,
      attempt: context.info.attempt,
      signal: context.cancellationSignal,
      heartbeat: (details) => context.heartbeat(details),
    });
    return { ok: true, content: truncate(render(value), options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS) };
  } catch (err) {
    if (err instanceof ToolError) {
      // Benign: an answer, not an incident. The SDK logs it at DEBUG (not WARN) and records no failure metric, so its
      // message, which may quote the model's input, stays out of the logs even when payloads are encrypted.
      throw ApplicationFailure.create({
        type: err.name,
        message: err.message,
        nonRetryable: !err.retryable,
        category: ApplicationFailureCategory.BENIGN,
      });
    }
    throw err; // unexpected: retried by the tool's policy, then reported to the model
  } finally {
    stopHeartbeats();
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

function render(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value) ?? 'null';
}

export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  // The result is exactly `max` characters, marker included, and the marker counts what was really left out.
  const marker = (kept: number) => `\n[output truncated: ${text.length - kept} of ${text.length} characters omitted]`;
  let kept = max;
  for (let i = 0; i < 3; i++) kept = Math.max(0, max - marker(kept).length);
  return text.slice(0, kept) + marker(kept);
}
