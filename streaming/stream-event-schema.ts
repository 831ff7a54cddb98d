// Schemas of the conversation's event log as one run hands it to the next (continue-as-new): the events themselves
// (StreamEvent, checked field by field) and the two formats a run may be started with — this version's plain JSON
// events, and the WorkflowStreamState of @temporalio/workflow-streams that version 0.1.0 carried (base64 payloads the
// workflow does not decode: it keeps only their offsets). Only a run started by continue-as-new may carry a log
// (streaming/workflow/conversation-stream.ts checks that); whatever it carries is checked here as strictly as any input.
import type { StopReason } from '@anthropic-ai/sdk/resources/messages';
import { z } from 'zod';
import { FINAL_STATUSES, OPEN_STATUSES } from '../common/conversation-types';
import type { StreamEvent } from './stream-events';
import { sharedLazy } from '../common/shared-once';
import { recordedUsageSchema } from '../common/usage';

/** How many events a carried log may hold (the carried bytes are bounded by maxCarriedBytes long before). */
export const MAX_CARRIED_EVENTS = 100_000;

/** The schemas, built when a run first checks a carried log (common/shared-once.ts): most runs never do. */
export const streamSchemas = sharedLazy('streamEventSchema.streamSchemas', () => {
  const count = z.number().int().min(0);
  const text = z.string();
  const statusSchema = z.enum([...OPEN_STATUSES, ...FINAL_STATUSES]);
  // The API may add stop reasons before the SDK's type names them: any short string the model call returned.
  const stopReasonSchema = z.custom<StopReason>((value) => typeof value === 'string' && value.length <= 100).nullable();
  const failureSchema = z.strictObject({ type: text, message: text });
  const costSchema = z.number().min(0).nullable().optional();
  const attempt = { call: count, attempt: z.number().int().min(1) };
  const modelName = z.string().min(1).max(256);
  /** A tool call with its whole input: the worker's tools' and the API's own (server tools) alike. */
  const toolCall = { ...attempt, block: count, id: text, name: text, input: z.unknown() };

  const streamEventSchema = z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('turn_started'), turn: count, text }),
    z.strictObject({ type: z.literal('model_call_started'), call: count, model: modelName.optional() }),
    z.strictObject({ type: z.literal('text'), ...attempt, block: count, at: count, text }),
    z.strictObject({
      type: z.literal('thinking'),
      ...attempt,
      block: count,
      at: count,
      text,
      redacted: z.literal(true).optional(),
    }),
    z.strictObject({ type: z.literal('tool_call_started'), ...attempt, block: count, id: text, name: text }),
    z.strictObject({ type: z.literal('tool_call_input'), ...toolCall }),
    z.strictObject({ type: z.literal('server_tool_call'), ...toolCall }),
    z.strictObject({
      type: z.literal('server_tool_result'),
      ...attempt,
      block: count,
      toolUseId: text,
      name: text,
      error: text.optional(),
    }),
    z.strictObject({
      type: z.literal('model_output_discarded'),
      call: count,
      attempt: z.number().int().min(1).optional(),
      reason: z.enum(['retried', 'failed', 'max_tokens']),
    }),
    z.strictObject({
      type: z.literal('model_call_finished'),
      call: count,
      stopReason: stopReasonSchema,
      usage: recordedUsageSchema,
      costUsd: costSchema,
      model: modelName.optional(),
    }),
    z.strictObject({
      type: z.literal('approval_requested'),
      approval: z.strictObject({
        callId: text,
        tool: text,
        input: z.record(z.string(), z.unknown()),
        argumentsDigest: text,
        requestedAt: text,
        agent: text.optional(),
      }),
    }),
    z.strictObject({
      type: z.literal('approval_settled'),
      callId: text,
      outcome: z.enum(['approved', 'rejected', 'timed_out']),
      agent: text.optional(),
    }),
    z.strictObject({ type: z.literal('agent_started'), callId: text, tool: text, agentId: text, task: text }),
    z.strictObject({
      type: z.literal('agent_finished'),
      callId: text,
      tool: text,
      agentId: text,
      status: text,
      isError: z.boolean(),
      usage: recordedUsageSchema.optional(),
      costUsd: costSchema,
    }),
    z.strictObject({
      type: z.literal('tool_result'),
      id: text,
      name: text,
      isError: z.boolean(),
      content: text,
      truncated: z.boolean().optional(),
    }),
    z.strictObject({
      type: z.literal('turn_finished'),
      turn: count,
      status: statusSchema,
      text,
      stopReason: stopReasonSchema,
      usage: recordedUsageSchema,
      output: z.unknown().optional(),
      costUsd: costSchema,
    }),
    z.strictObject({ type: z.literal('turn_failed'), turn: count, failure: failureSchema }),
    z.strictObject({ type: z.literal('conversation_ended'), status: statusSchema }),
  ]) satisfies z.ZodType<StreamEvent>;

  /** The log as this version hands it over: the offset of the first kept event, and the kept events. */
  const carriedStreamSchema = z.strictObject({
    base: count,
    events: z.array(streamEventSchema).max(MAX_CARRIED_EVENTS),
  });

  /**
   * The log as version 0.1.0 handed it over (WorkflowStreamState): its items are base64 protobuf Payloads, which
   * workflow code does not decode; a run started with one keeps the offsets only (the next event's offset is
   * `base_offset + log.length`), so readers go on from there with nothing repeated.
   */
  const legacyCarriedStreamSchema = z.strictObject({
    log: z
      .array(z.strictObject({ topic: z.string().max(256), data: z.string(), offset: count }))
      .max(MAX_CARRIED_EVENTS),
    base_offset: count,
    publisher_sequences: z.record(z.string(), count),
    publisher_last_seen: z.record(z.string(), z.number().min(0)),
  });

  const conversationStreamInputSchema = z.union([carriedStreamSchema, legacyCarriedStreamSchema]);
  return { streamEventSchema, carriedStreamSchema, legacyCarriedStreamSchema, conversationStreamInputSchema };
});
type StreamSchemas = ReturnType<typeof streamSchemas>;

export type CarriedStream = z.infer<StreamSchemas['carriedStreamSchema']>;
export type LegacyCarriedStream = z.infer<StreamSchemas['legacyCarriedStreamSchema']>;
export type ConversationStreamInput = z.infer<StreamSchemas['conversationStreamInputSchema']>;
