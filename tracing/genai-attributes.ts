// The OpenTelemetry GenAI semantic conventions (gen_ai.*, development status, as of semconv 1.37+) for one model call
// and one tool call, from the activities' own inputs and results. Pure: no OpenTelemetry import, unit-tested.
//
// Content (prompts, replies, tool arguments and results) is added only with `captureContent`; names, ids, token
// counts and finish reasons are metadata and always present.
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type {
  CallModelInput,
  CallModelResult,
  SummariseContextResult,
  ToolActivityInput,
  ToolActivityResult,
} from '../common/activity-contracts';
import type { ReplyBlock } from '../common/compaction';
import type { McpToolCallInput, McpToolCallResult } from '../common/mcp';

export type SpanAttributes = Record<string, string | number | boolean | string[]>;

export const GEN_AI = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  /** Deprecated in favour of gen_ai.provider.name (semconv 1.37); still what many backends group by. */
  system: 'gen_ai.system',
  requestModel: 'gen_ai.request.model',
  requestMaxTokens: 'gen_ai.request.max_tokens',
  responseModel: 'gen_ai.response.model',
  responseId: 'gen_ai.response.id',
  finishReasons: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  cacheCreationInputTokens: 'gen_ai.usage.cache_creation.input_tokens',
  conversationId: 'gen_ai.conversation.id',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  // Content: opt-in only.
  systemInstructions: 'gen_ai.system_instructions',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  toolCallResult: 'gen_ai.tool.call.result',
} as const;

/** Attributes that carry content: never on a span unless content capture is on. */
export const CONTENT_ATTRIBUTES: readonly string[] = [
  GEN_AI.systemInstructions,
  GEN_AI.inputMessages,
  GEN_AI.outputMessages,
  GEN_AI.toolCallArguments,
  GEN_AI.toolCallResult,
];

export const ERROR_TYPE = 'error.type';
/** Which attempt of the activity this span is (1 = first): retries show as sibling spans with rising attempts. */
export const ATTEMPT = 'temporal.activity.attempt';
export const PROVIDER = 'anthropic';

/** `chat {model}`: the span name the conventions give an inference call. */
export function modelCallSpanName(input: CallModelInput): string {
  return `chat ${input.request.model}`;
}

/** `conversationId`: the workflow the call serves (its activity's; inputs recorded by 0.1.0 name it too). */
export function modelRequestAttributes(
  input: CallModelInput,
  conversationId: string | undefined,
  captureContent: boolean,
): SpanAttributes {
  return {
    [GEN_AI.operationName]: 'chat',
    [GEN_AI.providerName]: PROVIDER,
    [GEN_AI.system]: PROVIDER,
    [GEN_AI.requestModel]: input.request.model,
    [GEN_AI.requestMaxTokens]: input.request.maxTokens,
    ...((conversationId ?? input.conversation?.workflowId) !== undefined && {
      [GEN_AI.conversationId]: conversationId ?? input.conversation?.workflowId,
    }),
    ...(captureContent && {
      // Only what this call adds: the earlier transcript was on the spans of the calls before it.
      [GEN_AI.inputMessages]: JSON.stringify(input.newMessages.map(messageOf)),
      ...(input.fullContext?.system !== undefined && {
        [GEN_AI.systemInstructions]: JSON.stringify([{ type: 'text', content: input.fullContext.system }]),
      }),
    }),
  };
}

export function modelResponseAttributes(result: CallModelResult, captureContent: boolean): SpanAttributes {
  return {
    [GEN_AI.responseModel]: result.model,
    [GEN_AI.responseId]: result.id,
    [GEN_AI.finishReasons]: [result.stop_reason ?? 'unknown'],
    [GEN_AI.inputTokens]: result.usage.inputTokens,
    [GEN_AI.outputTokens]: result.usage.outputTokens,
    [GEN_AI.cacheReadInputTokens]: result.usage.cacheReadInputTokens,
    [GEN_AI.cacheCreationInputTokens]: result.usage.cacheCreationInputTokens,
    ...(captureContent && {
      [GEN_AI.outputMessages]: JSON.stringify([
        {
          role: 'assistant',
          parts: result.content.map(partOf),
          finish_reason: result.stop_reason ?? 'unknown',
        },
      ]),
    }),
  };
}

/** The orchestrator's own compaction call (a summary): its id and usage; the summary is content. */
export function summaryResponseAttributes(result: SummariseContextResult): SpanAttributes {
  return {
    [GEN_AI.responseId]: result.id,
    [GEN_AI.inputTokens]: result.usage.inputTokens,
    [GEN_AI.outputTokens]: result.usage.outputTokens,
  };
}

/** `execute_tool {name}`. */
export function toolCallSpanName(toolName: string): string {
  return `execute_tool ${toolName}`;
}

/** `activityId`: the tool activity's id, `tool-<the model's tool_use id>` (workflows/run-tool-calls.ts). */
export function toolRequestAttributes(
  toolName: string,
  input: ToolActivityInput | McpToolCallInput,
  activityId: string,
  captureContent: boolean,
): SpanAttributes {
  const args = 'arguments' in input ? input.arguments : input.input;
  return {
    [GEN_AI.operationName]: 'execute_tool',
    [GEN_AI.toolName]: toolName,
    [GEN_AI.toolType]: 'function',
    [GEN_AI.toolCallId]: callIdOf(activityId, input.idempotencyKey),
    ...('server' in input && { 'mcp.server.name': input.server }),
    ...(captureContent && { [GEN_AI.toolCallArguments]: JSON.stringify(args) }),
  };
}

export function toolResultAttributes(
  result: ToolActivityResult | McpToolCallResult,
  captureContent: boolean,
): SpanAttributes {
  return {
    ...(!result.ok && { [ERROR_TYPE]: 'tool_error' }),
    ...(captureContent && {
      [GEN_AI.toolCallResult]: typeof result.content === 'string' ? result.content : JSON.stringify(result.content),
    }),
  };
}

/**
 * The model's tool_use id: the tool activity's id less its `tool-` prefix. (The idempotency key ends with the call's
 * ref, `<model call>-<place>`, since model ids became untrusted input; runs begun before that ended it with the id.)
 */
export function callIdOf(activityId: string, idempotencyKey: string | undefined): string {
  if (activityId.startsWith(TOOL_ACTIVITY_PREFIX)) return activityId.slice(TOOL_ACTIVITY_PREFIX.length);
  if (typeof idempotencyKey !== 'string') return '';
  return idempotencyKey.slice(idempotencyKey.lastIndexOf('/') + 1);
}

const TOOL_ACTIVITY_PREFIX = 'tool-';

function messageOf(message: MessageParam) {
  const blocks = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
  return { role: message.role, parts: blocks.map((block) => partOf(block as ReplyBlock)) };
}

/** An Anthropic content block as a semconv message part (text, tool_call, tool_call_response), else as it is. */
function partOf(block: ReplyBlock | { type: string; [key: string]: unknown }): Record<string, unknown> {
  const b = block as { type: string; text?: string; id?: string; name?: string; input?: unknown } & {
    tool_use_id?: string;
    content?: unknown;
  };
  if (b.type === 'text') return { type: 'text', content: b.text };
  if (b.type === 'tool_use') return { type: 'tool_call', id: b.id, name: b.name, arguments: b.input };
  if (b.type === 'tool_result') return { type: 'tool_call_response', id: b.tool_use_id, response: b.content };
  return { ...b };
}
