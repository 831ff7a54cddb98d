// The typed client API: start and continue conversations, read them, approve tool calls, list them.
// It hides continue-as-new (a reply is followed to the run that produced it) and turns Temporal's errors
// into ConversationError with a code.
import { randomUUID } from 'node:crypto';
import {
  Client,
  type ClientOptions,
  Connection,
  type ConnectionOptions,
  WithStartWorkflowOperation,
  type WorkflowHandle,
  WorkflowUpdateRPCTimeoutOrCancelledError,
} from '@temporalio/client';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { builtinTools } from '../activities/tools';
import {
  approveToolCallUpdate,
  awaitTurnUpdate,
  CONVERSATION_WORKFLOW,
  type ConversationInput,
  type ConversationOptionsInput,
  type ConversationResult,
  type ConversationSnapshot,
  type ConversationStatus,
  endConversationSignal,
  MAX_USER_MESSAGE_CHARS,
  sendMessageUpdate,
  stateQuery,
  transcriptQuery,
  type TurnOutcome,
  type TurnResult,
  withDefaults,
} from '../workflows/api';
import type { conversation } from '../workflows/conversation';
import * as attributes from '../workflows/search-attributes';
import { firstLine } from '../workflows/summaries';
import { ConversationError, toConversationError } from './errors';
import { conversationOptionsSchema } from './options-schema';

export interface ConversationClientOptions {
  client: Client;
  taskQueue: string;
  /** Tool names the workers register; calls naming others are refused here. Defaults to the built-in tools. */
  knownTools?: readonly string[];
}

export interface StartOptions extends ConversationOptionsInput {
  /** Caller-chosen id (starting the same id twice returns the same conversation); generated if absent. */
  id?: string;
}

export interface ConversationSummary {
  id: string;
  runId: string;
  status: ConversationStatus | undefined;
  model: string | undefined;
  turns: number | undefined;
  toolCalls: number | undefined;
  startTime: Date;
  closeTime: Date | undefined;
  execution: string;
}

export interface ListFilter {
  status?: ConversationStatus;
  model?: string;
  startedAfter?: Date;
  startedBefore?: Date;
  limit?: number;
}

export class ConversationClient {
  readonly client: Client;
  private readonly taskQueue: string;
  private readonly optionsSchema: ReturnType<typeof conversationOptionsSchema>;

  constructor(options: ConversationClientOptions) {
    this.client = options.client;
    this.taskQueue = options.taskQueue;
    this.optionsSchema = conversationOptionsSchema(options.knownTools ?? builtinTools.map((tool) => tool.name));
  }

  static async connect(options: {
    address: string;
    namespace: string;
    taskQueue: string;
    /** E.g. codec/data-converter.ts encryptingDataConverter(keys) / dataConverterFromEnv(): the workers' own. */
    dataConverter?: ClientOptions['dataConverter'];
    /** TLS, mTLS or an API key (Temporal Cloud): the rest of Connection.connect's options. */
    connection?: Omit<ConnectionOptions, 'address'>;
  }): Promise<ConversationClient> {
    const connection = await Connection.connect({ ...options.connection, address: options.address });
    const client = new Client({ connection, namespace: options.namespace, ...(options.dataConverter && { dataConverter: options.dataConverter }) });
    return new ConversationClient({ client, taskQueue: options.taskQueue });
  }

  /** Starts a conversation (with a first message, if given, answered in the background). Idempotent per id. */
  async startConversation(options: StartOptions & { firstMessage?: string } = {}): Promise<string> {
    const { id = `conversation-${randomUUID()}`, firstMessage, ...rest } = options;
    if (firstMessage !== undefined) checkMessage(firstMessage);
    const input: ConversationInput = { options: this.validate(rest), ...(firstMessage !== undefined && { firstMessage }) };
    try {
      await this.client.workflow.start<typeof conversation>(CONVERSATION_WORKFLOW, {
        ...this.startOptions(id, input),
        workflowIdConflictPolicy: 'USE_EXISTING',
      });
    } catch (err) {
      const mapped = toConversationError(err, id);
      // A closed conversation with this id exists: starting it again is the same conversation.
      if (!(mapped instanceof ConversationError && mapped.code === 'already_started')) throw mapped;
    }
    return id;
  }

  /**
   * Sends a user message and resolves with the reply once the whole turn (all its tool calls) is done.
   * With `start`, the conversation is created if it does not exist yet (update-with-start).
   */
  async sendMessage(id: string, text: string, start?: Omit<StartOptions, 'id'>): Promise<TurnResult> {
    checkMessage(text);
    const input: ConversationInput | undefined = start ? { options: this.validate(start) } : undefined;
    // One update id for every try: the server runs the update once and answers repeats with the same outcome.
    const updateId = randomUUID();
    try {
      const outcome = await untilAnswered(() => {
        if (!input) return this.handle(id).executeUpdate(sendMessageUpdate, { args: [text], updateId });
        const startWorkflowOperation = new WithStartWorkflowOperation<typeof conversation>(CONVERSATION_WORKFLOW, {
          ...this.startOptions(id, input, text),
          workflowIdConflictPolicy: 'USE_EXISTING',
        });
        return this.client.workflow.executeUpdateWithStart(sendMessageUpdate, { args: [text], updateId, startWorkflowOperation });
      });
      return await this.follow(id, outcome);
    } catch (err) {
      throw toConversationError(err, id);
    }
  }

