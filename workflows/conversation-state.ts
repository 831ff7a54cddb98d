// Everything a conversation remembers, and every way it changes, as a plain class: status, turns, transcript, costs,
// prices, the context, threads, approvals and what runs now sit in private fields and change only through the named
// methods below (the Anthropic SDK's BetaToolRunner does the same). The workflow file wires handlers and activities
// around it; this logic is unit-tested without Temporal. Pure and deterministic.
import type { MessageParam, StopReason } from '@anthropic-ai/sdk/resources/messages';
import type { AgentLineage } from '../common/agents';
import type { ConversationInput } from '../common/conversation-input';
import type {
  ActivityInProgress,
  AgentAnswer,
  ApprovalDecision,
  CarriedState,
  ConversationResult,
  ConversationSnapshot,
  ConversationStatus,
  ContainerRef,
  PendingApproval,
  PendingMessage,
  TokenUsage,
  TurnFailure,
  TurnInProgress,
  TurnOutcome,
  TurnResult,
  TurnStart,
} from '../common/conversation-types';
import { OPEN_STATUSES } from '../common/conversation-types';
import {
  type CallContext,
  type CompactionRecord,
  type ContextAccounting,
  recordCall,
  recordCompaction,
  ZERO_CONTEXT,
} from '../common/context-accounting';
import { boundedMessage } from '../common/bounded-text';
import { rejection } from './rejection';
import { compactedHead } from '../common/orchestrator-summary';
import { FailureType } from '../common/failure-types';
import type { ConversationOptions } from '../common/options';
import { addUsage, ZERO_USAGE } from '../common/usage';
import { joinPausedTurn } from '../common/paused-turn';
import { closedReply, withServerToolCallsClosed } from '../common/open-server-tool-calls';
import { billedTokens, promptTokens, type BudgetScope, type Spent } from '../common/budget';
import { addCost, batchPrices, costUsd, type ModelPrices } from '../common/pricing';
import type { BatchOption } from '../common/batch-mode';
import { addModelUsage, mergeUsageByModel, type UsageByModel } from '../common/fallback-models';
import { RelayedApprovals } from './relayed-approvals';
import { jsonBytes, utf8Length } from '../common/utf8-length';
import { anchorOf, continuableFrom, type ThreadAnchor } from '../common/threads';
import { type OutputSpec, outputConflict } from '../common/structured-output';
import { cutAfterStep, cutBefore, type ForkAt, type ForkedFrom, forkTurn, MAX_TURN_STARTS } from '../common/fork';
import {
  approvalDecisionSchema,
  messageOptionsSchema,
  turnNumberSchema,
  userMessageSchema,
} from '../common/workflow-messages';

/** Turn outcomes kept for callers that come back for them (`awaitTurn`), also across continue-as-new. */
export const KEPT_OUTCOMES = 20;
/** Messages sent while the conversation works on another, waiting their turn. */
export const MAX_PENDING_MESSAGES = 100;
/** What a run carries besides the parts counted one by one (counters, keys, the JSON around them). */
const CARRIED_OVERHEAD_BYTES = 4_096;

/** A reply entering the transcript (ConversationState.appendReply). */
export interface AppendedReply {
  message: MessageParam;
  /** The API's id of the reply: the next call builds on it (the worker's cache, a thread). */
  replyId: string;
  /** The reply continues the paused turn the transcript ends with, and joins its message (paused-turn.ts). */
  joinsPausedTurn?: boolean;
  /** Why it stopped: server tool calls it leaves open go, unless it stopped where they may stay open. */
  stopReason?: StopReason | null;
}

/** How a turn ends (ConversationState.finishTurn). */
export interface TurnEnding {
  /** The model's last words, or what stopped the turn. */
  text: string;
  /** The last reply's stop reason; null (the default) when the turn ended without one. */
  stopReason?: TurnResult['stopReason'];
  /** The turn's status; a final one ends the conversation too. */
  status: ConversationStatus;
  /** The typed answer, when the turn asked for one. */
  answer?: { output: unknown };
}

/** A threaded call's reply, as far as its thread goes (common/threads.ts anchorOf). */
type ThreadedReply = Parameters<typeof anchorOf>[0];
/** Where a call continues a thread from (common/threads.ts continuableFrom). */
type ThreadContinuation = ReturnType<typeof continuableFrom>;

/**
 * Where a run replayed from an older history must do as that history did: the workflow answers each with a patch
 * marker, asked only when the answer would change what the orchestrator writes. By default, the current behaviour.
 */
export interface PatchMarkers {
  /** True in a run replayed from before texts were bounded (0.1.0 wrote them uncut), so it does again. */
  keepUncut?: () => boolean;
  /** False in a run replayed from before open server tool calls were closed (open-server-tool-calls.ts). */
  closesServerToolCalls?: () => boolean;
}

