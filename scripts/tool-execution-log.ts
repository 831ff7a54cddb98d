// Instrumentation for the test rigs (crash tests, soak, bench): an activity interceptor that appends one JSON line
// per tool execution start and end to a file, so a process outside the worker can count how often each tool call
// ran, and optionally makes every tool slower, or its output larger (long chains that fill a context window). Not
// part of the product's tool runtime.
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { Context } from '@temporalio/activity';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, Next } from '@temporalio/worker';
import type { ToolActivityInput, ToolActivityResult } from '../common/activity-contracts';
import { MODEL_ACTIVITY, RESERVED_ACTIVITY_NAMES } from '../common/activity-contracts';
import { CALL_MCP_TOOL_ACTIVITY, type McpToolCallInput } from '../common/mcp';

/** One line of the execution log: a tool run starting and how it ended, keyed like the tool's idempotency key. */
export interface ExecutionLogLine {
  event: 'start' | 'finish' | 'error';
  /** The activity type; for an MCP call, `server/tool`. */
  tool: string;
  /** The same for every attempt of one call (ToolActivityInput.idempotencyKey). */
  idempotencyKey: string;
  attempt: number;
  pid: number;
  /** `Date.now()` when it was written. */
  at: number;
}

export interface ToolInstrumentation {
  /** Append the lines here. */
  executionLog?: string;
  /** Wait this long before every tool execution (heartbeating), in milliseconds. */
  latencyMs?: number;
  /** Pad every successful tool output to at least this many characters (readings appended, like a long report). */
  outputChars?: number;
}

/** `interceptors: { activity: [toolInstrumentation(options)] }` on a worker. */
export function toolInstrumentation(options: ToolInstrumentation) {
  return (): { inbound: ActivityInboundCallsInterceptor } => ({
    inbound: {
      async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>) {
        const context = Context.current();
        const type = context.info.activityType;
        const mcp = type === CALL_MCP_TOOL_ACTIVITY ? (input.args[0] as McpToolCallInput) : undefined;
        if (!mcp && (RESERVED_ACTIVITY_NAMES.includes(type) || type === MODEL_ACTIVITY)) return next(input);
        const tool = mcp ? `${mcp.server}/${mcp.tool}` : type;
        const { idempotencyKey } = input.args[0] as ToolActivityInput;
        const line = (event: ExecutionLogLine['event']) =>
          options.executionLog &&
          appendFileSync(
            options.executionLog,
            `${JSON.stringify({ event, tool, idempotencyKey, attempt: context.info.attempt, pid: process.pid, at: Date.now() } satisfies ExecutionLogLine)}\n`,
          );
        line('start');
        try {
          if (options.latencyMs) await heartbeatingSleep(context, options.latencyMs);
          const result = await next(input);
          line('finish');
          return options.outputChars ? padded(result as ToolActivityResult, options.outputChars) : result;
        } catch (err) {
          line('error');
          throw err;
        }
      },
    },
  });
}

/** The output with numbered readings appended until it is `chars` characters long (invalid input stays as it is). */
export function padded(result: ToolActivityResult, chars: number): ToolActivityResult {
  if (!result.ok || result.content.length >= chars) return result;
  let content = `${result.content}\nDetailed readings:`;
  for (let i = 1; content.length < chars; i++) {
    content += `\nreading ${String(i).padStart(5, '0')}: 14.${i % 10} C, humidity ${40 + (i % 50)}%, wind ${i % 30} km/h`;
  }
  return { ...result, content: content.slice(0, chars) };
}

async function heartbeatingSleep(context: Context, ms: number): Promise<void> {
  const timer = setInterval(() => context.heartbeat(), 1_000);
  try {
    await context.sleep(ms);
  } finally {
    clearInterval(timer);
  }
}

/** An execution log's lines, of one conversation (its idempotency keys start with the workflow id) and tool if given. */
export function readExecutions(path: string, workflowId?: string, tool?: string): ExecutionLogLine[] {
  if (!existsSync(path)) return [];
  const lines = readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ExecutionLogLine);
  return lines.filter(
    (e) =>
      (workflowId === undefined || e.idempotencyKey.startsWith(`${workflowId}/`)) &&
      (tool === undefined || e.tool === tool),
  );
}