  /** The reply to `turn` (a message sent earlier, e.g. with `startConversation({ firstMessage })`). */
  async awaitTurn(id: string, turn: number): Promise<TurnResult> {
    try {
      return await this.follow(id, { kind: 'continued', turn });
    } catch (err) {
      throw toConversationError(err, id);
    }
  }

  async getState(id: string): Promise<ConversationSnapshot> {
    return this.call(id, (handle) => handle.query(stateQuery));
  }

  async getTranscript(id: string, range?: { from?: number; to?: number }): Promise<MessageParam[]> {
    return this.call(id, (handle) => handle.query(transcriptQuery, range));
  }

  async approveToolCall(id: string, decision: { callId: string; argumentsDigest: string; approve: boolean; reason?: string }): Promise<void> {
    return this.call(id, (handle) => handle.executeUpdate(approveToolCallUpdate, { args: [decision] }));
  }

  /** Ends an open conversation after the current turn; it completes with status `completed`. */
  async end(id: string): Promise<void> {
    return this.call(id, (handle) => handle.signal(endConversationSignal));
  }

  /** Cancels the conversation at once (Temporal cancellation: running activities are cancelled). */
  async cancel(id: string): Promise<void> {
    await this.call(id, (handle) => handle.cancel());
  }

  async waitForResult(id: string): Promise<ConversationResult> {
    return this.call(id, (handle) => handle.result());
  }

  async list(filter: ListFilter = {}): Promise<ConversationSummary[]> {
    const clauses = [`WorkflowType = '${CONVERSATION_WORKFLOW}'`];
    if (filter.status) clauses.push(`${attributes.ConversationStatus.name} = ${quote(filter.status)}`);
    if (filter.model) clauses.push(`${attributes.ConversationModel.name} = ${quote(filter.model)}`);
    if (filter.startedAfter) clauses.push(`StartTime > ${quote(filter.startedAfter.toISOString())}`);
    if (filter.startedBefore) clauses.push(`StartTime < ${quote(filter.startedBefore.toISOString())}`);
    const found: ConversationSummary[] = [];
    for await (const execution of this.client.workflow.list({ query: clauses.join(' AND ') })) {
      const sa = execution.typedSearchAttributes;
      found.push({
        id: execution.workflowId,
        runId: execution.runId,
        status: sa.get(attributes.ConversationStatus) as ConversationStatus | undefined,
        model: sa.get(attributes.ConversationModel),
        turns: sa.get(attributes.ConversationTurns),
        toolCalls: sa.get(attributes.ConversationToolCalls),
        startTime: execution.startTime,
        closeTime: execution.closeTime,
        execution: execution.status.name,
      });
      if (found.length >= (filter.limit ?? 100)) break;
    }
    return found;
  }

  handle(id: string): WorkflowHandle<typeof conversation> {
    return this.client.workflow.getHandle<typeof conversation>(id);
  }

  private async call<T>(id: string, fn: (handle: WorkflowHandle<typeof conversation>) => Promise<T>): Promise<T> {
    try {
      return await fn(this.handle(id));
    } catch (err) {
      throw toConversationError(err, id);
    }
  }

  /** Follows a turn across continue-as-new: a run that moved on answers `continued`, the next run has the reply. */
  private async follow(id: string, outcome: TurnOutcome): Promise<TurnResult> {
    for (let attempt = 0; outcome.kind === 'continued'; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(50 * attempt, 1000)));
      const turn = outcome.turn;
      outcome = await untilAnswered(() => this.handle(id).executeUpdate(awaitTurnUpdate, { args: [turn] }));
    }
    return outcome.result;
  }

  private validate(options: ConversationOptionsInput) {
    const parsed = this.optionsSchema.safeParse(options);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'options'}: ${issue.message}`);
      throw new ConversationError('invalid_options', `Invalid conversation options: ${problems.join('; ')}`);
    }
    return withDefaults(parsed.data as ConversationOptionsInput);
  }

  private startOptions(id: string, input: ConversationInput, firstMessage = input.firstMessage) {
    return {
      workflowId: id,
      taskQueue: this.taskQueue,
      args: [input] as [ConversationInput],
      staticSummary: firstMessage ? firstLine(firstMessage) : `Conversation with ${input.options.model}`,
      // The Web UI renders details as Markdown: a list keeps one fact per line.
      staticDetails: [
        `- model: ${input.options.model}`,
        `- protocol: ${input.options.protocol}`,
        `- tools: ${input.options.tools.join(', ') || 'none'}`,
      ].join('\n'),
    };
  }
}

/**
 * A turn may take longer than one update RPC waits (long tool chains, a pending approval): the call then ends with
 * WorkflowUpdateRPCTimeoutOrCancelledError while the update goes on in the workflow. Ask again until it answers.
 */
async function untilAnswered<T>(call: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await call();
    } catch (err) {
      if (!(err instanceof WorkflowUpdateRPCTimeoutOrCancelledError)) throw err;
    }
  }
}

function checkMessage(text: unknown): void {
  if (typeof text !== 'string' || text.trim() === '') throw new ConversationError('invalid_message', 'The message is empty.');
  if (text.length > MAX_USER_MESSAGE_CHARS) {
    throw new ConversationError('invalid_message', `The message has ${text.length} characters; the limit is ${MAX_USER_MESSAGE_CHARS}.`);
  }
}

function quote(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