export class ConversationState {
  readonly options: ConversationOptions;
  readonly transcript: MessageParam[];
  /** With the workflow id, makes each tool call's idempotency key unique to this conversation. */
  readonly firstRunId: string;
  readonly runs: number;
  /** Where this conversation sits as a sub-agent (common/agents.ts); undefined for a conversation of its own. */
  readonly agent: AgentLineage | undefined;
  /** The conversation this one was forked from (common/fork.ts); undefined for one that is no fork. */
  readonly forkedFrom: ForkedFrom | undefined;
  /** Approvals its sub-agents wait for: shown as its own, decided through it. */
  readonly relayedApprovals = new RelayedApprovals();
  readonly #keepUncut: () => boolean;
  readonly #closesServerToolCalls: () => boolean;
  #modelCalls: number;
  #toolCalls: number;
  #usage: TokenUsage;
  /** USD so far; null once a call had no price (common/pricing.ts). */
  #costUsd: number | null;
  /** The model's prices for this run (resolved when it starts); null: unknown, costs are then unknown too. */
  #prices: ModelPrices | null = null;
  /** Fallback models' prices, resolved the first time a call goes to one in this run. */
  readonly #fallbackPrices = new Map<string, ModelPrices | null>();
  /** Usage and cost per model, kept when the conversation has fallback models (common/fallback-models.ts). */
  #byModel: UsageByModel | undefined;
  /** The last model call's usage (carried to the next run): the budget's estimate of the next call starts from it. */
  #lastCallUsage: TokenUsage | undefined;
  #lastText: string;
  /** Model calls in this run: continue-as-new keeps each run's history bounded. */
  #modelCallsThisRun = 0;
  /** The turn being worked on. */
  #currentTurn: TurnInProgress | undefined;
  /** Transcript length right after the last reply the worker's model-context cache knows about. */
  #sentUpTo: number;
  /** The id of that reply (undefined before the first reply of a run). */
  #lastReplyId: string | undefined;
  /** Input tokens per call before and after compaction or clearing, and the compactions so far. */
  #context: ContextAccounting;
  /** The code execution container the API named last (server tools): sent back with every call until it expires. */
  #container: ContainerRef | undefined;
  /** Threads on: the reply the next call may continue from (common/threads.ts); a continue takes it away. */
  #thread: ThreadAnchor | undefined;
  /** Threads on, but the API cannot thread this conversation's requests: they go whole from then on. */
  #threadsUnsupported = false;
  #status: ConversationStatus = 'awaiting_user';
  #endRequested: boolean;
  /** Set once the run decided to continue-as-new: waiting callers are told to ask the next run. */
  #handingOver = false;
  #nextTurn: number;
  #transcriptBytes = 0;
  /** The options never change; their size (the system prompt among them) is counted once. */
  readonly #optionsBytes: number;
  /** The reply id and cache position when the current turn began: a failed turn goes back to them. */
  #turnStartReply: { id: string | undefined; sentUpTo: number } = { id: undefined, sentUpTo: 0 };
  readonly #pending: PendingMessage[];
  readonly #outcomes: TurnOutcome[];
  readonly #runningNow = new Map<string, ActivityInProgress>();
  readonly #approvals = new Map<string, { request: PendingApproval; decision?: ApprovalDecision }>();
  /** The user message the current turn's message joined (see beginTurn), restored if the turn fails. */
  #joinedMessage: MessageParam | undefined;
  /** Why the conversation failed as a whole, for every caller still waiting on a turn. */
  #fatal: TurnFailure | undefined;
  /** Where each turn still in the transcript began: a fork point before it finds its message (common/fork.ts). */
  readonly #turnStarts: TurnStart[];

