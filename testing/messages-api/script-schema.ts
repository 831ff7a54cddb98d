// Scripts that arrive as data — over HTTP (`POST /_test/scripts`) or from a file (`MESSAGES_API_SCRIPT_FILE`) — for a
// worker in another process: checked with zod against the same shapes tests build in code (types.ts), so a typo in a
// script file is a clear error naming its path, not a demo reply.
import { z } from 'zod';
import { SERVER_RESULT_TYPES } from './server-tools';
import type { ScriptStep } from './types';

const usage = z.strictObject({
  input_tokens: z.number().int().min(0).optional(),
  output_tokens: z.number().int().min(0).optional(),
  cache_creation_input_tokens: z.number().int().min(0).optional(),
  cache_read_input_tokens: z.number().int().min(0).optional(),
});
const delay = z.number().min(0).max(600_000).optional();

const block = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text'), text: z.string() }),
  z.strictObject({
    type: z.literal('tool_use'),
    id: z.string().optional(),
    name: z.string(),
    input: z.unknown().optional(),
    inputJson: z.string().optional(),
  }),
  z.strictObject({ type: z.literal('json'), value: z.unknown() }),
  z.strictObject({ type: z.literal('thinking'), thinking: z.string() }),
  z.strictObject({ type: z.literal('redacted_thinking'), thinking: z.string().optional() }),
  z.strictObject({
    type: z.literal('server_tool_use'),
    id: z.string().optional(),
    name: z.string(),
    input: z.unknown(),
  }),
  ...SERVER_RESULT_TYPES.map((type) =>
    z.strictObject({ type: z.literal(type), tool_use_id: z.string().optional(), content: z.unknown() }),
  ),
]);

const step = z.union([
  z.strictObject({
    reply: z.strictObject({
      content: z.array(block),
      stop_reason: z.string().nullable(),
      stop_sequence: z.string().nullable().optional(),
      usage: usage.optional(),
    }),
    delayMs: delay,
    tokenDelayMs: delay,
  }),
  z.strictObject({ demo: z.literal(true), delayMs: delay, tokenDelayMs: delay }),
  z.strictObject({
    fault: z.literal('status'),
    status: z.number().int().min(400).max(599),
    errorType: z.string().optional(),
    message: z.string().optional(),
    headers: z.record(z.string(), z.string()).optional(),
    delayMs: delay,
  }),
  z.strictObject({ fault: z.literal('connection-reset'), delayMs: delay }),
  z.strictObject({
    fault: z.literal('batch-result'),
    result: z.enum(['expired', 'malformed', 'unknown_custom_id']),
    delayMs: delay,
  }),
  z.strictObject({
    fault: z.literal('stream-error'),
    afterBlocks: z.number().int().min(0).optional(),
    errorType: z.string().optional(),
    message: z.string().optional(),
    delayMs: delay,
    tokenDelayMs: delay,
    text: z.string().optional(),
    usage: usage.optional(),
  }),
  z.strictObject({
    fault: z.literal('thread'),
    error: z.enum([
      'thread_not_found',
      'thread_already_continued',
      'thread_continue_in_flight',
      'thread_fingerprint_mismatch',
      'thread_unsupported_request',
    ]),
    message: z.string().optional(),
    unsupported: z.array(z.string()).optional(),
    delayMs: delay,
  }),
  z.strictObject({
    fault: z.literal('truncated-tool-use'),
    text: z.string().optional(),
    tool: z.strictObject({ name: z.string(), input: z.record(z.string(), z.unknown()) }),
    cutAt: z.number().int().min(0).optional(),
    delayMs: delay,
  }),
]);

/** `POST /_test/scripts`: steps for the conversations whose first user message contains `match`. */
export const scriptRequestSchema = z.strictObject({ match: z.string().min(1), steps: z.array(step).min(1) });

/** A script file: match → steps, in the order given. */
export const scriptFileSchema = z.record(z.string().min(1), z.array(step).min(1));

// What the schemas accept is a ScriptStep (tests write those in code): a step these let through that ScriptStep does
// not allow fails to compile here.
export const asScriptSteps = (steps: z.infer<typeof step>[]): ScriptStep[] => steps;

/** The problems of a rejected script, one per line, each naming where it is. */
export function scriptProblems(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('\n');
}
