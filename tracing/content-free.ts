// What spans and log lines may say about content when content is not theirs to carry (content capture off, the
// default, or payloads encrypted): the types and sizes of things, never their text. An error becomes
// `ApplicationFailure TickerNotFound (38 characters)`; a text becomes `(38 characters)`. Pure: no OpenTelemetry, no
// Temporal import; the span processor (content-free-span-processor.ts) and the logger (content-free-logger.ts) apply it.
import { CONTENT_ATTRIBUTES } from './genai-attributes';

/** How many causes of an error are described (`…, caused by …`). */
const MAX_CAUSES = 3;
/** A type, name or code longer than this is not one (it is someone's text): it is described by its size. */
const MAX_NAME_CHARS = 64;
/** An identifier in log metadata (ids, task tokens) is kept up to this length. */
const MAX_IDENTIFIER_CHARS = 512;
/** A log message's fixed part; a longer one without `: ` is described by its size. */
const MAX_LOG_PREFIX_CHARS = 200;
/** A stack frame longer than this is cut: frames are code locations, and code locations are short. */
const MAX_FRAME_CHARS = 300;

/** The OpenTelemetry exception event and its attributes (semantic conventions). */
export const EXCEPTION_EVENT = 'exception';
export const EXCEPTION_TYPE = 'exception.type';
export const EXCEPTION_MESSAGE = 'exception.message';
export const EXCEPTION_STACKTRACE = 'exception.stacktrace';
const ERROR_TYPE = 'error.type';

/**
 * Span attributes that carry content: the GenAI content attributes, and the reason a caller gave for terminating a
 * workflow (Temporal's client interceptor). Dropped from every span when content is off.
 */
export const CONTENT_SPAN_ATTRIBUTES: ReadonlySet<string> = new Set([...CONTENT_ATTRIBUTES, 'temporalTerminateReason']);

/** `(38 characters)`: all that is said of a text that may be content. */
export function sizeOf(text: string): string {
  return `(${text.length} characters)`;
}

/**
 * An error as its types and sizes: class, name, type (ApplicationFailure's) or code (an MCP or Node error's), the
 * length of its message, and the same of its causes — `ToolError TickerNotFound (38 characters)`, `ApplicationFailure
 * McpProtocolError (600042 characters), caused by McpError -32602 (600000 characters)`. A string: its size.
 */
export function describeError(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth <= MAX_CAUSES && current !== undefined && current !== null; depth++) {
    parts.push(describeOne(current));
    current = typeof current === 'object' ? (current as { cause?: unknown }).cause : undefined;
  }
  return parts.join(', caused by ') || String(error);
}

function describeOne(error: unknown): string {
  if (typeof error === 'string') return sizeOf(error);
  if (typeof error !== 'object' || error === null) return typeof error;
  const { name, type, code, message } = error as { name?: unknown; type?: unknown; code?: unknown; message?: unknown };
  // The class, then the name it gives itself (a ToolError names itself after its kind), its type and its code.
  const names = [nameLike((error as object).constructor?.name), nameLike(name), nameLike(type), nameLike(code)].filter(
    (part, i, all): part is string => part !== undefined && part !== 'Object' && all.indexOf(part) === i,
  );
  return `${names.join(' ') || 'object'} ${typeof message === 'string' ? sizeOf(message) : '(no message)'}`;
}

/** A type, name or code worth naming: a short word (a number for a code); anything else is someone's text. */
function nameLike(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_NAME_CHARS) return undefined;
  return /^[\w.:$-]+$/.test(value) ? value : undefined;
}

// ---- Spans ------------------------------------------------------------------------------------------------------

export type AttributeValue = string | number | boolean | (string | number | boolean | null | undefined)[];
export type Attributes = Record<string, AttributeValue | undefined>;

export interface SpanContent {
  attributes: Attributes;
  events: { name: string; attributes?: Attributes }[];
  status: { code: number; message?: string };
}

/**
 * A span's attributes, events and status without content: content attributes dropped, each exception event's
 * message described by its type and size and its stack trace cut to the frames (or dropped), the status message
 * described like the exception. `error.type` (the failure's type, which the GenAI activity interceptor records on
 * the activity attempt's span) names the exception's type more precisely than `exception.type` can.
 */
export function contentFreeSpan(span: SpanContent): SpanContent {
  const attributes = withoutContentAttributes(span.attributes);
  const errorType = nameLike(attributes[ERROR_TYPE]);
  let described: string | undefined;
  const events = span.events.map((event) => {
    if (event.name !== EXCEPTION_EVENT || !event.attributes) {
      return event.attributes ? { ...event, attributes: withoutContentAttributes(event.attributes) } : event;
    }
    const exception = contentFreeException(event.attributes, errorType);
    described = exception[EXCEPTION_MESSAGE] as string;
    return { ...event, attributes: exception };
  });
  const status =
    span.status.message === undefined || span.status.message === ''
      ? span.status
      : {
          ...span.status,
          message: described ?? `${errorType ? `${errorType} ` : ''}${sizeOf(span.status.message)}`,
        };
  return { attributes, events, status };
}

