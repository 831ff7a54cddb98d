// A span per model call (`chat {model}`) and per tool call (`execute_tool {name}`) with the GenAI attributes
// (genai-attributes.ts), as a child of the RunActivity span that Temporal's interceptor opens around the same attempt.
// It reads the activities' inputs and results, so the activities themselves know nothing of tracing.
import * as otel from '@opentelemetry/api';
import type { Context } from '@temporalio/activity';
import type {
  ActivityExecuteInput,
  ActivityInboundCallsInterceptor,
  ActivityInterceptorsFactory,
  Next,
} from '@temporalio/worker';
import {
  type CallModelInput,
  type CallModelResult,
  DESCRIBE_TOOLS_ACTIVITY,
  LIST_TOOLS_ACTIVITY,
  MODEL_ACTIVITY,
  SUMMARISE_ACTIVITY,
  type SummariseContextResult,
  type ToolActivityInput,
  type ToolActivityResult,
} from '../common/activity-contracts';
import {
  CALL_MCP_TOOL_ACTIVITY,
  LIST_MCP_SERVERS_ACTIVITY,
  LIST_MCP_TOOLS_ACTIVITY,
  type McpToolCallInput,
  type McpToolCallResult,
} from '../common/mcp';
import {
  ATTEMPT,
  ERROR_TYPE,
  modelCallSpanName,
  modelRequestAttributes,
  modelResponseAttributes,
  type SpanAttributes,
  summaryResponseAttributes,
  toolCallSpanName,
  toolRequestAttributes,
  toolResultAttributes,
} from './genai-attributes';

/** Bookkeeping activities: traced by Temporal's interceptor only. */
const NOT_GENAI = new Set([
  DESCRIBE_TOOLS_ACTIVITY,
  LIST_TOOLS_ACTIVITY,
  LIST_MCP_SERVERS_ACTIVITY,
  LIST_MCP_TOOLS_ACTIVITY,
]);

export function genAiActivityInterceptor(tracer: otel.Tracer, captureContent: boolean): ActivityInterceptorsFactory {
  return (ctx) => ({ inbound: new GenAiActivityInbound(ctx, tracer, captureContent) });
}

class GenAiActivityInbound implements ActivityInboundCallsInterceptor {
  constructor(
    private readonly ctx: Context,
    private readonly tracer: otel.Tracer,
    private readonly captureContent: boolean,
  ) {}

  execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const type = this.ctx.info.activityType;
    const content = this.captureContent;
    if (type === MODEL_ACTIVITY || type === SUMMARISE_ACTIVITY) {
      const call = input.args[0] as CallModelInput;
      return this.span(
        modelCallSpanName(call),
        otel.SpanKind.CLIENT,
        modelRequestAttributes(call, content),
        () => next(input),
        (result) =>
          type === MODEL_ACTIVITY
            ? modelResponseAttributes(result as CallModelResult, content)
            : summaryResponseAttributes(result as SummariseContextResult),
      );
    }
    if (NOT_GENAI.has(type)) return next(input);
    const name = type === CALL_MCP_TOOL_ACTIVITY ? (input.args[0] as McpToolCallInput).tool : type;
    const call = input.args[0] as ToolActivityInput | McpToolCallInput;
    return this.span(
      toolCallSpanName(name),
      otel.SpanKind.INTERNAL,
      toolRequestAttributes(name, call, content),
      () => next(input),
      (result) => toolResultAttributes(result as ToolActivityResult | McpToolCallResult, content),
    );
  }

  private span(
    name: string,
    kind: otel.SpanKind,
    attributes: SpanAttributes,
    run: () => Promise<unknown>,
    resultAttributes: (result: unknown) => SpanAttributes,
  ): Promise<unknown> {
    const attempt = { [ATTEMPT]: this.ctx.info.attempt };
    return this.tracer.startActiveSpan(name, { kind, attributes: { ...attributes, ...attempt } }, async (span) => {
      try {
        const result = await run();
        const more = resultAttributes(result);
        span.setAttributes(more);
        if (more[ERROR_TYPE] !== undefined) span.setStatus({ code: otel.SpanStatusCode.ERROR });
        return result;
      } catch (err) {
        // The failure's type only: its message may quote the model's input or a tool's output.
        span.setAttribute(ERROR_TYPE, failureType(err));
        span.setStatus({ code: otel.SpanStatusCode.ERROR });
        throw err;
      } finally {
        span.end();
      }
    });
  }
}

function failureType(err: unknown): string {
  if (err && typeof err === 'object') {
    const failure = err as { type?: unknown; name?: unknown };
    if (typeof failure.type === 'string' && failure.type) return failure.type;
    if (typeof failure.name === 'string' && failure.name) return failure.name;
  }
  return 'Error';
}
