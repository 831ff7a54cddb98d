// Every argument of the client's public calls, checked before anything goes to Temporal. A bad one is a
// ConversationError (`invalid_options`, or `invalid_message` for a message's text) naming the call, the argument and
// what is wrong — never the value, which may be huge or not even encodable. Unchecked, NaN as a timeout made gRPC
// throw where no caller could catch it (the process died), a string as a date threw a TypeError, an id with a NUL
// started a conversation no command line can name.
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import { conversationIdSchema } from '../common/conversation-id';
import { conversationOptionsSchema } from '../common/options';
import { isWellFormed, unprintable } from '../common/safe-text';
import { FINAL_STATUSES, OPEN_STATUSES } from '../common/conversation-types';
import {
  approvalDecisionSchema,
  transcriptRangeSchema,
  turnNumberSchema,
  userMessageSchema,
} from '../common/workflow-messages';
import { parseCursor } from '../streaming/client/stream-cursor';
import { ConversationError, type ConversationErrorCode } from './errors';

/** The longest wait a timer (and gRPC's deadline) can take: 2^31 - 1 ms, about 24.8 days. */
export const MAX_WAIT_MS = 2 ** 31 - 1;
/** Temporal's limit for ids of its own (update ids, task queues): `limit.maxIDLength`. */
const MAX_TEMPORAL_ID_CHARS = 1_000;
const MAX_SHOWN_ISSUES = 5;
const MAX_SHOWN_KEY_CHARS = 40;
const MAX_SHOWN_MESSAGE_CHARS = 300;

/** A string a person can read back: bounded, printable, well-formed. */
function printableString(what: string, max: number) {
  return z
    .string({ error: `${what} is a string` })
    .min(1, `${what} is not empty`)
    .max(max, { error: `${what} has at most ${max} characters`, abort: true })
    .superRefine((text, ctx) => {
      const problem = unprintable(text);
      if (problem) ctx.addIssue({ code: 'custom', message: `${what} is printable text; this one has ${problem}` });
    });
}

const timeoutMsSchema = z
  .number({ error: 'a timeout is a number of milliseconds' })
  .positive('a timeout is more than 0 ms')
  .max(MAX_WAIT_MS, `a timeout is at most ${MAX_WAIT_MS} ms (about 24.8 days)`);
