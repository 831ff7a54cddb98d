// The typed client API: start and continue conversations, read them, approve tool calls, list them. It hides
// continue-as-new (a reply is followed to the run that produced it) and turns Temporal's errors into
// ConversationError with a code. It imports no tool code: the tool names and MCP servers a conversation may ask for
// come from configuration (`tools`, `mcpServers`) or from the workers themselves (the toolCatalog workflow), once
// per client.
import { randomUUID } from 'node:crypto';
import {
  Client,
  Connection,
  QueryNotRegisteredError,
  WithStartWorkflowOperation,
  type UpdateDefinition,
  type WorkflowHandle,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import type { z } from 'zod';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { TOOL_CATALOG_WORKFLOW, type ToolCatalog } from '../common/activity-contracts';
import type { ConversationInput } from '../common/conversation-input';
import { INPUT_FORMAT } from '../common/input-format';
import {
  type ApprovalDecision,
  CONVERSATION_WORKFLOW,
  type ConversationResult,
  type ConversationSnapshot,
  type ConversationStatus,
  type PendingApproval,
  type SubmittedMessage,
  type TurnOutcome,
  type TurnResult,
} from '../common/conversation-types';
import { type ConversationOptions, conversationOptionsSchema } from '../common/options';
import * as attributes from '../common/search-attributes';
import {
  ConversationOwner,
  ForkedFrom as ForkedFromAttribute,
  startingAttributes,
  startSearchAttributes,
} from '../common/search-attributes';
import type { ForkedFrom, ForkPoint } from '../common/fork';
import { firstLine } from '../common/summaries';
import {
  approveToolCallUpdate,
  awaitTurnUpdate,
  endConversationSignal,
  forkPointQuery,
  type MessageOptions,
  sendMessageUpdate,
  stateQuery,
  submitMessageUpdate,
  type TranscriptRange,
  transcriptQuery,
} from '../common/workflow-messages';
import type { conversation } from '../workflows/conversation';
// The workflow's own message validator (pure, deterministic code), run on a new conversation's first state before an
// update-with-start: one check for both sides, never a copy that drifts.
import { ConversationState } from '../workflows/conversation-state';
import type { StreamItem } from '../streaming/stream-events';
import { type AnswerFormat, outputSpecOf, typedResult, type TypedTurnResult } from './answer-format';
import {
  approvalSchema,
  assertMessageCall,
  conversationIdSchema,
  describeCallIssues,
  objectArgument,
  optionsObject,
  PENDING_APPROVAL_FIELDS,
  parseArgument,
  parseMessageText,
  refreshSchema,
  transcriptRangeSchema,
  turnNumberSchema,
} from './call-arguments';
import {
  clientOptionsSchema,
  type ConnectOptions,
  connectOptionsSchema,
  type ConversationClientOptions,
  DEFAULT_TURN_TIMEOUT_MS,
  type ForkOptions,
  forkOptionsSchema,
  eventsOptionsSchema,
  type ListFilter,
  listFilterSchema,
  ownerSchema,
  WEIGHT_WITHOUT_TENANT,
  weightWithoutTenant,
  type SendOptions,
  sendOptionsSchema,
  type StartOptions,
  type StreamOptions,
  streamOptionsSchema,
  type SubmitOptions,
  submitOptionsSchema,
  type WaitOptions,
  waitOptionsSchema,
} from './call-options';
import { conversationEvents, type EventsOptions } from '../streaming/client/conversation-events';
import { FailureType } from '../common/failure-types';
import { ConversationError, noWorkerAnswered, refusalCode, refusedWhileTaskFails, toConversationError } from './errors';
import { grpcStatusOf, mayAnswerLater } from './grpc-status';
import type { BatchOption } from '../common/batch-mode';
import { type Placement, prioritySchema, startPriority, tenantSchema, tenantWeightSchema } from '../common/fairness';

export interface ConversationSummary {
  id: string;
  runId: string;
  status: ConversationStatus | undefined;
  model: string | undefined;
  turns: number | undefined;
  toolCalls: number | undefined;
  /** USD so far; undefined when the model has no price (or the conversation predates costs). */
  costUsd: number | undefined;
  /** ConversationOwner: undefined for a conversation started without one. */
  owner: string | undefined;
  startTime: Date;
  closeTime: Date | undefined;
  execution: string;
}

/** A fork, as `fork` started it. */
export interface Fork {
  /** The fork's conversation id. */
  id: string;
  /**
   * The fork's first turn: its first message's (answered in the background: `awaitTurn(id, turn)`), or the next one;
   * at a step, the origin's turn it goes on with (answered in the background too).
   */
  turn: number;
  /** Its origin: the conversation, the run that answered the cut, the turn it was cut before (or inside: `step`). */
  forkedFrom: ForkedFrom;
}

/**
 * Before a message is sent, how long the client waits for a worker to show up on the task queue (one that is starting
 * polls within a second or so) before it answers `unavailable`…
 */
const WORKER_WAIT_MS = 5_000;
/**
 * …how long one look (DescribeTaskQueue) may take: a busy server (or a client process whose event loop is busy) can
 * take seconds, and a look that gives up lets a message to a queue nobody polls wait out its whole turn timeout…
 */
const WORKER_LOOK_TIMEOUT_MS = 10_000;
/** …and for how long a worker seen there is taken for granted (one DescribeTaskQueue call per this, at most). */
const WORKER_SEEN_TTL_MS = 30_000;
/**
 * A poller the server saw within this long is taken to be a live worker's. A poll waits for a task at most the
 * server's long poll (matching.longPollExpirationInterval, 1 minute by default) and the server records each poll's
 * start and end, so a live worker was seen within the last minute; a killed one's last access is the moment its polls
 * were cut, and only ages (the server lists it for 5 minutes). 10 s of slack for a busy server and clock skew.
 */
export const LIVE_POLLER_MS = 70_000;
/** How long a client waits for a worker to say which tools it registers. */
const TOOL_CATALOG_TIMEOUT = '20 seconds';

export class ConversationClient {
  readonly client: Client;
  readonly taskQueue: string;
  private readonly configuredTools: readonly string[] | undefined;
  private readonly configuredMcpServers: readonly string[] | undefined;
  private learned: Promise<ToolCatalog> | undefined;
  private readonly turnTimeoutMs: number;
  private readonly webUiUrl: string | undefined;
  /**
   * Until when a worker is taken to poll the task queue (it was seen doing so a moment ago, or the server refused to
   * say): no look is made before then.
   */
  private workerSeenUntil = 0;
  /** The look for a worker under way, which every call that needs one shares. */
  private looking: Promise<void> | undefined;

  constructor(options: ConversationClientOptions) {
    parseArgument(clientOptionsSchema, options, 'new ConversationClient', 'options');
    this.client = options.client;
    this.taskQueue = options.taskQueue;
    this.configuredTools = options.tools;
    this.configuredMcpServers = options.mcpServers;
    this.turnTimeoutMs = options.turnTimeoutMs ?? DEFAULT_TURN_TIMEOUT_MS;
    this.webUiUrl = options.webUiUrl?.replace(/\/+$/, '');
  }

  /**
   * The conversation's page in the Temporal Web UI (its latest run: every step, input and result), or undefined when
   * the client was given no `webUiUrl`.
   */
  conversationUrl(id: string): string | undefined {
    parseArgument(conversationIdSchema, id, 'conversationUrl', 'id');
    if (this.webUiUrl === undefined) return undefined;
    const namespace = encodeURIComponent(this.client.options.namespace);
    return `${this.webUiUrl}/namespaces/${namespace}/workflows/${encodeURIComponent(id)}`;
  }

  static async connect(options: ConnectOptions): Promise<ConversationClient> {
    parseArgument(connectOptionsSchema, options, 'ConversationClient.connect', 'options');
    const { address, namespace, dataConverter, connection: connectionOptions, interceptors, ...rest } = options;
    const connection = await Connection.connect({ ...connectionOptions, address }).catch((err: unknown) => {
      const reason = err instanceof Error ? err.message : String(err);
      throw new ConversationError('unavailable', `Temporal cannot be reached at ${address}: ${reason}`, undefined, {
        cause: err,
      });
    });
    const client = new Client({
      connection,
      namespace,
      ...(dataConverter && { dataConverter }),
      ...(interceptors && { interceptors }),
    });
    return new ConversationClient({ client, ...rest });
  }

  /**
   * Starts a conversation (with a first message, if given, answered in the background: `awaitTurn(id, 1)`). An id
   * that names a conversation already (running or closed) is refused with `already_started`: send it a message.
   */
  async startConversation(options: StartOptions & { firstMessage?: string } = {}): Promise<string> {
    parseArgument(optionsObject, options, 'startConversation', 'options');
    const {
      id = `conversation-${randomUUID()}`,
      firstMessage,
      owner,
      tenant,
      tenantWeight,
      priority,
      ...rest
    } = options;
    parseArgument(conversationIdSchema, id, 'startConversation', 'options.id');
    if (owner !== undefined) parseArgument(ownerSchema, owner, 'startConversation', 'options.owner');
    const placement = parsePlacement({ tenant, tenantWeight, priority }, 'startConversation', 'options');
    if (firstMessage !== undefined) parseMessageText(firstMessage, 'startConversation');
    const input: ConversationInput = {
      v: INPUT_FORMAT,
      options: await this.validate(rest),
      ...(firstMessage !== undefined && { firstMessage }),
    };
    await this.ensureWorker();
    try {
      await this.client.workflow.start<typeof conversation>(CONVERSATION_WORKFLOW, {
        ...this.startOptions(id, input, input.firstMessage, owner, placement),
        workflowIdConflictPolicy: 'FAIL',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
    } catch (err) {
      throw toConversationError(err, id);
    }
    return id;
  }

  /**
   * Forks conversation `id` at a point (`at`: before or after a turn, or after a step inside one): a new conversation whose transcript is the
   * origin's up to there (thinking blocks, tool results and compaction included), with the origin's options but those
   * `options` changes, and `message` as its first message if given. The origin is untouched; no tool runs again; no
   * pending approval, thread or event log is copied (docs/fork.md). The fork lists under `ForkedFrom = "<id>"`.
   */
  async fork(id: string, options: ForkOptions): Promise<Fork> {
    parseArgument(conversationIdSchema, id, 'fork', 'id');
    const {
      at,
      options: changes = {},
      message,
      workflowId,
      owner,
      tenant,
      tenantWeight,
      priority,
    } = parseArgument(forkOptionsSchema, options, 'fork', 'options');
    if (message !== undefined) parseMessageText(message, 'fork');
    const forkId = workflowId ?? forkIdOf(id);
    const point = await this.call('fork', id, 'query', (handle) => handle.query(forkPointQuery, at)).catch(
      (err: unknown) => {
        // The origin's refusal (no such point) comes back as a failed query.
        if (err instanceof QueryNotRegisteredError) {
          throw new ConversationError('rejected', err.message, FailureType.InvalidForkPoint, { cause: err });
        }
        throw err;
      },
    );
    const input: ConversationInput = {
      v: INPUT_FORMAT,
      options: await this.checkOptions({ ...point.options, ...changes }),
      carried: point.carried,
      forkedFrom: point.forkedFrom,
      ...(message !== undefined && { firstMessage: message }),
    };
    await this.ensureWorker();
    try {
      const start = this.startOptions(forkId, input, message, owner, { tenant, tenantWeight, priority });
      await this.client.workflow.start<typeof conversation>(CONVERSATION_WORKFLOW, {
        ...start,
        typedSearchAttributes: [...start.typedSearchAttributes, { key: ForkedFromAttribute, value: id }],
        ...this.forkDescription(point, message),
        workflowIdConflictPolicy: 'FAIL',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
    } catch (err) {
      throw toConversationError(err, forkId);
    }
    return { id: forkId, turn: point.forkedFrom.turn, forkedFrom: point.forkedFrom };
  }

  /** The Web UI's summary and details of a fork: its origin named (linked, when the UI's URL is known). */
  private forkDescription({ forkedFrom, options }: ForkPoint, message: string | undefined) {
    const { workflowId, runId, turn, step } = forkedFrom;
    const url = this.conversationUrl(workflowId);
    const origin = url ? `[${workflowId}](${url})` : workflowId;
    const where = step === undefined ? `before turn ${turn}` : `after step ${step} of turn ${turn}`;
    return {
      staticSummary: `Fork of ${workflowId} ${where}${message ? `: ${firstLine(message)}` : ''}`,
      staticDetails: [`- forked from: ${origin}, ${where} (run ${runId})`, `- origin's model: ${options.model}`].join(
        '\n',
      ),
    };
  }

  /**
   * Sends a user message and resolves with the reply once the whole turn (all its tool calls) is done.
   * With `start`, the conversation is created if it does not exist yet (update-with-start); a closed conversation is
   * never started again. With `output`, the reply's `output` is the answer as data, typed by the schema.
   */
  async sendMessage<S extends z.ZodType>(
    id: string,
    text: string,
    options: SendOptions<S> & { output: AnswerFormat<S> },
  ): Promise<TypedTurnResult<z.output<S>>>;
  async sendMessage(id: string, text: string, options?: SendOptions): Promise<TurnResult>;
  async sendMessage(id: string, text: string, options: SendOptions = {}, ...extra: unknown[]): Promise<TurnResult> {
    assertMessageCall('sendMessage', sendOptionsSchema, id, text, options, extra);
    const { start, output: answer, timeoutMs, updateId, batch, priority } = options;
    const send = await this.messageSender(
      'sendMessage',
      sendMessageUpdate,
      id,
      text,
      start,
      { answer, batch, priority },
      updateId,
    );
    const deadline = Date.now() + (timeoutMs ?? this.turnTimeoutMs);
    try {
      const outcome = await untilAnswered(this.client, deadline, send);
      const result = await this.follow(id, outcome, deadline);
      return answer ? typedResult(result, answer) : result;
    } catch (err) {
      throw await this.failure(err, id);
    }
  }

  /**
   * Queues a user message and answers as soon as the conversation took it: its turn number and the offset from which
   * `events()` shows the turn. With `start`, the conversation is created if it does not exist yet. With `output`, the
   * turn's `turn_finished` event carries its answer as data checked against that schema.
   */
  async submitMessage(
    id: string,
    text: string,
    options: SubmitOptions = {},
    ...extra: unknown[]
  ): Promise<SubmittedMessage> {
    assertMessageCall('submitMessage', submitOptionsSchema, id, text, options, extra);
    const { start, output: answer, batch, priority } = options;
    return this.submit('submitMessage', id, text, start, { answer, batch, priority });
  }

  private async submit(
    call: string,
    id: string,
    text: string,
    start: Omit<StartOptions, 'id'> | undefined,
    turn: TurnChoices,
  ): Promise<SubmittedMessage> {
    const send = await this.messageSender(call, submitMessageUpdate, id, text, start, turn);
    try {
      return await send();
    } catch (err) {
      throw await this.failure(err, id);
    }
  }

  /**
   * A message call's update, checked and ready to send (`start` and the message are checked first, see
   * messageInput): to the conversation, or with update-with-start when `start` gives a new one's options. Every call
   * of it sends the same update id: the server runs the update once and answers repeats with the same outcome.
   */
  private async messageSender<R>(
    call: string,
    update: UpdateDefinition<R, [string, MessageOptions?]>,
    id: string,
    text: string,
    start: Omit<StartOptions, 'id'> | undefined,
    { answer, batch, priority }: TurnChoices,
    updateId: string = randomUUID(),
  ): Promise<() => Promise<R>> {
    const output = answer && outputSpecOf(answer);
    const choices: MessageOptions = {
      ...(output && { output }),
      ...(batch !== undefined && { batch }),
      ...(priority !== undefined && { priority }),
    };
    const args: [string, MessageOptions?] = Object.keys(choices).length > 0 ? [text, choices] : [text];
    const input = await this.messageInput(call, start, text, args[1]);
    if (!input || !start) return () => this.handle(id).executeUpdate(update, { args, updateId });
    const { owner, tenant, tenantWeight } = start;
    // The conversation's priority is its start's; this message's own (if any) is for its turn, in `args`.
    const placement = { tenant, tenantWeight, priority: start.priority };
    return () =>
      this.client.workflow.executeUpdateWithStart(update, {
        args,
        updateId,
        startWorkflowOperation: new WithStartWorkflowOperation<typeof conversation>(CONVERSATION_WORKFLOW, {
          ...this.startOptions(id, input, text, owner, placement),
          workflowIdConflictPolicy: 'USE_EXISTING',
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
        }),
      });
  }

  /**
   * The conversation's events from `fromOffset` on, as they happen: text as the model writes it, tool calls as they
   * start, their results, approvals, turn ends. Every event once, in order, across worker crashes and continue-as-new;
   * to resume after a drop, pass the last offset seen + 1. Ends when the conversation does (or `signal` aborts).
   */
  events(id: string, options: EventsOptions = {}): AsyncGenerator<StreamItem, void, undefined> {
    parseArgument(conversationIdSchema, id, 'events', 'id');
    parseArgument(eventsOptionsSchema, options, 'events', 'options');
    return conversationEvents(this.client, id, options);
  }

  /**
   * Sends a message and yields its turn's events as they happen, ending with the turn's `turn_finished` (or
   * `turn_failed`). The streaming counterpart of `sendMessage`.
   */
  async *streamMessage(
    id: string,
    text: string,
    options: StreamOptions = {},
    ...extra: unknown[]
  ): AsyncGenerator<StreamItem, void, undefined> {
    assertMessageCall('streamMessage', streamOptionsSchema, id, text, options, extra);
    const { start, output, signal, batch, priority } = options;
    const { turn, offset } = await this.submit('streamMessage', id, text, start, { answer: output, batch, priority });
    const eventsOptions: EventsOptions = signal ? { signal } : {};
    let ours = false;
    for await (const item of this.events(id, { ...eventsOptions, fromOffset: offset })) {
      const { event } = item;
      // A message sent while another turn runs: that turn's last events come first. A sub-agent's turns are its own.
      const own = item.agent === undefined;
      ours ||= own && event.type === 'turn_started' && event.turn === turn;
      if (!ours) continue;
      yield item;
      if (own && (event.type === 'turn_finished' || event.type === 'turn_failed') && event.turn === turn) return;
    }
  }

  /** The reply to `turn` (a message sent earlier, e.g. with `startConversation({ firstMessage })`). */
  async awaitTurn(id: string, turn: number, wait: WaitOptions = {}): Promise<TurnResult> {
    parseArgument(conversationIdSchema, id, 'awaitTurn', 'id');
    parseArgument(turnNumberSchema, turn, 'awaitTurn', 'turn');
    parseArgument(waitOptionsSchema, wait, 'awaitTurn', 'wait');
    const deadline = Date.now() + (wait.timeoutMs ?? this.turnTimeoutMs);
    await this.ensureWorker();
    try {
      return await this.follow(id, { kind: 'continued', turn }, deadline);
    } catch (err) {
      throw await this.failure(err, id);
    }
  }

  async getState(id: string): Promise<ConversationSnapshot> {
    return this.call('getState', id, 'query', (handle) => handle.query(stateQuery));
  }

  async getTranscript(id: string, range?: TranscriptRange): Promise<MessageParam[]> {
    parseArgument(transcriptRangeSchema, range, 'getTranscript', 'range');
    return this.call('getTranscript', id, 'query', (handle) => handle.query(transcriptQuery, range));
  }

  /**
   * Approves or rejects a pending tool call. A state's PendingApproval with `approve` (and `reason`) added is a
   * decision too: its `tool`, `input` and `requestedAt` are dropped; any other key is refused.
   */
  async approveToolCall(
    id: string,
    decision: ApprovalDecision & Partial<Pick<PendingApproval, (typeof PENDING_APPROVAL_FIELDS)[number]>>,
  ): Promise<void> {
    parseArgument(conversationIdSchema, id, 'approveToolCall', 'id');
    parseArgument(objectArgument('a decision', false), decision, 'approveToolCall', 'decision');
    const sent = Object.fromEntries(
      Object.entries(decision).filter(([key]) => !(PENDING_APPROVAL_FIELDS as readonly string[]).includes(key)),
    );
    const parsed = parseArgument(approvalSchema, sent, 'approveToolCall', 'decision');
    return this.call('approveToolCall', id, 'update', (handle) =>
      handle.executeUpdate(approveToolCallUpdate, { args: [parsed] }),
    );
  }

  /** Ends an open conversation after the turns already sent; it completes with status `completed`. */
  async end(id: string): Promise<void> {
    return this.call('end', id, 'signal', (handle) => handle.signal(endConversationSignal));
  }

  /** Cancels the conversation at once (Temporal cancellation: running activities are cancelled). */
  async cancel(id: string): Promise<void> {
    await this.call('cancel', id, 'signal', (handle) => handle.cancel());
  }

  async waitForResult(id: string): Promise<ConversationResult> {
    return this.call('waitForResult', id, 'wait', (handle) => handle.result());
  }

  async list(filter: ListFilter = {}): Promise<ConversationSummary[]> {
    parseArgument(listFilterSchema, filter, 'list', 'filter');
    const clauses = [`WorkflowType = '${CONVERSATION_WORKFLOW}'`];
    if (filter.status) clauses.push(`${attributes.ConversationStatus.name} = ${quote(filter.status)}`);
    if (filter.model) clauses.push(`${attributes.ConversationModel.name} = ${quote(filter.model)}`);
    if (filter.owner) clauses.push(`${ConversationOwner.name} = ${quote(filter.owner)}`);
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
        costUsd: sa.get(attributes.ConversationCostUsd),
        owner: sa.get(ConversationOwner),
        startTime: execution.startTime,
        closeTime: execution.closeTime,
        execution: execution.status.name,
      });
      if (found.length >= (filter.limit ?? 100)) break;
    }
    return found;
  }

  /** The tool names a conversation may ask for: the configured ones, or those a worker of the task queue registers. */
  async tools(refresh = false): Promise<readonly string[]> {
    parseArgument(refreshSchema, refresh, 'tools', 'refresh');
    return this.configuredTools ?? (await this.catalog(refresh)).tools;
  }

  /** The MCP servers a conversation may name: the configured ones, or those a worker of the task queue has. */
  async mcpServers(refresh = false): Promise<readonly string[]> {
    parseArgument(refreshSchema, refresh, 'mcpServers', 'refresh');
    return this.configuredMcpServers ?? (await this.catalog(refresh)).mcpServers;
  }

  /** What a worker of the task queue offers (asked once, and again on `refresh`). */
  private catalog(refresh: boolean): Promise<ToolCatalog> {
    if (refresh || !this.learned) {
      // With no worker there, the question would wait TOOL_CATALOG_TIMEOUT: look for one first.
      const asking = this.ensureWorker()
        .then(() =>
          this.client.workflow.execute<() => Promise<ToolCatalog>>(TOOL_CATALOG_WORKFLOW, {
            taskQueue: this.taskQueue,
            workflowId: `tool-catalog-${randomUUID()}`,
            workflowExecutionTimeout: TOOL_CATALOG_TIMEOUT,
            staticSummary: 'Which tools and MCP servers do the workers have?',
          }),
        )
        .catch((err: unknown) => {
          this.learned = undefined;
          if (err instanceof ConversationError) throw err;
          throw new ConversationError(
            'unavailable',
            `No worker on task queue "${this.taskQueue}" said which tools it registers within ${TOOL_CATALOG_TIMEOUT}; is a worker running?`,
            undefined,
            { cause: err },
          );
        });
      this.learned = asking;
    }
    return this.learned!;
  }

  /**
   * A message waits for a worker to take it: with none on the task queue, `sendMessage` would wait out its whole turn
   * timeout. So the client looks first (DescribeTaskQueue: the workflow pollers the server saw in the last minutes,
   * each with when it last saw it), waits a few seconds for a worker that is starting, and answers `unavailable` if no
   * live one came: a poller not seen for LIVE_POLLER_MS is a dead worker's. A worker seen is trusted for
   * WORKER_SEEN_TTL_MS; calls made meanwhile share one look. A server that cannot say (an API key without the
   * permission, say) is not held against the caller: the call goes on as before.
   */
  private ensureWorker(): Promise<void> {
    if (Date.now() < this.workerSeenUntil) return Promise.resolve();
    this.looking ??= this.lookForWorker().finally(() => {
      this.looking = undefined;
    });
    return this.looking;
  }

  private async lookForWorker(): Promise<void> {
    const giveUpAt = Date.now() + WORKER_WAIT_MS;
    for (;;) {
      /** How long ago the server last saw the task queue's most recent poller; undefined: it lists none. */
      let lastSeenMsAgo: number | undefined;
      try {
        const described = await this.client.withDeadline(Date.now() + WORKER_LOOK_TIMEOUT_MS, () =>
          this.client.workflowService.describeTaskQueue({
            namespace: this.client.options.namespace,
            taskQueue: { name: this.taskQueue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
            taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
          }),
        );
        const now = Date.now();
        const ages = (described.pollers ?? []).map((poller) => now - (optionalTsToMs(poller.lastAccessTime) ?? now));
        if (ages.length > 0) lastSeenMsAgo = Math.max(0, Math.min(...ages));
      } catch (err) {
        // A server that cannot say (an API key without the permission, or too busy to answer within
        // WORKER_LOOK_TIMEOUT_MS) is not held against the caller: the call goes on as before. One that will not say
        // (a final status: no permission, no such method) is not asked again by every call for WORKER_SEEN_TTL_MS.
        if (grpcStatusOf(err) !== undefined && !mayAnswerLater(err))
          this.workerSeenUntil = Date.now() + WORKER_SEEN_TTL_MS;
        return;
      }
      if (lastSeenMsAgo !== undefined && lastSeenMsAgo <= LIVE_POLLER_MS) {
        this.workerSeenUntil = Date.now() + WORKER_SEEN_TTL_MS;
        return;
      }
      if (Date.now() >= giveUpAt) {
        const seen =
          lastSeenMsAgo === undefined
            ? `none seen within ${WORKER_WAIT_MS / 1000} s`
            : `the last one was seen ${Math.round(lastSeenMsAgo / 1000)} s ago`;
        throw new ConversationError(
          'unavailable',
          `No live worker polls task queue "${this.taskQueue}" (${seen}); is a worker running on it?`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  /**
   * A query needs a worker to answer it: with none, the server holds it about 30 s before it refuses. So unless a
   * worker was seen a moment ago, the client looks for one while the query goes out, and answers `unavailable` (and
   * cancels the query) as soon as the look finds no live worker; a live worker's answer does not wait for the look.
   */
  private withLiveWorker<T>(query: () => Promise<T>): Promise<T> {
    if (Date.now() < this.workerSeenUntil) return query();
    const controller = new AbortController();
    const answer = this.client.withAbortSignal(controller.signal, query);
    const lookedFirst = this.ensureWorker().then(
      () => answer,
      (err: unknown) => {
        controller.abort();
        throw err;
      },
    );
    return Promise.race([answer, lookedFirst]);
  }

  handle(id: string): WorkflowHandle<typeof conversation> {
    parseArgument(conversationIdSchema, id, 'handle', 'id');
    return this.client.workflow.getHandle<typeof conversation>(id);
  }

  /**
   * `fn` on the conversation's handle, once its id is checked; Temporal's errors become ConversationError. A query
   * or an update needs a live worker (`unavailable` in seconds without one); a signal or a wait does not.
   */
  private async call<T>(
    name: string,
    id: string,
    kind: 'query' | 'update' | 'signal' | 'wait',
    fn: (handle: WorkflowHandle<typeof conversation>) => Promise<T>,
  ): Promise<T> {
    parseArgument(conversationIdSchema, id, name, 'id');
    if (kind === 'update') await this.ensureWorker();
    try {
      return kind === 'query' ? await this.withLiveWorker(() => fn(this.handle(id))) : await fn(this.handle(id));
    } catch (err) {
      if (kind === 'query') throw noWorkerAnswered(err, this.taskQueue) ?? toConversationError(err, id);
      throw await this.failure(err, id);
    }
  }

  /**
   * What a call that needs an open conversation failed with, as a ConversationError: Temporal answers a call to a
   * closed one as if there were none (NOT_FOUND), or, for a message with `start`, as an id already taken; a closed
   * conversation is `rejected` (it has ended), `not_found` stays for an id that names none.
   */
  private async failure(err: unknown, id: string): Promise<unknown> {
    const mapped = noWorkerAnswered(err, this.taskQueue) ?? toConversationError(err, id);
    if (!(mapped instanceof ConversationError) || !['not_found', 'already_started'].includes(mapped.code))
      return mapped;
    const ended = await this.client.workflow
      .getHandle(id)
      .describe()
      .then(
        (described) =>
          described.status.name === 'RUNNING'
            ? undefined
            : (described.typedSearchAttributes.get(attributes.ConversationStatus) ??
              described.status.name.toLowerCase()),
        () => undefined,
      );
    if (ended === undefined) return mapped;
    return new ConversationError('rejected', `Conversation "${id}" has ended (${ended}); start a new one.`, undefined, {
      cause: err,
    });
  }

  /** Follows a turn across continue-as-new: a run that moved on answers `continued`, the next run has the reply. */
  private async follow(id: string, outcome: TurnOutcome, deadline: number): Promise<TurnResult> {
    for (let attempt = 0; outcome.kind === 'continued'; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(50 * attempt, 1000)));
      const turn = outcome.turn;
      outcome = await untilAnswered(this.client, deadline, () =>
        this.handle(id).executeUpdate(awaitTurnUpdate, { args: [turn] }),
      );
    }
    if (outcome.kind === 'failed') {
      const { type, message } = outcome.failure;
      const code = type === 'ConversationEnded' ? 'conversation_failed' : 'turn_failed';
      throw new ConversationError(code, message, type);
    }
    return outcome.result;
  }

  /** The options with defaults, or `invalid_options` naming each problem (unknown tools among them). */
  private async validate({ output, ...options }: Omit<StartOptions, 'id'>): Promise<ConversationOptions> {
    return this.checkOptions({ ...options, ...(output && { output: outputSpecOf(output) }) });
  }

  /** Options as the workflow takes them (a typed answer as its JSON Schema), checked as `validate` says. */
  private async checkOptions(options: object): Promise<ConversationOptions> {
    const parsed = conversationOptionsSchema.safeParse(options);
    if (!parsed.success) {
      throw new ConversationError(
        'invalid_options',
        `Invalid conversation options: ${describeCallIssues(parsed.error, 'options')}`,
      );
    }
    await assertKnown(parsed.data.tools, (refresh) => this.tools(refresh), 'tools: unknown tool', 'known tools');
    await assertKnown(
      parsed.data.mcpServers.map(({ server }) => server),
      (refresh) => this.mcpServers(refresh),
      'mcpServers: unknown MCP server',
      'the workers are configured with',
    );
    return parsed.data;
  }

  /**
   * A message call's new conversation (its `start`, checked), or undefined without `start`; then whether a live
   * worker will take the message. Everything is checked before anything is created: update-with-start creates the
   * conversation before its validator sees the message, so a message it would refuse left an empty open one behind.
   * Here the conversation's own validator runs on the state a new conversation starts with.
   */
  private async messageInput(
    call: string,
    start: Omit<StartOptions, 'id'> | undefined,
    text: string,
    messageOptions: MessageOptions | undefined,
  ): Promise<ConversationInput | undefined> {
    let input: ConversationInput | undefined;
    if (start) {
      const { owner, tenant, tenantWeight, priority, ...options } = start;
      if (owner !== undefined) parseArgument(ownerSchema, owner, call, 'options.start.owner');
      parsePlacement({ tenant, tenantWeight, priority }, call, 'options.start');
      input = { v: INPUT_FORMAT, options: await this.validate(options) };
      try {
        new ConversationState(input, 'not started').validateMessage(text, messageOptions);
      } catch (err) {
        if (!(err instanceof ApplicationFailure)) throw err;
        // The validator refuses with Rejected or InvalidMessageOptions: the codes the workflow's refusals get.
        const code = refusalCode(err.type) ?? 'rejected';
        throw new ConversationError(code, err.message, undefined, { cause: err });
      }
    }
    await this.ensureWorker();
    return input;
  }

  private startOptions(
    id: string,
    input: ConversationInput,
    firstMessage = input.firstMessage,
    owner?: string,
    placement: Placement = {},
  ) {
    const priority = startPriority(placement);
    return {
      workflowId: id,
      taskQueue: this.taskQueue,
      // The tenant and priority its workflow task carries; its activities and sub-agents are given them by the workflow.
      ...(priority && { priority }),
      args: [input] as [ConversationInput],
      // What the workflow would write first: listed at once, and one history event fewer (search-attributes.ts).
      typedSearchAttributes: [
        ...startSearchAttributes(startingAttributes(input.options, firstMessage !== undefined)),
        // Set once, here; nothing writes it again (common/search-attributes.ts).
        ...(owner !== undefined ? [{ key: ConversationOwner, value: owner }] : []),
      ],
      staticSummary: firstMessage ? firstLine(firstMessage) : `Conversation with ${input.options.model}`,
      // The Web UI renders details as Markdown: a list keeps one fact per line.
      staticDetails: [
        `- model: ${input.options.model}`,
        `- protocol: ${input.options.protocol}`,
        `- tools: ${input.options.tools.join(', ') || 'none'}`,
        ...(input.options.mcpServers.length > 0
          ? [`- MCP servers: ${input.options.mcpServers.map(({ server }) => server).join(', ')}`]
          : []),
      ].join('\n'),
    };
  }
}

/**
 * `invalid_options` unless every name is one `known` lists; a name it lacks makes it ask the workers again
 * (`known(true)`: a refresh, which configured names answer unchanged) before it is refused.
 */
async function assertKnown(
  names: readonly string[],
  known: (refresh: boolean) => Promise<readonly string[]>,
  unknownLabel: string,
  knownLabel: string,
): Promise<void> {
  if (names.length === 0) return;
  let listed = await known(false);
  if (names.some((name) => !listed.includes(name))) listed = await known(true);
  const unknown = names.filter((name) => !listed.includes(name));
  if (unknown.length === 0) return;
  throw new ConversationError(
    'invalid_options',
    `Invalid conversation options: ${unknownLabel} ${unknown.map((name) => `"${name}"`).join(', ')}; ${knownLabel}: ${listed.join(', ') || 'none'}`,
  );
}

/** The server's own rejection of an update no worker processed (temporalio/temporal#5169): nothing happened. */
function isUnprocessedUpdate(err: unknown): boolean {
  return (
    err instanceof WorkflowUpdateFailedError &&
    err.cause instanceof ApplicationFailure &&
    err.cause.type === 'UnprocessedUpdate'
  );
}

/**
 * A turn may take longer than one update RPC waits (long tool chains, a pending approval): the call then ends with
 * WorkflowUpdateRPCTimeoutOrCancelledError while the update goes on in the workflow. Ask again until it answers, or
 * until the caller's deadline.
 */
function untilAnswered<T>(client: Client, deadline: number, call: () => Promise<T>): Promise<T> {
  return client.withDeadline(deadline, async () => {
    for (;;) {
      try {
        return await call();
      } catch (err) {
        if ((isUnprocessedUpdate(err) || refusedWhileTaskFails(err)) && Date.now() < deadline) {
          // The server dropped the update unseen (the workflow task that would have taken it was lost, e.g. to a
          // worker or server restart), or refused it while the workflow's task is being retried: it had no effect, so
          // it is sent again, with the same id.
          await new Promise((resolve) => setTimeout(resolve, 500));
          continue;
        }
        if (!(err instanceof WorkflowUpdateRPCTimeoutOrCancelledError)) throw err;
        if (Date.now() >= deadline) {
          const message =
            'The turn has not finished yet; it goes on in the conversation (read its state, or wait again).';
          throw new ConversationError('timeout', message, undefined, { cause: err });
        }
      }
    }
  });
}

/** A fork's default id: the origin's with `-fork-` and 8 random hex digits, or a new one when that would be too long. */
function forkIdOf(origin: string): string {
  const suffix = `-fork-${randomUUID().slice(0, 8)}`;
  const id = `${origin}${suffix}`;
  return conversationIdSchema.safeParse(id).success ? id : `conversation${suffix}`;
}

/** A value as a visibility query's string literal (escaped: never a widened query). */
export function quote(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** What a message asks of its own turn besides its text: a typed answer, batch mode, a priority. */
interface TurnChoices {
  answer?: AnswerFormat | undefined;
  batch?: BatchOption | undefined;
  priority?: number | undefined;
}

/** A start's tenant, weight and priority, checked (`invalid_options` with the path `at` names), as given. */
function parsePlacement(placement: Placement, call: string, at: string): Placement {
  const { tenant, tenantWeight, priority } = placement;
  if (tenant !== undefined) parseArgument(tenantSchema, tenant, call, `${at}.tenant`);
  if (tenantWeight !== undefined) parseArgument(tenantWeightSchema, tenantWeight, call, `${at}.tenantWeight`);
  if (priority !== undefined) parseArgument(prioritySchema, priority, call, `${at}.priority`);
  if (weightWithoutTenant(placement)) {
    throw new ConversationError(
      'invalid_options',
      `Invalid options for ${call}: ${at}.tenantWeight: ${WEIGHT_WITHOUT_TENANT}`,
    );
  }
  return placement;
}
