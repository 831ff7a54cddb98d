// The messages a conversation workflow answers (updates, queries, the end signal) and a schema for each one's
// arguments. The client and the workflow import the same definitions, so a name is written once, and the workflow
// checks every argument with these schemas whoever sent it (the Temporal CLI and the Web UI can send anything).
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { z } from 'zod';
import type { ModelContext } from './activity-contracts';
import { streamSchemas } from '../streaming/stream-event-schema';

import { MAX_POLL_WAIT_MS, type PollRequest, type StreamPage } from '../streaming/stream-events';
import {
  type ApprovalDecision,
  type ConversationSnapshot,
  MAX_USER_MESSAGE_CHARS,
  type SubmittedMessage,
  type TurnOutcome,
} from './conversation-types';
import { agentLineageSchema } from './agents';
import { type ForkAt, forkedFromSchema, type ForkPoint, turnStartsSchema } from './fork';
import { contextAccountingSchema } from './context-accounting';
import { INPUT_FORMAT } from './input-format';
import { conversationOptionsSchema } from './options';
import { outputSpecSchema } from './structured-output';
import { batchOptionSchema } from './batch-mode';
import { prioritySchema } from './fairness';
import { wellFormedText } from './safe-text';
import { sharedLazy, sharedOnce } from './shared-once';
import { recordedUsageSchema } from './usage';

/**
 * What one message may ask besides its text: a typed answer of its own (common/structured-output.ts), batch mode
 * for its turn (common/batch-mode.ts), and its turn's priority (common/fairness.ts).
 */
export const messageOptionsSchema = sharedOnce('workflowMessages.messageOptionsSchema', () =>
  z
    .strictObject({
      output: outputSpecSchema.optional(),
      batch: batchOptionSchema.optional(),
      priority: prioritySchema.optional(),
    })
    .optional(),
);
export type MessageOptions = z.input<typeof messageOptionsSchema>;

export const sendMessageUpdate = defineUpdate<TurnOutcome, [text: string, options?: MessageOptions]>('sendMessage');
export const awaitTurnUpdate = defineUpdate<TurnOutcome, [turn: number]>('awaitTurn');
export const approveToolCallUpdate = defineUpdate<void, [decision: ApprovalDecision]>('approveToolCall');
export const endConversationSignal = defineSignal('endConversation');
/**
 * Queues a user message and answers at once with its turn number and the stream offset its events start after (read
 * them with the conversation's event stream); `sendMessage` answers when the turn is done.
 */
export const submitMessageUpdate = defineUpdate<SubmittedMessage, [text: string, options?: MessageOptions]>(
  'submitMessage',
);
export const stateQuery = defineQuery<ConversationSnapshot>('getState');
export const transcriptQuery = defineQuery<MessageParam[], [range?: TranscriptRange]>('getTranscript');
/** The event log from an offset, read without an update (nothing in the history): readers use it while a turn runs. */
export const streamEventsQuery = defineQuery<StreamPage, [from: number]>('getStreamEvents');
export const streamOffsetSchema = sharedOnce('workflowMessages.streamOffsetSchema', () =>
  z.number({ error: 'An offset is a number.' }).int().min(0),
);
/**
 * The log's long poll: events from `from`, waiting at most `waitMs` for the first (streaming/stream-events.ts). Only the
 * workflow writes into the log; this reads it.
 */
export const pollEventsUpdate = defineUpdate<StreamPage, [request: PollRequest]>('pollEvents');
export const pollRequestSchema = sharedOnce(
  'workflowMessages.pollRequestSchema',
  () =>
    z.strictObject({
      from: streamOffsetSchema,
      waitMs: z.number().int().min(0).max(MAX_POLL_WAIT_MS).optional(),
    }) satisfies z.ZodType<PollRequest>,
);
/**
 * The conversation's state cut at a point (common/fork.ts): what a fork of it starts from. Answers a rejection
 * (InvalidForkPoint) for a point it has not got; `at` is checked with forkAtSchema.
 */
export const forkPointQuery = defineQuery<ForkPoint, [at: ForkAt]>('getForkPoint');
/** For the worker's model-call cache: the system prompt and the first `to` messages. */
export const modelContextQuery = defineQuery<ModelContext, [range: { to: number }]>('getModelContext');

export const userMessageSchema = sharedOnce('workflowMessages.userMessageSchema', () =>
  wellFormedText(MAX_USER_MESSAGE_CHARS, 'The message').refine((text) => text.trim() !== '', 'The message is empty.'),
);

/** A tool call's id as approvals name it: the model's tool_use id (the API's are ~30 characters). */
export const MAX_CALL_ID_CHARS = 256;

export const turnNumberSchema = sharedOnce('workflowMessages.turnNumberSchema', () =>
  z.number({ error: 'A turn is a number.' }).int().min(1),
);

export const approvalDecisionSchema = sharedOnce(
  'workflowMessages.approvalDecisionSchema',
  () =>
    z.strictObject({
      callId: wellFormedText(MAX_CALL_ID_CHARS, 'callId').refine((id) => id !== '', 'callId is empty.'),
      argumentsDigest: wellFormedText(128, 'argumentsDigest').refine(
        (digest) => digest !== '',
        'argumentsDigest is empty.',
      ),
      /** Only `true` runs the tool; anything that is not a boolean is refused, never read as a yes. */
      approve: z.boolean(),
      reason: wellFormedText(2_000, 'reason').optional(),
      agent: wellFormedText(1_000, 'agent').optional(),
    }) satisfies z.ZodType<ApprovalDecision>,
);