const updateIdSchema = printableString('an update id', MAX_TEMPORAL_ID_CHARS);
/** An answer format is checked where it is turned into JSON Schema (answer-format.ts); here only its kind. */
const answerFormatSchema = z.custom<object>(
  (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
  'an answer format is an object: { schema, mode?, toolName? }',
);
const signalSchema = z.instanceof(AbortSignal, { error: 'a signal is an AbortSignal' });
const refreshSchema = z.boolean({ error: 'refresh is true or false' }).optional();
const namesSchema = z.array(z.string({ error: 'a name is a string' }), { error: 'a list of names' });

/** A plain object (`what`: how the message names it); undefined too when `optional`. */
export function objectArgument(what: string, optional = true) {
  return z.custom<Record<string, unknown> | undefined>(
    (value) =>
      (optional && value === undefined) || (typeof value === 'object' && value !== null && !Array.isArray(value)),
    `${what} is an object`,
  );
}
/** Options, or nothing. */
export const optionsObject = objectArgument('options');

export const waitOptionsSchema = z
  .strictObject({ timeoutMs: timeoutMsSchema.optional(), updateId: updateIdSchema.optional() })
  .optional();
/** A message call's `start`: a new conversation's options, checked in full where they are validated (the tools). */
const startOptionsSchema = objectArgument("start (a new conversation's options)");
export const submitOptionsSchema = z
  .strictObject({ start: startOptionsSchema.optional(), output: answerFormatSchema.optional() })
  .optional();
export const sendOptionsSchema = z
  .strictObject({
    start: startOptionsSchema.optional(),
    output: answerFormatSchema.optional(),
    timeoutMs: timeoutMsSchema.optional(),
    updateId: updateIdSchema.optional(),
  })
  .optional();
export const streamOptionsSchema = z
  .strictObject({
    start: startOptionsSchema.optional(),
    output: answerFormatSchema.optional(),
    signal: signalSchema.optional(),
  })
  .optional();
export const eventsOptionsSchema = z
  .strictObject({
    after: z
      .string({ error: 'a cursor is a string' })
      .max(100, { error: "a cursor is an event's `cursor`, a short string", abort: true })
      .refine((cursor) => parseCursor(cursor) !== undefined, "not a cursor: give an event's `cursor` as it came"),
    fromOffset: z
      .number({ error: 'an offset is a number' })
      .int('an offset is a whole number')
      .min(0, 'an offset is 0 or more')
      .max(Number.MAX_SAFE_INTEGER, 'an offset is a safe integer'),
    signal: signalSchema,
    liveIntervalMs: z
      .number({ error: 'an interval is a number of milliseconds' })
      .min(10, 'an interval is at least 10 ms')
      .max(60_000, 'an interval is at most 60,000 ms'),
  })
  .partial()
  .optional();
/** StartOptions.owner: who the conversation belongs to (the ConversationOwner search attribute). */
export const ownerSchema = printableString('an owner', 256);

export const listFilterSchema = z
  .strictObject({
    status: z.enum([...OPEN_STATUSES, ...FINAL_STATUSES], { error: 'not a conversation status' }),
    model: printableString('a model name', 256),
    owner: ownerSchema,
    startedAfter: z.date({ error: 'a date is a valid Date' }),
    startedBefore: z.date({ error: 'a date is a valid Date' }),
    limit: z
      .number({ error: 'a limit is a number' })
      .int('a limit is a whole number')
      .min(1, 'a limit is at least 1')
      .max(10_000, 'a limit is at most 10,000'),
  })
  .partial()
  .optional();
/** An approval as `approveToolCall` takes it: a state's PendingApproval with `approve` added is one too. */
export const approvalSchema = approvalDecisionSchema.superRefine((decision, ctx) => {
  const problem = unprintable(decision.callId);
  if (problem)
    ctx.addIssue({ code: 'custom', path: ['callId'], message: `a call id is printable; this one has ${problem}` });
  if (decision.reason !== undefined && !isWellFormed(decision.reason)) {
    ctx.addIssue({
      code: 'custom',
      path: ['reason'],
      message: 'a reason is well-formed text; this one has a lone surrogate',
    });
  }
});
/** The fields of a PendingApproval that an approval may carry along and that are dropped before it is sent. */
export const PENDING_APPROVAL_FIELDS = ['tool', 'input', 'requestedAt'] as const;

/** The Temporal Web UI as a browser reaches it (`http://localhost:8233`): conversations' links start with it. */
const webUiUrlSchema = z.url({ protocol: /^https?$/, error: 'webUiUrl must be an http(s) URL' }).max(2_000);

export const clientOptionsSchema = z.looseObject({
  // By shape, not instanceof: a service may hold another copy of @temporalio/client.
  client: z.custom<Client>(
    (value) => typeof (value as Client | undefined)?.workflow?.getHandle === 'function',
    'a Client of @temporalio/client',
  ),
  taskQueue: printableString('a task queue', MAX_TEMPORAL_ID_CHARS),
  tools: namesSchema.optional(),
  mcpServers: namesSchema.optional(),
  turnTimeoutMs: timeoutMsSchema.optional(),
  webUiUrl: webUiUrlSchema.optional(),
});
export const connectOptionsSchema = z.looseObject({
  address: printableString('an address', 1_000),
  namespace: printableString('a namespace', MAX_TEMPORAL_ID_CHARS),
  taskQueue: printableString('a task queue', MAX_TEMPORAL_ID_CHARS),
  tools: namesSchema.optional(),
  mcpServers: namesSchema.optional(),
  turnTimeoutMs: timeoutMsSchema.optional(),
  connection: optionsObject.optional(),
  webUiUrl: webUiUrlSchema.optional(),
});

export { conversationIdSchema, refreshSchema, transcriptRangeSchema, turnNumberSchema };

/**
 * `value` parsed by `schema`, or a ConversationError (`code`) saying which argument of `call` is wrong and how. Object
 * keys the caller made up appear only cut short and escaped; the value itself never.
 */
export function checked<S extends z.ZodType>(
  schema: S,
  value: unknown,
  call: string,
  argument: string,
  code: ConversationErrorCode = 'invalid_options',
): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new ConversationError(code, `Invalid ${argument} for ${call}: ${describeCallIssues(parsed.error, argument)}`);
}

