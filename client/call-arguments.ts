// Every argument of the client's public calls, checked before anything goes to Temporal. A bad one is a
// ConversationError (`invalid_options`, or `invalid_message` for a message's text) naming the call, the argument and
// what is wrong — never the value, which may be huge or not even encodable. Unchecked, NaN as a timeout made gRPC
// throw where no caller could catch it (the process died), a string as a date threw a TypeError, an id with a NUL
// started a conversation no command line can name.
import { z } from 'zod';
import { conversationIdSchema } from '../common/conversation-id';
import { conversationOptionsSchema } from '../common/options';
import { isWellFormed, unprintable } from '../common/safe-text';
import {
  approvalDecisionSchema,
  transcriptRangeSchema,
  turnNumberSchema,
  userMessageSchema,
} from '../common/workflow-messages';
import { ConversationError, type ConversationErrorCode } from './errors';

/** The longest wait a timer (and gRPC's deadline) can take: 2^31 - 1 ms, about 24.8 days. */
const MAX_WAIT_MS = 2 ** 31 - 1;
/** Temporal's limit for ids of its own (update ids, task queues): `limit.maxIDLength`. */
export const MAX_TEMPORAL_ID_CHARS = 1_000;
const MAX_SHOWN_ISSUES = 5;
const MAX_SHOWN_KEY_CHARS = 40;
const MAX_SHOWN_MESSAGE_CHARS = 300;

/** A string a person can read back: bounded, printable, well-formed. */
export function printableString(what: string, max: number) {
  return z
    .string({ error: `${what} is a string` })
    .min(1, `${what} is not empty`)
    .max(max, { error: `${what} has at most ${max} characters`, abort: true })
    .superRefine((text, ctx) => {
      const problem = unprintable(text);
      if (problem) ctx.addIssue({ code: 'custom', message: `${what} is printable text; this one has ${problem}` });
    });
}

export const timeoutMsSchema = z
  .number({ error: 'a timeout is a number of milliseconds' })
  .positive('a timeout is more than 0 ms')
  .max(MAX_WAIT_MS, `a timeout is at most ${MAX_WAIT_MS} ms (about 24.8 days)`);
export const signalSchema = z.instanceof(AbortSignal, { error: 'a signal is an AbortSignal' });
const refreshSchema = z.boolean({ error: 'refresh is true or false' }).optional();
export const namesSchema = z.array(z.string({ error: 'a name is a string' }), { error: 'a list of names' });

/** A plain object (`what`: how the message names it), typed `T` for the caller; undefined too when `optional`. */
export function objectArgument<T extends object = Record<string, unknown>>(what: string, optional = true) {
  return z.custom<T>(
    (value) =>
      (optional && value === undefined) || (typeof value === 'object' && value !== null && !Array.isArray(value)),
    `${what} is an object`,
  );
}
/** Options, or nothing. */
export const optionsObject = objectArgument('options');

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

export { conversationIdSchema, refreshSchema, transcriptRangeSchema, turnNumberSchema };

/**
 * `value` parsed by `schema`, or a ConversationError (`code`) saying which argument of `call` is wrong and how. Object
 * keys the caller made up appear only cut short and escaped; the value itself never.
 */
export function parseArgument<S extends z.ZodType>(
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
export function assertMessageCall(
  call: string,
  schema: z.ZodOptional<z.ZodObject>,
  id: unknown,
  text: unknown,
  options: unknown,
  extra: readonly unknown[],
): void {
  parseArgument(conversationIdSchema, id, call, 'id');
  parseMessageText(text, call);
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
const START_OPTION_KEYS = new Set([
  ...Object.keys(conversationOptionsSchema.shape),
  'id',
  'owner',
  'tenant',
  'tenantWeight',
]);

/** A message's text: `invalid_message` when it is not one the conversation takes. */
export function parseMessageText(text: unknown, call: string): string {
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