export const transcriptRangeSchema = sharedOnce('workflowMessages.transcriptRangeSchema', () =>
  z.strictObject({ from: z.number().int().min(0).optional(), to: z.number().int().min(0).optional() }).optional(),
);
export type TranscriptRange = z.infer<typeof transcriptRangeSchema>;

export const modelContextRangeSchema = sharedOnce('workflowMessages.modelContextRangeSchema', () =>
  z.strictObject({ to: z.number().int().min(0) }),
);

/**
 * A run's state as the previous run handed it over: only a run started by continue-as-new may have one (conversation.ts
 * refuses it otherwise), so it is built when a run first checks one (common/shared-once.ts). Checked for shape; its
 * messages were checked on their way in.
 */
const carriedStateSchema = sharedLazy('workflowMessages.carriedStateSchema', () => {
  const turnFailureSchema = z.strictObject({ type: z.string(), message: z.string() });

  /** Usage and cost per model (common/fallback-models.ts): a handful of models, by name. */
  const usageByModelSchema = z
    .record(
      z.string().min(1).max(256),
      z.strictObject({
        calls: z.number().int().min(0),
        usage: recordedUsageSchema,
        costUsd: z.number().min(0).nullable(),
      }),
    )
    .refine((byModel) => Object.keys(byModel).length <= 16, 'at most 16 models');

  /** A kept turn outcome, as `awaitTurn` answers it (TurnOutcome). */
  const turnOutcomeSchema = z.discriminatedUnion('kind', [
    z.strictObject({
      kind: z.literal('reply'),
      result: z.looseObject({
        turn: z.number().int().min(1),
        status: z.string(),
        text: z.string(),
        stopReason: z.string().nullable(),
        modelCalls: z.number().int().min(0),
        toolCalls: z.number().int().min(0),
        usage: recordedUsageSchema,
        costUsd: z.number().min(0).nullable().optional(), // absent in outcomes kept before costs were
      }),
    }),
    z.strictObject({ kind: z.literal('failed'), turn: z.number().int().min(1), failure: turnFailureSchema }),
    z.strictObject({ kind: z.literal('continued'), turn: z.number().int().min(1) }),
  ]);

  return z.strictObject({
    transcript: z.array(
      z.looseObject({
        role: z.enum(['user', 'assistant']),
        content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]),
      }),
    ),
    outcomes: z.array(turnOutcomeSchema),
    pendingMessages: z.array(
      z.strictObject({
        turn: z.number().int().min(1),
        text: z.string(),
        output: outputSpecSchema.optional(),
        batch: batchOptionSchema.optional(),
        priority: prioritySchema.optional(),
      }),
    ),
    currentTurn: z
      .strictObject({
        turn: z.number().int().min(1),
        modelCalls: z.number().int().min(0),
        toolCalls: z.number().int().min(0),
        usage: recordedUsageSchema,
        maxTokens: z.number().int().positive().optional(),
        costUsd: z.number().min(0).nullable().optional(),
        transcriptStart: z.number().int().min(0),
        output: outputSpecSchema.optional(),
        answerAttempts: z.number().int().min(0).optional(),
        forceAnswer: z.boolean().optional(),
        byModel: usageByModelSchema.optional(),
        batch: batchOptionSchema.optional(),
        priority: prioritySchema.optional(),
      })
      .optional(),
    nextTurn: z.number().int().min(1),
    modelCalls: z.number().int().min(0),
    toolCalls: z.number().int().min(0),
    usage: recordedUsageSchema,
    runs: z.number().int().min(1),
    lastText: z.string(),
    endRequested: z.boolean(),
    firstRunId: z.string().min(1),
    context: contextAccountingSchema.optional(),
    costUsd: z.number().min(0).nullable().optional(),
    lastCallUsage: recordedUsageSchema.optional(),
    container: z.strictObject({ id: z.string().min(1).max(512), expiresAt: z.string().max(64) }).optional(),
    byModel: usageByModelSchema.optional(),
    threadAnchor: z
      .strictObject({
        id: z.string().min(1).max(256),
        fingerprint: z.string().min(1).max(64),
        at: z.number().int().min(0).optional(),
      })
      .optional(),
    threadsUnsupported: z.literal(true).optional(),
    turnStarts: turnStartsSchema.optional(),
  });
});

/**
 * The conversation workflow's input. Anything missing gets its default, so `{}` (a start from the Temporal CLI or the
 * Web UI without arguments) is a conversation with default options that waits for its first message.
 */
export const conversationInputSchema = sharedOnce('workflowMessages.conversationInputSchema', () =>
  z.strictObject({
    /** The input's format (common/input-format.ts); a newer one never reaches this schema: the run waits for its build. */
    v: z.number().int().min(1).max(INPUT_FORMAT).optional(),
    options: conversationOptionsSchema.prefault({}),
    firstMessage: userMessageSchema.optional(),
    agent: agentLineageSchema.optional(),
    carried: z.lazy(carriedStateSchema).optional(),
    /** A fork's origin: with it, `carried` is the fork point's state (common/fork.ts). */
    forkedFrom: forkedFromSchema.optional(),
    /** The event log the previous run handed over; only a run started by continue-as-new may have one. */
    stream: z.lazy(() => streamSchemas().conversationStreamInputSchema).optional(),
  }),
);
