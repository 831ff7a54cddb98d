// The client's public options, one source for each: a zod schema that checks a call before anything goes to Temporal,
// and the type callers write, derived from it (z.input), so a field added to one is never refused by the other. The
// documentation sits on the schemas' fields, where z.input carries it to the editor.
import type { Client, ClientOptions, ConnectionOptions } from '@temporalio/client';
import { z } from 'zod';
import { conversationIdSchema } from '../common/conversation-id';
import { FINAL_STATUSES, OPEN_STATUSES } from '../common/conversation-types';
import { forkAtSchema } from '../common/fork';
import type { ConversationOptionsInput } from '../common/options';
import type { AnswerFormat } from './answer-format';
import {
  MAX_TEMPORAL_ID_CHARS,
  namesSchema,
  objectArgument,
  printableString,
  signalSchema,
  timeoutMsSchema,
} from './call-arguments';
import { parseCursor } from '../streaming/client/stream-cursor';
import { batchOptionSchema } from '../common/batch-mode';
import { prioritySchema, tenantSchema, tenantWeightSchema } from '../common/fairness';

/** How long `sendMessage` and `awaitTurn` wait for a turn by default: 15 minutes. */
export const DEFAULT_TURN_TIMEOUT_MS = 15 * 60_000;

/** An answer format is checked where it is turned into JSON Schema (answer-format.ts); here only its kind. */
const answerFormatSchema = z.custom<AnswerFormat>(
  (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
  'an answer format is an object: { schema, mode?, toolName? }',
);

/** StartOptions.owner: who the conversation belongs to (the ConversationOwner search attribute). */
export const ownerSchema = printableString('an owner', 256);

/** What a start takes besides the conversation's options (ConversationOptionsInput). */
export const startFieldsSchema = z.object({
  /**
   * Caller-chosen id; generated if absent. An id names one conversation for ever: it is never reused.
   * @default `conversation-<a random UUID>`
   * @example 'support-ticket-4711'
   */
  id: conversationIdSchema.optional(),
  /**
   * Every turn's answer as data matching this schema (`TurnResult.output`); see `SendOptions.output`.
   * @example { schema: z.object({ symbol: z.string(), price: z.number() }) }
   */
  output: answerFormatSchema.optional(),
  /**
   * Who the conversation belongs to (the ConversationOwner search attribute, set with the start; the gateway's).
   * @default none: the conversation has no owner
   * @example 'alice'
   */
  owner: ownerSchema.optional(),
  ...placementFields(),
});

/**
 * Where a new conversation's tasks stand in the task queue (docs/fairness.md): its tenant (Temporal's fairness key) and
 * priority (priority key), which its workflow, model and tool tasks and its sub-agents carry.
 */
function placementFields() {
  return {
    /**
     * The tenant the conversation works for: Temporal's fairness key (1 to 64 bytes). When workers are busy, the task queue
     * hands out work tenant by tenant, so one tenant's flood does not hold back another's few (the server needs
     * fairness turned on: docs/fairness.md). Independent of `owner`.
     * @default none: every conversation without a tenant shares one (the empty fairness key)
     * @example 'acme-corp'
     */
    tenant: tenantSchema.optional(),
    /**
     * The tenant's share against others' (Temporal's fairness weight, 0.001 to 1000): 2 gets twice the work of 1.
     * Give the same weight to every conversation of a tenant.
     * @default 1
     * @example 2
     */
    tenantWeight: tenantWeightSchema.optional(),
    /**
     * Priority of every task of the conversation: 1 (first) to 5 (last); a message's own `priority` wins for its turn.
     * Lower numbers go first whatever the tenant.
     * @default the server's middle priority, 3
     * @example 1
     */
    priority: prioritySchema.optional(),
  };
}

/** A tenant weight only means something with a tenant. */
export function weightWithoutTenant(fields: { tenant?: unknown; tenantWeight?: unknown }): boolean {
  return fields.tenantWeight !== undefined && fields.tenant === undefined;
}
export const WEIGHT_WITHOUT_TENANT = 'tenantWeight needs a tenant';

/** What `startConversation` takes (and a message call's `start`, without `id`): the conversation's options and more. */
export type StartOptions = Omit<ConversationOptionsInput, 'output'> & z.input<typeof startFieldsSchema>;

/**
 * What `fork` takes besides the origin's id (docs/fork.md). The message is checked as any message is (the workflow's
 * own schema), the options where a start's are (the tools the workers register).
 */
export const forkOptionsSchema = z
  .strictObject(
    {
      /**
       * Where to fork: before turn n (the fork's next message is its turn n), or after turn n (the same as before turn
       * n + 1; after the last ended turn, the whole transcript), or inside turn n after its k-th model reply and that
       * reply's tool results (`afterStep`: the fork goes on with turn n at once, from the next model call; wait for its
       * answer with `awaitTurn(fork.id, fork.turn)`). Turns are numbered as `sendMessage` answers them.
       * @example { beforeTurn: 2 }
       */
      at: forkAtSchema,
      /**
       * The options that change (another model, system prompt, tools…); the rest are the origin's. A typed answer
       * (`output`) is given per message instead.
       * @default none: the origin's options
       * @example { model: 'claude-opus-4-1' }
       */
      options: objectArgument<Partial<Omit<ConversationOptionsInput, 'output'>>>("options (the fork's changed options)")
        .refine((options) => options === undefined || !('output' in options), {
          message: "a fork's typed answer is given per message (sendMessage's output), not in options",
        })
        .optional(),
      /**
       * The fork's first message, sent at once as its turn n (wait for it with `awaitTurn(fork.id, fork.turn)`). Not with
       * `afterStep`: such a fork goes on with the origin's turn at once.
       * @default none: the fork waits for a message
       */
      message: z.string({ error: 'a message is a string' }).optional(),
      /**
       * The fork's id; generated if absent.
       * @default `<origin id>-fork-<8 random hex digits>`
       */
      workflowId: conversationIdSchema.optional(),
      /**
       * Who the fork belongs to (ConversationOwner); the gateway names its caller.
       * @default none: the fork has no owner
       */
      owner: ownerSchema.optional(),
      ...placementFields(),
    },
    {
      error:
        'fork options are an object: { at, options?, message?, workflowId?, owner?, tenant?, tenantWeight?, priority? }',
    },
  )
  .refine((fork) => !weightWithoutTenant(fork), { message: WEIGHT_WITHOUT_TENANT, path: ['tenantWeight'] })
  .refine((fork) => fork.message === undefined || !('afterStep' in fork.at), {
    // A fork at a step goes on with the origin's turn (its next act is a model call): no message has a place there.
    message: 'a fork at a step goes on with that turn and takes no message (send one once it answered)',
    path: ['message'],
  });
/** What `fork` takes besides the origin's id. */
export type ForkOptions = z.input<typeof forkOptionsSchema>;

const waitFields = {
  /**
   * Overrides the client's `turnTimeoutMs` for this call.
   * @default the client's `turnTimeoutMs` (15 minutes unless it was given one)
   * @example 60_000
   */
  timeoutMs: timeoutMsSchema.optional(),
  /**
   * sendMessage: the message's update id (default: a new one). Give the same one when trying a send again after an
   * error (the server down a moment): the server takes the message once and answers every try with its outcome.
   * @default a new random UUID per call
   * @example 'order-4711-message-3'
   */
  updateId: printableString('an update id', MAX_TEMPORAL_ID_CHARS).optional(),
};
export const waitOptionsSchema = z.strictObject(waitFields).optional();
/** What `awaitTurn` takes besides the id and the turn (and `sendMessage` too). */
export type WaitOptions = NonNullable<z.input<typeof waitOptionsSchema>>;

const submitFields = {
  /**
   * The conversation's options, should it not exist yet: it is created with them (update-with-start). A closed
   * conversation is never started again. Without `start`, the conversation must exist.
   * Checked in full where they are validated (the tools).
   * @default none: the conversation must exist
   * @example { model: 'claude-sonnet-5-5', tools: ['get_ticker_symbol'] }
   */
  start: objectArgument<Omit<StartOptions, 'id'>>("start (a new conversation's options)").optional(),
  /** This turn's typed answer; the type callers see is SubmitOptions' `output`, typed by its schema. */
  output: answerFormatSchema.optional(),
  /**
   * Batch mode for this turn only (docs/batches.md): its model calls go through Message Batches at half the price
   * (`true`, or `{ windowMs }` to wait that long at most for other calls to share a batch), or not (`false`).
   * @default the conversation's `batch` option
   * @example true
   */
  batch: batchOptionSchema.optional(),
  /**
   * This turn's priority (docs/fairness.md): 1 (first) to 5 (last), for its model and tool tasks and its sub-agents;
   * an interactive turn can go ahead of bulk work. The conversation's tenant stays.
   * @default the conversation's `priority`
   * @example 1
   */
  priority: prioritySchema.optional(),
};
export const submitOptionsSchema = z.strictObject(submitFields).optional();
export const sendOptionsSchema = z.strictObject({ ...submitFields, ...waitFields }).optional();
export const streamOptionsSchema = z
  .strictObject({
    ...submitFields,
    /**
     * Ends the stream (and the poll waiting on the server) when aborted; the turn goes on.
     * @default none: the stream ends with the turn
     * @example AbortSignal.timeout(60_000)
     */
    signal: signalSchema.optional(),
  })
  .optional();

/** A message call's options with `output` typed by the caller's answer schema `S`. */
type WithAnswer<T, S extends z.ZodType> = Omit<T, 'output'> & {
  /**
   * This turn's answer as data matching the schema: the result's `output`, parsed by it (typed). For every turn of a
   * conversation, give it once as `start.output` (this one wins for its turn).
   * @default none: the answer is the reply's text only
   * @example { schema: z.object({ symbol: z.string(), price: z.number() }), mode: 'tool' }
   */
  output?: AnswerFormat<S>;
};
/** What `submitMessage` takes besides the id and the text (and `sendMessage` and `streamMessage` too). */
export type SubmitOptions<S extends z.ZodType = z.ZodType> = WithAnswer<
  NonNullable<z.input<typeof submitOptionsSchema>>,
  S
>;
/** What `sendMessage` takes besides the id and the text. */
export type SendOptions<S extends z.ZodType = z.ZodType> = WithAnswer<
  NonNullable<z.input<typeof sendOptionsSchema>>,
  S
>;
/** What `streamMessage` takes besides the id and the text. */
export type StreamOptions<S extends z.ZodType = z.ZodType> = WithAnswer<
  NonNullable<z.input<typeof streamOptionsSchema>>,
  S
>;

export const eventsOptionsSchema = z
  .strictObject({
    /**
     * Resume after this item's `cursor` (wins over `fromOffset`): nothing it had is given again.
     * @example item.cursor
     */
    after: z
      .string({ error: 'a cursor is a string' })
      .max(100, { error: "a cursor is an event's `cursor`, a short string", abort: true })
      .refine((cursor) => parseCursor(cursor) !== undefined, "not a cursor: give an event's `cursor` as it came"),
    /**
     * The first durable offset to read (0: the oldest event still kept).
     * @default 0
     */
    fromOffset: z
      .number({ error: 'an offset is a number' })
      .int('an offset is a whole number')
      .min(0, 'an offset is 0 or more')
      .max(Number.MAX_SAFE_INTEGER, 'an offset is a safe integer'),
    /** Ends the iteration (and the poll waiting on the server) when aborted. */
    signal: signalSchema,
    /**
     * How often a working conversation is looked at (its live reply, whether its log grew), in milliseconds.
     * @default 150
     */
    liveIntervalMs: z
      .number({ error: 'an interval is a number of milliseconds' })
      .min(10, 'an interval is at least 10 ms')
      .max(60_000, 'an interval is at most 60,000 ms'),
    /**
     * Follow streamed replies on the workers' live relays when their heartbeats name one.
     * @default true
     */
    liveRelay: z.boolean({ error: 'liveRelay is true or false' }),
    /**
     * Sub-agents' events too (each tagged `agent: <child id>`, a child's own children's too): `steps` their tool calls,
     * results, approvals and turn ends; `all` their text and live replies as well; `none` the conversation's own only.
     * Resuming after a cursor follows the children still running there again from their start.
     * @default 'steps'
     */
    agents: z.enum(['steps', 'all', 'none'], { error: 'agents is steps, all or none' }),
  })
  .partial()
  .optional();
/** What `events` (and the streaming readers) take. */
export type EventsOptions = NonNullable<z.input<typeof eventsOptionsSchema>>;

export const listFilterSchema = z
  .strictObject({
    /** @example 'awaiting_user' */
    status: z.enum([...OPEN_STATUSES, ...FINAL_STATUSES], { error: 'not a conversation status' }),
    /** @example 'claude-sonnet-5-5' */
    model: printableString('a model name', 256),
    /** Only this owner's conversations (ConversationOwner). @example 'alice' */
    owner: ownerSchema,
    /** @example new Date(Date.now() - 86_400_000) */
    startedAfter: z.date({ error: 'a date is a valid Date' }),
    startedBefore: z.date({ error: 'a date is a valid Date' }),
    /**
     * The most conversations listed, newest first.
     * @default 100
     */
    limit: z
      .number({ error: 'a limit is a number' })
      .int('a limit is a whole number')
      .min(1, 'a limit is at least 1')
      .max(10_000, 'a limit is at most 10,000'),
  })
  .partial()
  .optional();
/** What `list` takes: which conversations (every field narrows the list). */
export type ListFilter = NonNullable<z.input<typeof listFilterSchema>>;

/** The Temporal Web UI as a browser reaches it (`http://localhost:8233`): conversations' links start with it. */
const webUiUrlSchema = z.url({ protocol: /^https?$/, error: 'webUiUrl must be an http(s) URL' }).max(2_000);

/** What a client takes besides how it reaches Temporal, in `new ConversationClient` and `connect` alike. */
const sharedClientFields = {
  /**
   * The task queue the conversation workers poll.
   * @example 'claude-conversations'
   */
  taskQueue: printableString('a task queue', MAX_TEMPORAL_ID_CHARS),
  /**
   * The tool names the workers register; a call naming another is refused here. When absent, the client asks a
   * worker of the task queue once (and again when a name it does not know comes up).
   * @default asked of a worker
   * @example ['get_ticker_symbol', 'get_current_stock_price']
   */
  tools: namesSchema.readonly().optional(),
  /**
   * The MCP servers the workers are configured with; like `tools`, asked of a worker when absent.
   * @default asked of a worker
   * @example ['memory']
   */
  mcpServers: namesSchema.readonly().optional(),
  /**
   * How long `sendMessage` and `awaitTurn` wait for a turn before they give up (the turn goes on).
   * @default 900_000 (15 minutes)
   * @example 120_000
   */
  turnTimeoutMs: timeoutMsSchema.optional(),
};
const webUiUrlField = {
  /**
   * The Temporal Web UI's base URL as a browser reaches it (the CLI and the gateway take TEMPORAL_UI_URL):
   * `conversationUrl(id)` links a conversation there.
   * @default none: `conversationUrl` answers undefined
   * @example 'http://localhost:8233'
   */
  webUiUrl: webUiUrlSchema.optional(),
};

const clientOptionsFields = z.object({
  /**
   * A Client of `@temporalio/client`, connected to the workers' namespace.
   * @example new Client({ connection: await Connection.connect({ address: 'localhost:7233' }) })
   */
  // By shape, not instanceof: a service may hold another copy of @temporalio/client.
  client: z.custom<Client>(
    (value) => typeof (value as Client | undefined)?.workflow?.getHandle === 'function',
    'a Client of @temporalio/client',
  ),
  ...sharedClientFields,
  ...webUiUrlField,
});
/** Keys it does not know are let through (a newer caller's), never refused. */
export const clientOptionsSchema = clientOptionsFields.loose();
/** What `new ConversationClient` takes. */
export type ConversationClientOptions = z.input<typeof clientOptionsFields>;

const connectOptionsFields = z.object({
  /**
   * The Temporal frontend, host:port.
   * @example 'localhost:7233'
   */
  address: printableString('an address', 1_000),
  /**
   * The workers' namespace.
   * @example 'default'
   */
  namespace: printableString('a namespace', MAX_TEMPORAL_ID_CHARS),
  ...sharedClientFields,
  /**
   * TLS, mTLS or an API key (Temporal Cloud): the rest of Connection.connect's options.
   * @default none: plain gRPC, no credentials
   * @example { apiKey: process.env.TEMPORAL_API_KEY, tls: true }
   */
  connection: objectArgument<Omit<ConnectionOptions, 'address'>>('options').optional(),
  ...webUiUrlField,
  /**
   * The workers' own data converter, e.g. codec/data-converter.ts encryptingDataConverter(keys) /
   * dataConverterFromEnv().
   * @default Temporal's default data converter (no encryption)
   */
  dataConverter: z.custom<ClientOptions['dataConverter']>().optional(),
  /** The Client's interceptors (tracing, say). */
  interceptors: z.custom<ClientOptions['interceptors']>().optional(),
});
/** Keys it does not know are let through (a newer caller's), never refused. */
export const connectOptionsSchema = connectOptionsFields.loose();
/** What `ConversationClient.connect` takes. */
export type ConnectOptions = z.input<typeof connectOptionsFields>;