  constructor(input: ConversationInput, firstRunId: string, markers: PatchMarkers = {}) {
    const carried = input.carried;
    this.options = input.options;
    this.agent = input.agent;
    this.forkedFrom = input.forkedFrom;
    this.#keepUncut = markers.keepUncut ?? (() => false);
    this.#closesServerToolCalls = markers.closesServerToolCalls ?? (() => true);
    this.#optionsBytes = jsonBytes(input.options);
    this.transcript = [];
    for (const message of carried?.transcript ?? []) this.#push(message);
    this.#pending = carried ? [...carried.pendingMessages] : [];
    this.#outcomes = carried ? [...carried.outcomes] : [];
    this.#nextTurn = carried?.nextTurn ?? 1;
    this.#modelCalls = carried?.modelCalls ?? 0;
    this.#toolCalls = carried?.toolCalls ?? 0;
    this.#usage = carried?.usage ?? ZERO_USAGE;
    // A state carried from before costs were kept had calls nobody priced: unknown, not 0.
    this.#costUsd = carried ? (carried.costUsd ?? null) : 0;
    this.#lastCallUsage = carried?.lastCallUsage;
    this.runs = (carried?.runs ?? 0) + 1;
    this.#lastText = carried?.lastText ?? '';
    this.#endRequested = carried?.endRequested ?? false;
    this.firstRunId = carried?.firstRunId ?? firstRunId;
    this.#currentTurn = carried?.currentTurn ? { ...carried.currentTurn } : undefined;
    this.#turnStarts = carried?.turnStarts ? [...carried.turnStarts] : [];
    this.#context = carried?.context ?? ZERO_CONTEXT;
    this.#container = carried?.container;
    this.#thread = carried?.threadAnchor;
    this.#threadsUnsupported = carried?.threadsUnsupported === true;
    // Carried per model from a run with fallbacks or sub-agents (only those ever kept it).
    this.#byModel = carried?.byModel ?? (this.options.fallbackModels ? {} : undefined);
    // A new run's worker cache is empty: the first model call reads the transcript once by query.
    this.#sentUpTo = this.transcript.length;
    this.#turnStartReply = { id: undefined, sentUpTo: this.#currentTurn?.transcriptStart ?? this.transcript.length };
    // A fork starts from a state and may bring its first message too; a continued run never does.
    if (input.firstMessage !== undefined && (!carried || input.forkedFrom)) this.enqueue(input.firstMessage);
    if (this.#currentTurn || this.#pending.length > 0) this.#status = 'running';
  }

  /** Asked when a cap would change what the orchestrator writes (PatchMarkers). */
  get keepUncut(): () => boolean {
    return this.#keepUncut;
  }

  /** Asked when a message would drop a server tool call left open (PatchMarkers). */
  get closesServerToolCalls(): () => boolean {
    return this.#closesServerToolCalls;
  }

  get status(): ConversationStatus {
    return this.#status;
  }

  get isOpen(): boolean {
    return (OPEN_STATUSES as readonly string[]).includes(this.#status);
  }

  get endRequested(): boolean {
    return this.#endRequested;
  }

  get modelCalls(): number {
    return this.#modelCalls;
  }

  get modelCallsThisRun(): number {
    return this.#modelCallsThisRun;
  }

  get costUsd(): number | null {
    return this.#costUsd;
  }

  get byModel(): UsageByModel | undefined {
    return this.#byModel;
  }

  get lastCallUsage(): TokenUsage | undefined {
    return this.#lastCallUsage;
  }

  /** The turn being worked on. */
  get currentTurn(): Readonly<TurnInProgress> | undefined {
    return this.#currentTurn;
  }

  /** Transcript length right after the last reply the worker's model-context cache knows about. */
  get sentUpTo(): number {
    return this.#sentUpTo;
  }

  /** The id of that reply (undefined before the first reply of a run). */
  get lastReplyId(): string | undefined {
    return this.#lastReplyId;
  }

  get context(): ContextAccounting {
    return this.#context;
  }

  get thread(): ThreadAnchor | undefined {
    return this.#thread;
  }

  get threadsUnsupported(): boolean {
    return this.#threadsUnsupported;
  }

  // ── user messages ────────────────────────────────────────────────────────────────────────────────

  /** Throws a rejection (the update is refused before it is accepted) when the message cannot be taken. */
  validateMessage(text: unknown, options?: unknown): void {
    const parsed = userMessageSchema.safeParse(text);
    if (!parsed.success) throw rejection(parsed.error.issues[0]!.message);
    const output = this.messageOutput(options);
    if (!this.isOpen || this.#endRequested) throw rejection(`The conversation has ended (${this.#status}).`);
    if (this.#pending.length >= MAX_PENDING_MESSAGES) {
      throw rejection(`${MAX_PENDING_MESSAGES} messages are already waiting for an answer; send this one later.`);
    }
    const after = this.carriedBytes() + utf8Length(parsed.data) + (output ? jsonBytes(output) : 0) + 64;
    if (after > this.options.limits.maxCarriedBytes) {
      throw rejection(
        `The conversation would grow to ${after} bytes, over its limit of ${this.options.limits.maxCarriedBytes}; start a new conversation.`,
      );
    }
  }

  /**
   * The typed answer a message asks for of its own (undefined: the conversation's `output`, if any). Throws a
   * rejection when the message's options are not valid, or do not go with the conversation's (e.g. legacy XML).
   */
  messageOutput(options: unknown): OutputSpec | undefined {
    const parsed = messageOptionsSchema.safeParse(options);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'options'}: ${issue.message}`);
      throw rejection(`Invalid message options: ${problems.join('; ')}`, FailureType.InvalidMessageOptions);
    }
    const output = parsed.data?.output;
    const conflict = outputConflict(output, this.options);
    if (conflict) throw rejection(`Invalid message options: output: ${conflict}`, FailureType.InvalidMessageOptions);
    return output;
  }

  enqueue(text: string, output?: OutputSpec, batch?: BatchOption, priority?: number): number {
    const turn = this.#nextTurn++;
    this.#pending.push({
      turn,
      text,
      ...(output && { output }),
      ...(batch !== undefined && { batch }),
      ...(priority !== undefined && { priority }),
    });
    return turn;
  }

  /** The priority a message asks for its turn (undefined: the conversation's); its options were checked already. */
  messagePriority(options: unknown): number | undefined {
    const parsed = messageOptionsSchema.safeParse(options);
    return parsed.success ? parsed.data?.priority : undefined;
  }

  /** The batch mode a message asks for its turn (undefined: the conversation's); its options were checked already. */
  messageBatch(options: unknown): BatchOption | undefined {
    const parsed = messageOptionsSchema.safeParse(options);
    return parsed.success ? parsed.data?.batch : undefined;
  }

  get hasPendingMessage(): boolean {
    return this.#pending.length > 0;
  }

  requestEnd(): void {
    this.#endRequested = true;
  }

  /** Nothing to do until a person writes. */
  waitForUser(): void {
    this.#status = 'awaiting_user';
  }

  /** Starts the next user turn: its message enters the transcript. */
  beginTurn(): TurnInProgress {
    const next = this.#pending.shift();
    if (!next) throw new Error('beginTurn without a pending message');
    this.#closeOpenServerToolCalls();
    this.#turnStartReply = { id: this.#lastReplyId, sentUpTo: this.#sentUpTo };
    let message: MessageParam = { role: 'user', content: next.text };
    const last = this.transcript.at(-1);
    this.#joinedMessage = undefined;
    let joined: number | undefined;
    if (last?.role === 'user') {
      this.#joinedMessage = last;
      // The orchestrator's summary, left by a turn that failed after compacting, tool results a turn stopped by its
      // budget gathered, or the tool_result of a typed answer given with the answer tool (typed-answer.ts): the
      // message joins it.
      this.#transcriptBytes -= jsonBytes(this.transcript.pop()) + 1;
      this.#sentUpTo = Math.min(this.#sentUpTo, this.transcript.length);
      this.#turnStartReply = { id: undefined, sentUpTo: 0 };
      const blocks = typeof last.content === 'string' ? [{ type: 'text' as const, text: last.content }] : last.content;
      message = { role: 'user', content: [...blocks, { type: 'text', text: next.text }] };
      joined = blocks.length;
    }
    const transcriptStart = this.transcript.length;
    this.#push(message);
    this.#turnStarts.push({ turn: next.turn, at: transcriptStart, ...(joined !== undefined && { joined }) });
    if (this.#turnStarts.length > MAX_TURN_STARTS) this.#turnStarts.shift();
    const output = next.output ?? this.options.output;
    this.#currentTurn = {
      turn: next.turn,
      modelCalls: 0,
      toolCalls: 0,
      usage: ZERO_USAGE,
      costUsd: 0,
      transcriptStart,
      ...(output && { output, answerAttempts: 0 }),
      ...(next.batch !== undefined && { batch: next.batch }),
      ...(next.priority !== undefined && { priority: next.priority }),
    };
    this.#status = 'running';
    return this.#currentTurn;
  }

  // ── prices ───────────────────────────────────────────────────────────────────────────────────────

  /** The conversation's model's prices for this run (null: unknown, costs are then unknown too). */
  get prices(): ModelPrices | null {
    return this.#prices;
  }

  /** Resolved when the run starts (workflows/model-prices.ts). */
  setPrices(prices: ModelPrices | null): void {
    this.#prices = prices;
  }

  /** Whether this run resolved `model`'s prices as a fallback model's (null, unknown, counts as resolved). */
  hasFallbackPrices(model: string): boolean {
    return this.#fallbackPrices.has(model);
  }

  /** Resolved the first time a call of this run goes to the fallback model `model`. */
  setFallbackPrices(model: string, prices: ModelPrices | null): void {
    this.#fallbackPrices.set(model, prices);
  }

  /** The prices a call to `model` is costed and checked at (null: unknown). */
  pricesOf(model: string): ModelPrices | null {
    return model === this.options.model ? this.#prices : (this.#fallbackPrices.get(model) ?? null);
  }

  // ── model replies and tool results ───────────────────────────────────────────────────────────────

  /** Counts a model call of `model` and its tokens; returns what it cost (null: unknown). */
  recordModelCall(usage: TokenUsage, model = this.options.model, { batch = false } = {}): number | null {
    this.#modelCalls++;
    this.#modelCallsThisRun++;
    this.#lastCallUsage = usage;
    this.#usage = addUsage(this.#usage, usage);
    if (this.#currentTurn) {
      this.#currentTurn.modelCalls++;
      this.#currentTurn.usage = addUsage(this.#currentTurn.usage, usage);
    }
    return this.#addCostOf(usage, model, { answered: true, batch });
  }

  /** A model call of the orchestrator's own (a summary): its tokens count, but it is not one of the turn's calls. */
  recordExtraUsage(usage: TokenUsage, model = this.options.model): void {
    this.#usage = addUsage(this.#usage, usage);
    if (this.#currentTurn) this.#currentTurn.usage = addUsage(this.#currentTurn.usage, usage);
    this.#addCostOf(usage, model, { answered: false });
  }

  /** `answered`: a model call's reply (counted as one of the model's calls), not billed failed attempts. */
  #addCostOf(
    usage: TokenUsage,
    model: string,
    { answered, batch = false }: { answered: boolean; batch?: boolean },
  ): number | null {
    const listed = this.pricesOf(model);
    // A call answered through a Message Batch is billed at the batch rate (common/pricing.ts).
    const prices = listed && batch ? batchPrices(listed) : listed;
    const cost = prices ? costUsd(usage, prices) : null;
    this.#costUsd = addCost(this.#costUsd, cost);
    if (this.#currentTurn) this.#currentTurn.costUsd = addCost(this.#currentTurn.costUsd ?? null, cost);
    if (this.#byModel) {
      this.#byModel = addModelUsage(this.#byModel, model, usage, cost, answered);
      if (this.#currentTurn) {
        this.#currentTurn.byModel = addModelUsage(this.#currentTurn.byModel, model, usage, cost, answered);
      }
    }
    return cost;
  }

  /**
   * A sub-agent's spending, once it has ended: the conversation's and the turn's usage and cost include it, and from
   * now on they are kept per model too (a child may run on another model).
   */
  recordAgentSpend(spend: {
    model: string;
    modelCalls: number;
    usage: TokenUsage;
    costUsd: number | null;
    byModel?: UsageByModel;
  }): void {
    const parts = spend.byModel ?? {
      [spend.model]: { calls: spend.modelCalls, usage: spend.usage, costUsd: spend.costUsd },
    };
    const turn = this.#currentTurn;
    if (!this.#byModel) {
      // Until now only this conversation's own model spent anything.
      const own = { [this.options.model]: { calls: this.#modelCalls, usage: this.#usage, costUsd: this.#costUsd } };
      this.#byModel = own;
      if (turn) {
        turn.byModel = {
          [this.options.model]: { calls: turn.modelCalls, usage: turn.usage, costUsd: turn.costUsd ?? null },
        };
      }
    }
    this.#usage = addUsage(this.#usage, spend.usage);
    this.#costUsd = addCost(this.#costUsd, spend.costUsd);
    this.#byModel = mergeUsageByModel(this.#byModel, parts);
    if (turn) {
      turn.usage = addUsage(turn.usage, spend.usage);
      turn.costUsd = addCost(turn.costUsd ?? null, spend.costUsd);
      turn.byModel = mergeUsageByModel(turn.byModel, parts);
    }
  }

  /** What the current turn and the conversation have spent, for the budget (common/budget.ts). */
  spent(): { turn: Spent; conversation: Spent } {
    const turn = this.#currentTurn;
    return {
      turn: { tokens: turn ? billedTokens(turn.usage) : 0, usd: turn ? (turn.costUsd ?? null) : 0 },
      conversation: { tokens: billedTokens(this.#usage), usd: this.#costUsd },
    };
  }

  /** The last call's prompt in this run (input, cache writes and reads), if there was one. */
  get lastPromptTokens(): number | undefined {
    return this.#lastCallUsage && promptTokens(this.#lastCallUsage);
  }

  /**
   * The context was compacted: the first `count` messages give way to `head` (nothing when the API's compaction block
   * now opens the transcript; the orchestrator's summary otherwise). A turn that began among them now begins at the
   * head, and if it fails it goes back to the compaction alone.
   */
  compactHead(count: number, head: MessageParam[]): void {
    const removed = this.transcript.splice(0, count, ...head);
    for (const message of removed) this.#transcriptBytes -= jsonBytes(message) + 1;
    for (const message of head) this.#transcriptBytes += jsonBytes(message) + 1;
    const shift = head.length - count;
    this.#sentUpTo = Math.max(0, this.#sentUpTo + shift);
    // Turns whose user message gave way to the head cannot be forked before any more; the others moved.
    const kept = this.#turnStarts
      .filter((start) => start.at >= count)
      .map((start) => ({ ...start, at: start.at + shift }));
    this.#turnStarts.splice(0, this.#turnStarts.length, ...kept);
    // The API's thread holds the transcript as it was: the next call starts a new one.
    this.#thread = undefined;
    if (this.#currentTurn && this.#currentTurn.transcriptStart < count) {
      this.#currentTurn.transcriptStart = 0;
      this.#turnStartReply = { id: undefined, sentUpTo: 0 };
    } else if (this.#currentTurn) {
      this.#currentTurn.transcriptStart += shift;
      this.#turnStartReply = { ...this.#turnStartReply, sentUpTo: Math.max(0, this.#turnStartReply.sentUpTo + shift) };
    }
  }

  // ── the context ──────────────────────────────────────────────────────────────────────────────────

  /** A reply came: its call's input tokens before and after any compaction or clearing, and its output tokens. */
  recordCallContext(call: CallContext, outputTokens: number): void {
    this.#context = recordCall(this.#context, call, outputTokens);
  }

  /** The context was compacted (by the API or the orchestrator): counted, and its summary kept (shortened). */
  recordCompaction(compaction: CompactionRecord): void {
    this.#context = recordCompaction(this.#context, compaction);
  }

  /** The code execution container a reply named: sent back with every call until it expires (liveContainer). */
  setContainer(container: ContainerRef): void {
    this.#container = container;
  }

  /** The code execution container to send back: the one the API named last, until its expiry (workflow time). */
  liveContainer(): string | undefined {
    return this.#container && Date.parse(this.#container.expiresAt) > Date.now() ? this.#container.id : undefined;
  }

  // ── message threads (common/threads.ts) ──────────────────────────────────────────────────────────

  /**
   * The thread the next call of a step continues, if it may; a reply is continued once, whatever comes of the call,
   * so the anchor goes as the call takes it.
   */
  takeThreadContinuation(call: { firstOfStep: boolean; joinsPausedTurn: boolean }): ThreadContinuation {
    const continuing = continuableFrom(
      this.#thread,
      { lastReplyId: this.#lastReplyId, transcriptLength: this.transcript.length },
      call,
    );
    if (continuing) this.#thread = undefined;
    return continuing;
  }

  /** A threaded call's reply: the anchor it leaves (none after some replies); one that went unthreaded ends threads. */
  recordThreadUse(reply: ThreadedReply): void {
    this.#thread = anchorOf(reply);
    if (reply.thread?.mode === 'unthreaded') this.#threadsUnsupported = true;
  }

  /** A typed answer was checked (right or wrong); `forceAnswer`: the next call must call the answer tool. */
  recordAnswerAttempt({ forceAnswer }: { forceAnswer: boolean }): number {
    const turn = this.#currentTurn;
    if (!turn) throw new Error('no turn is in progress');
    turn.answerAttempts = (turn.answerAttempts ?? 0) + 1;
    if (forceAnswer) turn.forceAnswer = true;
    else delete turn.forceAnswer;
    return turn.answerAttempts;
  }

  /** A cut-off reply forced the turn up the `max_tokens` ladder: later calls of the turn start there. */
  raiseMaxTokens(maxTokens: number): void {
    if (this.#currentTurn) this.#currentTurn.maxTokens = maxTokens;
  }

  /** A model's reply enters the transcript (what the next call builds on). */
  appendReply({ message, replyId, joinsPausedTurn = false, stopReason = null }: AppendedReply): void {
    const last = this.transcript.at(-1);
    const joined = joinsPausedTurn && last?.role === 'assistant';
    if (joined) this.#transcriptBytes -= jsonBytes(this.transcript.pop()) + 1;
    const reply = joined ? joinPausedTurn(last, message) : message;
    const closed = closedReply(this.transcript, reply, stopReason);
    this.#push(closed !== reply && this.closesServerToolCalls() ? closed : reply);
    this.#sentUpTo = this.transcript.length;
    this.#lastReplyId = replyId;
    if (this.#thread?.id === replyId) this.#thread = { ...this.#thread, at: this.transcript.length };
  }

  /**
   * A user message is about to follow the last reply: server tool calls still open in it (a paused turn the budget or
   * a limit stopped, or a reply that stopped for tool calls whose results the model never read — the new message joins
   * them) would now be refused by the API, so they go. The worker's copy and the API's thread hold the message as it
   * was: the next call sends it again, and starts a new thread.
   */
  #closeOpenServerToolCalls(): void {
    const at = this.transcript.at(-1)?.role === 'assistant' ? this.transcript.length - 1 : this.transcript.length - 2;
    const open = this.transcript[at];
    if (!open || open.role !== 'assistant') return;
    const closed = withServerToolCallsClosed(open);
    if (closed === open || !this.closesServerToolCalls()) return;
    this.transcript[at] = closed;
    this.#transcriptBytes += jsonBytes(closed) - jsonBytes(open);
    this.#sentUpTo = Math.min(this.#sentUpTo, at);
    this.#lastReplyId = undefined;
    this.#thread = undefined;
  }

  /** What the orchestrator writes: every text in it bounded (common/bounded-text.ts), unless `keepUncut()`. */
  appendResults(message: MessageParam): void {
    const bounded = boundedMessage(message, this.options.protocol, this.options.limits.maxResultChars);
    this.#push(bounded === message || !this.keepUncut() ? bounded : message);
  }

  /** Whether `count` more tool calls would take the current turn past `limits.maxToolCallsPerTurn`. */
  wouldPassToolCallLimit(count: number): boolean {
    return (this.#currentTurn?.toolCalls ?? 0) + count > this.options.limits.maxToolCallsPerTurn;
  }

  /**
   * Ends the turn `limit_reached` when `count` more tool calls would take it past `limits.maxToolCallsPerTurn`, before
   * any of them runs; true when it did.
   */
  stopAtToolCallLimit(count: number, stopReason: StopReason | null): boolean {
    if (!this.wouldPassToolCallLimit(count)) return false;
    this.finishTurn({
      text: `Stopped: the model asked for more than ${this.options.limits.maxToolCallsPerTurn} tool calls in one turn.`,
      stopReason,
      status: 'limit_reached',
    });
    return true;
  }

  recordToolCalls(count: number): void {
    this.#toolCalls += count;
    if (this.#currentTurn) this.#currentTurn.toolCalls += count;
  }

  /** Messages added since the last reply: what the next model call must carry. */
  newMessages(): MessageParam[] {
    return this.transcript.slice(this.#sentUpTo);
  }

  /**
   * The UTF-8 size of what this run would hand to the next: the transcript, queued messages, kept outcomes, the
   * options (the system prompt among them) and the rest. It must stay under the payload limit, or continue-as-new
   * would fail its workflow task for ever.
   */
  carriedBytes(): number {
    return (
      this.#transcriptBytes +
      jsonBytes(this.#pending) +
      jsonBytes(this.#outcomes) +
      this.#optionsBytes +
      utf8Length(this.#lastText) +
      CARRIED_OVERHEAD_BYTES
    );
  }

  get tooLargeToCarry(): boolean {
    return this.carriedBytes() > this.options.limits.maxCarriedBytes;
  }

  #push(message: MessageParam): void {
    this.transcript.push(message);
    this.#transcriptBytes += jsonBytes(message) + 1;
  }

  // ── what runs now ────────────────────────────────────────────────────────────────────────────────

  startActivity(key: string, activity: ActivityInProgress): void {
    this.#runningNow.set(key, activity);
  }

  finishActivity(key: string): void {
    this.#runningNow.delete(key);
  }

  // ── ending a turn ────────────────────────────────────────────────────────────────────────────────

  /**
   * Ends the current turn with the model's last words (and its typed answer, when the turn asked for one); a final
   * `status` ends the conversation too.
   */
  finishTurn({ text, stopReason = null, status, answer }: TurnEnding): TurnResult {
    const turn = this.#takeCurrentTurn();
    const result: TurnResult = {
      turn: turn.turn,
      status,
      text,
      stopReason,
      modelCalls: turn.modelCalls,
      toolCalls: turn.toolCalls,
      usage: turn.usage,
      ...(answer && { output: answer.output }),
      costUsd: turn.costUsd ?? null,
      ...(this.#byModel && { byModel: turn.byModel ?? {} }),
    };
    this.#keep({ kind: 'reply', result });
    this.#lastText = text;
    this.#status = status;
    return result;
  }

  /**
   * A budget ran out before the next model call: the turn ends with `budget_exhausted`, keeping what it gathered (tool
   * results the model has not read yet stay in the transcript, which remains valid: the next message joins them). A
   * turn's budget leaves the conversation open; the conversation's budget ends it.
   */
  finishTurnOverBudget(message: string, scope: BudgetScope): TurnResult {
    const result = this.finishTurn({ text: message, status: 'budget_exhausted' });
    // A one-shot question has no next turn: it ends as its turn did.
    if (scope === 'turn' && !this.options.closeAfterFirstReply) this.#status = 'awaiting_user';
    return result;
  }

  /**
   * The current turn failed (its model call was refused: a revoked key, a billing lapse…); the conversation goes on.
   * The turn's messages leave the transcript, so the next message starts from the last good reply.
   */
  failTurn(failure: TurnFailure): void {
    const turn = this.#takeCurrentTurn();
    this.#keep({ kind: 'failed', turn: turn.turn, failure });
    // Its message leaves the transcript: nothing to fork before.
    const started = this.#turnStarts.findIndex((start) => start.turn === turn.turn);
    if (started >= 0) this.#turnStarts.splice(started, 1);
    // A turn that compacted the context keeps the compaction: it stands for the turns before it too.
    // Tool results a budget-stopped turn left are put back: the model's tool calls before them need them.
    const joined = this.#joinedMessage ? [this.#joinedMessage] : [];
    const head = turn.transcriptStart === 0 ? compactedHead(this.transcript) : joined;
    while (this.transcript.length > turn.transcriptStart) this.#transcriptBytes -= jsonBytes(this.transcript.pop()) + 1;
    for (const message of head) this.#push(message);
    // The worker's cached copy may hold the failed turn's replies: point the next call at the last good reply.
    this.#lastReplyId = this.#turnStartReply.id;
    this.#sentUpTo = Math.min(this.#turnStartReply.sentUpTo, this.transcript.length);
    // A thread anchored in the failed turn holds what the transcript no longer has.
    if (this.#thread?.id !== this.#lastReplyId) this.#thread = undefined;
    this.#lastText = failure.message;
    this.#status = 'awaiting_user';
  }

  /** The conversation cannot go on: the current turn and every waiting one fail with this. */
  failConversation(failure: TurnFailure): void {
    this.#fatal = failure;
    if (this.#currentTurn) this.#keep({ kind: 'failed', turn: this.#takeCurrentTurn().turn, failure });
    this.#status = 'failed';
    this.#lastText = failure.message;
  }

  /** A final status without a turn to end (idle timeout, `end()`, cancellation). */
  close(status: Exclude<ConversationStatus, (typeof OPEN_STATUSES)[number]>): void {
    this.#status = status;
  }

  /** Waiting callers are told to ask the next run from now on. */
  handOver(): void {
    this.#handingOver = true;
  }

  #takeCurrentTurn(): TurnInProgress {
    const turn = this.#currentTurn;
    if (!turn) throw new Error('no turn is in progress');
    this.#currentTurn = undefined;
    return turn;
  }

  #keep(outcome: TurnOutcome): void {
    this.#outcomes.push(outcome);
    if (this.#outcomes.length > KEPT_OUTCOMES) this.#outcomes.shift();
  }

  // ── callers waiting on turns ─────────────────────────────────────────────────────────────────────

  /** Throws a rejection unless `turn` names a turn whose outcome is still known or still to come. */
  validateAwaitTurn(turn: unknown): void {
    const parsed = turnNumberSchema.safeParse(turn);
    if (!parsed.success) throw rejection('A turn is a whole number from 1 on.');
    if (parsed.data >= this.#nextTurn) throw rejection(`This conversation has no turn ${parsed.data}.`);
    if (this.outcomeOf(parsed.data) !== undefined || this.#isWaiting(parsed.data)) return;
    throw rejection(
      `Turn ${parsed.data}'s outcome is no longer kept (only the last ${KEPT_OUTCOMES} are); read the transcript instead.`,
    );
  }

  #isWaiting(turn: number): boolean {
    return this.#currentTurn?.turn === turn || this.#pending.some((message) => message.turn === turn);
  }

