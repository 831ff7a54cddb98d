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
  MODEL_ACTIVITY,
  RESERVED_ACTIVITY_NAMES,
  SUMMARISE_ACTIVITY,
  type SummariseContextResult,
  type ToolActivityInput,
  type ToolActivityResult,
} from '../common/activity-contracts';
import { CALL_MCP_TOOL_ACTIVITY, type McpToolCallInput, type McpToolCallResult } from '../common/mcp';
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

/**
 * The orchestrator's own activities that are a model or tool call; its others (tool lists, token counts, prices) are
 * traced by Temporal's interceptor only, and every other activity is a tool.
 */
const GENAI_RESERVED = new Set([MODEL_ACTIVITY, SUMMARISE_ACTIVITY, CALL_MCP_TOOL_ACTIVITY]);

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
    // Temporal's RunActivity span, around this attempt: it records the failure's message (taken off when content is
    // off, tracing-sdk.ts), so it gets the failure's type here, which its exception event cannot name.
    const attempt = otel.trace.getActiveSpan();
    const run = () =>
      next(input).catch((err: unknown) => {
        attempt?.setAttribute(ERROR_TYPE, failureType(err));
        throw err;
      });
    // Tracing never fails a call: a span that cannot be described is left out, and the activity runs as it is.
    let span: SpanPlan | undefined;
    try {
      span = this.plan(type, input.args[0], content);
    } catch {
      span = undefined;
    }
    return span ? this.span(span, run) : run();
  }

  private plan(type: string, arg: unknown, content: boolean): SpanPlan | undefined {
    if (type === MODEL_ACTIVITY || type === SUMMARISE_ACTIVITY) {
      const call = arg as CallModelInput;
      return {
        name: modelCallSpanName(call),
        kind: otel.SpanKind.CLIENT,
        attributes: modelRequestAttributes(call, this.ctx.info.workflowExecution?.workflowId, content),
        resultAttributes: (result) =>
          type === MODEL_ACTIVITY
            ? modelResponseAttributes(result as CallModelResult, content)
            : summaryResponseAttributes(result as SummariseContextResult),
      };
    }
    if (RESERVED_ACTIVITY_NAMES.includes(type) && !GENAI_RESERVED.has(type)) return undefined;
    const name = type === CALL_MCP_TOOL_ACTIVITY ? (arg as McpToolCallInput).tool : type;
    return {
      name: toolCallSpanName(name),
      kind: otel.SpanKind.INTERNAL,
      attributes: toolRequestAttributes(
        name,
        arg as ToolActivityInput | McpToolCallInput,
        this.ctx.info.activityId,
        content,
      ),
      resultAttributes: (result) => toolResultAttributes(result as ToolActivityResult | McpToolCallResult, content),
    };
  }

  private span(plan: SpanPlan, run: () => Promise<unknown>): Promise<unknown> {
    const attributes = { ...plan.attributes, [ATTEMPT]: this.ctx.info.attempt };
    return this.tracer.startActiveSpan(plan.name, { kind: plan.kind, attributes }, async (span) => {
      try {
        const result = await run();
        try {
          const more = plan.resultAttributes(result);
          span.setAttributes(more);
          if (more[ERROR_TYPE] !== undefined) span.setStatus({ code: otel.SpanStatusCode.ERROR });
        } catch {
          // an unexpected result shape: the span keeps what it has
        }
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

interface SpanPlan {
  name: string;
  kind: otel.SpanKind;
  attributes: SpanAttributes;
  resultAttributes: (result: unknown) => SpanAttributes;
}

function failureType(err: unknown): string {
  if (err && typeof err === 'object') {
    const failure = err as { type?: unknown; name?: unknown };
    if (typeof failure.type === 'string' && failure.type) return failure.type;
    if (typeof failure.name === 'string' && failure.name) return failure.name;
  }
  return 'Error';
}
