// Turns tool definitions into Temporal activities: one activity type per tool (so the history shows
// `get_ticker_symbol`, not a generic runner), plus `describeTools`, which tells the workflow how to schedule them.
import { appendFileSync } from 'node:fs';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { z } from 'zod';
import type { DescribeToolsResult, ToolActivityInput, ToolActivityResult } from '../workflows/activity-contracts';
import { coerceParameters } from '../workflows/protocols/legacy-xml';
import { keepAlive } from './heartbeat';
import { describeTool, type ToolDefinition, ToolError } from './tool-definition';

export interface ToolActivityOptions {
  /** Append one JSON line per execution start and end (counted by crash tests, outside the worker). */
  executionLog?: string;
  /** Simulated latency before each execution (benchmarks and crash tests). */
  latencyMs?: number;
  /** A longer result is cut, with a visible marker, so it can never become an oversized payload. */
  maxOutputChars?: number;
}

export const DEFAULT_MAX_OUTPUT_CHARS = 100_000;

/** One line of the execution log: a tool run starting and how it ended, keyed like the tool's idempotency key. */
export interface ExecutionLogLine {
  event: 'start' | 'finish' | 'error';
  tool: string;
  /** `<workflowId>/<activityId>`: the same for every attempt of one call. */
  idempotencyKey: string;
  attempt: number;
  pid: number;
  /** `Date.now()` when it was written. */
  at: number;
}

export type ToolActivity = (input: ToolActivityInput) => Promise<ToolActivityResult>;

type InputSchema = ReturnType<typeof describeTool>['input_schema'];

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

  const activities: Record<string, ToolActivity> = {};
  for (const tool of tools) {
    // Rendered once per worker, not per call: legacy XML parameters arrive as text and are coerced against it.
    const schema = describeTool(tool).input_schema;
    activities[tool.name] = (input) => runTool(tool, schema, input, options);
  }
  return { describeTools, ...activities };
}

async function runTool(
  tool: ToolDefinition,
  schema: InputSchema,
  call: ToolActivityInput,
  options: ToolActivityOptions,
): Promise<ToolActivityResult> {
  const context = Context.current();
  const { workflowExecution, activityId, attempt } = context.info;
  const idempotencyKey = `${workflowExecution?.workflowId ?? 'standalone'}/${activityId}`;

  const parsed = parseInput(tool, schema, call);
  if (!parsed.ok) return { ok: false, content: parsed.error };

  log(options, { event: 'start', tool: tool.name, idempotencyKey, attempt });
  // Heartbeats while the tool runs, so a worker that dies mid-call is noticed within the heartbeat timeout.
  const stopHeartbeats = keepAlive(context);
  try {
    if (options.latencyMs) await context.sleep(options.latencyMs);
    const value = await tool.run(parsed.value, {
      idempotencyKey,
      attempt,
      signal: context.cancellationSignal,
      heartbeat: (details) => context.heartbeat(details),
    });
    log(options, { event: 'finish', tool: tool.name, idempotencyKey, attempt });
    return { ok: true, content: truncate(render(value), options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS) };
  } catch (err) {
    log(options, { event: 'error', tool: tool.name, idempotencyKey, attempt });
    if (err instanceof ToolError) {
      throw ApplicationFailure.create({ type: err.name, message: err.message, nonRetryable: !err.retryable });
    }
    throw err; // unexpected: retried by the tool's policy, then reported to the model
  } finally {
    stopHeartbeats();
  }
}

function parseInput(tool: ToolDefinition, schema: InputSchema, call: ToolActivityInput): { ok: true; value: z.infer<ToolDefinition['input']> } | { ok: false; error: string } {
  let input: Record<string, unknown> = call.input;
  if (call.encoding === 'xml-text') {
    const coerced = coerceParameters(input as Record<string, string>, schema);
    if (!coerced.ok) return { ok: false, error: `InvalidInput: ${coerced.error}` };
    input = coerced.value;
  }
  const result = tool.input.safeParse(input);
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

function log(options: ToolActivityOptions, entry: Omit<ExecutionLogLine, 'pid' | 'at'>): void {
  if (!options.executionLog) return;
  const line: ExecutionLogLine = { ...entry, pid: process.pid, at: Date.now() };
  appendFileSync(options.executionLog, `${JSON.stringify(line)}\n`);
}