  get lastOutcome(): TurnOutcome | undefined {
    return this.#outcomes.at(-1);
  }

  /** Undefined while the turn is still being worked on (or waits for its turn). */
  outcomeOf(turn: number): TurnOutcome | undefined {
    const kept = this.#outcomes.find(
      (outcome) => (outcome.kind === 'reply' ? outcome.result.turn : outcome.turn) === turn,
    );
    if (kept) return kept;
    if (!this.#isWaiting(turn)) return undefined;
    if (this.#fatal) return { kind: 'failed', turn, failure: this.#fatal };
    if (!this.isOpen) {
      const message = `The conversation ended (${this.#status}) before turn ${turn} was answered.`;
      return { kind: 'failed', turn, failure: { type: FailureType.ConversationEnded, message } };
    }
    if (this.#handingOver) return { kind: 'continued', turn };
    return undefined;
  }

  // ── approvals ────────────────────────────────────────────────────────────────────────────────────

  requestApproval(request: PendingApproval): void {
    this.#approvals.set(request.callId, { request });
    this.#status = 'awaiting_approval';
  }

  /** A sub-agent's call waits for approval (it came up from child `via`); false when too many wait already. */
  relayApproval(approval: PendingApproval & { agent: string }, via: string): boolean {
    if (!this.relayedApprovals.add(approval, via)) return false;
    this.#status = 'awaiting_approval';
    return true;
  }

  /**
   * A sub-agent's call was settled down there (news from child `via`); `via` alone: that child ended, with whatever
   * it still had waiting.
   */
  settleRelayed(settled: { via: string; agent?: string; callId?: string }): void {
    if (settled.agent === undefined || settled.callId === undefined) this.relayedApprovals.dropVia(settled.via);
    else this.relayedApprovals.settle(settled.agent, settled.callId, settled.via);
    this.#leaveAwaitingApproval();
  }

  /** A decision went down to the sub-agent: nobody is asked for it any more. */
  markRelayedDecided(agent: string, callId: string): void {
    this.relayedApprovals.markDecided(agent, callId);
    this.#leaveAwaitingApproval();
  }

  #leaveAwaitingApproval(): void {
    const waiting = [...this.#approvals.values()].some((a) => !a.decision) || this.relayedApprovals.anyPending;
    if (!waiting && this.#status === 'awaiting_approval') this.#status = 'running';
  }

  /** Throws a rejection unless `decision` is a whole, well-typed answer to a call that waits for one. */
  validateDecision(decision: unknown): void {
    const parsed = approvalDecisionSchema.safeParse(decision);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'decision'}: ${issue.message}`);
      throw rejection(`Invalid approval decision: ${problems.join('; ')}`);
    }
    const { callId, argumentsDigest, agent } = parsed.data;
    const own = agent === undefined ? this.#approvals.get(callId) : undefined;
    let request = own && !own.decision ? own.request : undefined;
    if (!request) {
      // None of its own: one of its sub-agents' (relayed-approvals.ts), if any waits with that id.
      const found = this.relayedApprovals.find(callId, agent);
      if ('problem' in found) throw rejection(found.problem);
      request = found.relayed.approval;
    }
    if (argumentsDigest !== request.argumentsDigest) {
      throw rejection(`The arguments of ${callId} are not the ones approved (digest mismatch).`);
    }
  }

  /**
   * Takes a decision validateDecision let in: a call of its own is decided here; a sub-agent's is marked decided and
   * returned with the child it must go down to.
   */
  decide(decision: ApprovalDecision): { via: string; agent: string } | undefined {
    const checked = approvalDecisionSchema.parse(decision);
    const waiting = checked.agent === undefined ? this.#approvals.get(checked.callId) : undefined;
    if (waiting && !waiting.decision) {
      waiting.decision = checked;
      return undefined;
    }
    const found = this.relayedApprovals.find(checked.callId, checked.agent);
    if ('problem' in found) return undefined;
    const { approval, via } = found.relayed;
    this.markRelayedDecided(approval.agent, approval.callId);
    return { via, agent: approval.agent };
  }

  decisionOf(callId: string): ApprovalDecision | undefined {
    return this.#approvals.get(callId)?.decision;
  }

  /** The call got its answer (or none came in time): it no longer waits. */
  settleApproval(callId: string): void {
    this.#approvals.delete(callId);
    // A sub-agent's call already decided waits for nobody here, even before its child says it settled. (Its own
    // decided calls still count until settled, as recorded histories have it.)
    const relayedWaiting = this.relayedApprovals.anyPending;
    if (this.#approvals.size === 0 && !relayedWaiting && this.#status === 'awaiting_approval') {
      this.#status = 'running';
    }
  }

  // ── views ────────────────────────────────────────────────────────────────────────────────────────

  snapshot(): ConversationSnapshot {
    return {
      status: this.#status,
      model: this.options.model,
      protocol: this.options.protocol,
      turns: this.turnsDone(),
      modelCalls: this.#modelCalls,
      toolCalls: this.#toolCalls,
      usage: this.#usage,
      costUsd: this.#costUsd,
      ...(this.#byModel && { byModel: this.#byModel }),
      transcriptLength: this.transcript.length,
      lastText: this.#lastText,
      pendingApprovals: [
        ...[...this.#approvals.values()].filter((a) => !a.decision).map((a) => a.request),
        ...this.relayedApprovals.pending(),
      ],
      running: [...this.#runningNow.values()],
      runs: this.runs,
      context: this.#context,
      ...(this.forkedFrom && { forkedFrom: this.forkedFrom }),
    };
  }

  /** Turns answered (or failed) so far. */
  turnsDone(): number {
    return this.#nextTurn - 1 - this.#pending.length - (this.#currentTurn ? 1 : 0);
  }

  result(): ConversationResult {
    return {
      status: this.#status,
      text: this.#lastText,
      turns: this.turnsDone(),
      modelCalls: this.#modelCalls,
      toolCalls: this.#toolCalls,
      usage: this.#usage,
      costUsd: this.#costUsd,
      ...(this.#byModel && { byModel: this.#byModel }),
      transcriptLength: this.transcript.length,
      ...(this.agent && { agentAnswer: this.#agentAnswer() }),
    };
  }

  /** How a sub-agent's one turn ended, for its parent. */
  #agentAnswer(): AgentAnswer {
    const last = this.lastOutcome;
    const model = this.options.model;
    if (last?.kind === 'failed') return { model, status: 'failed', failure: last.failure };
    if (last?.kind === 'reply') {
      return { model, status: last.result.status, ...('output' in last.result && { output: last.result.output }) };
    }
    return { model, status: this.#status };
  }

  /** What the next run starts from. */
  toCarriedState(): CarriedState {
    return {
      transcript: this.transcript,
      outcomes: this.#outcomes,
      pendingMessages: this.#pending,
      ...(this.#currentTurn && { currentTurn: this.#currentTurn }),
      nextTurn: this.#nextTurn,
      modelCalls: this.#modelCalls,
      toolCalls: this.#toolCalls,
      usage: this.#usage,
      runs: this.runs,
      lastText: this.#lastText,
      endRequested: this.#endRequested,
      firstRunId: this.firstRunId,
      context: this.#context,
      costUsd: this.#costUsd,
      ...(this.#lastCallUsage && { lastCallUsage: this.#lastCallUsage }),
      ...(this.#container && { container: this.#container }),
      ...(this.#byModel && { byModel: this.#byModel }),
      ...(this.#thread && { threadAnchor: this.#thread }),
      ...(this.#threadsUnsupported && { threadsUnsupported: true as const }),
      ...(this.#turnStarts.length > 0 && { turnStarts: this.#turnStarts }),
    };
  }

  /**
   * This conversation's state cut at `at` (common/fork.ts), for a fork to start from; throws a rejection saying why
   * there is no such point. Bounded: one pass over the transcript and the turn starts.
   */
  forkPoint(at: ForkAt): { carried: CarriedState; turn: number; step?: number } {
    const source = {
      transcript: this.transcript,
      turnStarts: this.#turnStarts,
      outcomes: this.#outcomes,
      currentTurn: this.#currentTurn?.turn,
      firstUnended: this.#currentTurn?.turn ?? this.#pending[0]?.turn ?? this.#nextTurn,
    };
    const named = forkTurn(source, at);
    if ('problem' in named) throw rejection(named.problem, FailureType.InvalidForkPoint);
    if ('afterStep' in at) {
      const inside = cutAfterStep(source, at.afterStep);
      if ('problem' in inside) throw rejection(inside.problem, FailureType.InvalidForkPoint);
      return { carried: inside.carried, turn: named.turn, step: inside.step };
    }
    const cut = cutBefore(source, named.turn);
    if ('problem' in cut) throw rejection(cut.problem, FailureType.InvalidForkPoint);
    return { carried: cut.carried, turn: named.turn };
  }
}