/** An exception event's attributes: type kept, message described, stack trace cut to its frames. */
export function contentFreeException(attributes: Attributes, errorType?: string): Attributes {
  const {
    [EXCEPTION_TYPE]: rawType,
    [EXCEPTION_MESSAGE]: message,
    [EXCEPTION_STACKTRACE]: stack,
    ...rest
  } = withoutContentAttributes(attributes);
  const type = nameLike(rawType);
  const names = [type, errorType].filter((part, i, all) => part !== undefined && all.indexOf(part) === i);
  const text = typeof message === 'string' ? message : '';
  const frames = typeof stack === 'string' ? stackFrames(stack, text) : undefined;
  return {
    ...rest,
    ...(type !== undefined && { [EXCEPTION_TYPE]: type }),
    [EXCEPTION_MESSAGE]: [...names, sizeOf(text)].join(' '),
    ...(frames !== undefined && { [EXCEPTION_STACKTRACE]: frames }),
  };
}

/**
 * The frames of a stack trace (`    at fn (file:line:col)`: code locations, no content), once its header — the
 * error's name and message, which may span lines that look like frames — is cut off exactly. A stack whose header
 * does not hold the message (it was changed after the error was made) is dropped whole: undefined.
 */
export function stackFrames(stack: string, message: string): string | undefined {
  // What follows the header line: after the message's end (the rest of its last line is the header's), or after
  // the first line when there is no message.
  const at = message ? stack.indexOf(message) : 0;
  if (at < 0) return undefined;
  const frames = stack
    .slice(at + message.length)
    .split('\n')
    .slice(1)
    .filter((line) => /^\s+at \S/.test(line))
    .map((line) => (line.length > MAX_FRAME_CHARS ? `${line.slice(0, MAX_FRAME_CHARS)}…` : line));
  return frames.length > 0 ? frames.join('\n') : undefined;
}

function withoutContentAttributes(attributes: Attributes): Attributes {
  if (!Object.keys(attributes).some((key) => CONTENT_SPAN_ATTRIBUTES.has(key))) return attributes;
  return Object.fromEntries(Object.entries(attributes).filter(([key]) => !CONTENT_SPAN_ATTRIBUTES.has(key)));
}

// ---- Log lines --------------------------------------------------------------------------------------------------

/**
 * Log metadata whose strings are identifiers and names (the SDK's, Temporal core's and the trace's), kept as they
 * are when short. Any other string is described by its size, an error by its types and sizes, an object by its kind.
 */
const METADATA_KEYS: ReadonlySet<string> = new Set([
  'sdkComponent',
  'target',
  'namespace',
  'taskQueue',
  'task_queue',
  'workflowId',
  'workflow_id',
  'workflowRunId',
  'runId',
  'run_id',
  'workflowType',
  'workflow_type',
  'activityId',
  'activity_id',
  'activityType',
  'activity_type',
  'taskToken',
  'task_token',
  'updateId',
  'updateName',
  'signalName',
  'queryType',
  'trace_id',
  'span_id',
  'trace_flags',
  'server',
  'state',
]);

/**
 * A log message's fixed part. Log messages put what varies after `: ` (the SDK's `Error while processing
 * ActivityTask.start: <error message>`, Temporal core's too; the orchestrator's own lines pass what varies as
 * metadata): that part is described by its size. A long message with no such separator is described whole.
 */
export function contentFreeLogMessage(message: string): string {
  const separator = /:\s/.exec(message);
  const fixed = separator ? message.slice(0, separator.index) : message;
  if (fixed.length > MAX_LOG_PREFIX_CHARS) return sizeOf(message);
  return separator ? `${fixed}: ${sizeOf(message.slice(separator.index + separator[0].length))}` : fixed;
}

/** Log metadata without content (see METADATA_KEYS). Symbol keys (the SDK's log timestamp) are kept as they are. */
export function contentFreeLogMeta<Meta extends Record<string | symbol, unknown>>(meta: Meta): Meta {
  const out: Record<string | symbol, unknown> = {};
  for (const key of Object.getOwnPropertySymbols(meta)) out[key] = meta[key];
  for (const [key, value] of Object.entries(meta)) out[key] = contentFreeLogValue(key, value);
  return out as Meta;
}

function contentFreeLogValue(key: string, value: unknown): unknown {
  if (value === undefined || value === null) return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return value;
  if (typeof value === 'string') {
    return METADATA_KEYS.has(key) && value.length <= MAX_IDENTIFIER_CHARS ? value : sizeOf(value);
  }
  if (value instanceof Error || (typeof value === 'object' && 'message' in value)) return describeError(value);
  if (Array.isArray(value)) return `(${value.length} items)`;
  return `(${typeof value})`;
}