/**
 * A message call's arguments (sendMessage, submitMessage, streamMessage): the id, the text (`invalid_message`), then
 * one options object and nothing after it. The calls once took a new conversation's options and the rest as two
 * positional arguments; such a call is refused with what to write instead, never half understood.
 */
export function checkedMessageCall(
  call: string,
  schema: z.ZodOptional<z.ZodObject>,
  id: unknown,
  text: unknown,
  options: unknown,
  extra: readonly unknown[],
): void {
  checked(conversationIdSchema, id, call, 'id');
  checkedText(text, call);
  const keys = Object.keys(schema.unwrap().shape).join(', ');
  const usage = `${call}(id, text, { ${keys} })`;
  if (extra.some((argument) => argument !== undefined)) {
    throw new ConversationError(
      'invalid_options',
      `Invalid arguments for ${call}: no argument after the options; everything goes in one options object: ${usage}`,
    );
  }
  const parsed = schema.safeParse(options);
  if (parsed.success) return;
  const misplaced = parsed.error.issues
    .flatMap((issue) => (issue.code === 'unrecognized_keys' && issue.path.length === 0 ? issue.keys : []))
    .filter((key) => START_OPTION_KEYS.has(key));
  const hint =
    misplaced.length > 0
      ? ` (a new conversation's options go in options.start: ${call}(id, text, { start: { ${misplaced.slice(0, 3).join(', ')} } }))`
      : '';
  throw new ConversationError(
    'invalid_options',
    `Invalid options for ${call}: ${describeCallIssues(parsed.error, 'options')}${hint}`,
  );
}
/** What a conversation is started with (StartOptions' keys): misplaced at a message call's top level, they get a hint. */
const START_OPTION_KEYS = new Set([...Object.keys(conversationOptionsSchema.shape), 'id', 'owner']);

/** A message's text: `invalid_message` when it is not one the conversation takes. */
export function checkedText(text: unknown, call: string): string {
  const parsed = userMessageSchema.safeParse(text);
  // The workflow's own schema: a lone surrogate, an empty or an over-long text are refused here as there.
  if (!parsed.success) throw new ConversationError('invalid_message', `${call}: ${parsed.error.issues[0]!.message}`);
  return parsed.data;
}

/** `path: problem; path: problem`, at most a few, with caller-made keys shown safely. */
export function describeCallIssues(error: z.ZodError, argument: string): string {
  const issues = error.issues.slice(0, MAX_SHOWN_ISSUES).map((issue) => {
    const path = issue.path.map((key) => shownKey(key)).join('.');
    const message =
      issue.code === 'unrecognized_keys'
        ? `unknown key${issue.keys.length > 1 ? 's' : ''} ${shownList(issue.keys)}`
        : cut(issue.message, MAX_SHOWN_MESSAGE_CHARS);
    return `${path || argument}: ${message}`;
  });
  const more = error.issues.length - MAX_SHOWN_ISSUES;
  return [...issues, ...(more > 0 ? [`and ${more} more`] : [])].join('; ');
}

function shownList(keys: readonly string[]): string {
  const shown = keys.slice(0, MAX_SHOWN_ISSUES).map((key) => JSON.stringify(cut(key, MAX_SHOWN_KEY_CHARS)));
  const more = keys.length - shown.length;
  return shown.join(', ') + (more > 0 ? ` and ${more} more` : '');
}

/** A path segment: plain names as they are, anything else quoted and escaped (JSON escapes controls and surrogates). */
function shownKey(key: PropertyKey): string {
  if (typeof key === 'number') return String(key);
  const text = typeof key === 'symbol' ? key.toString() : key;
  return /^[A-Za-z_$][\w$]{0,39}$/.test(text) ? text : JSON.stringify(cut(text, MAX_SHOWN_KEY_CHARS));
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
