// Everything a conversation remembers, as a plain class: the workflow file only wires handlers and
// activities around it, and this logic is unit-testable without Temporal. Pure and deterministic.
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import {
  type ActivityInProgress,
  type ApprovalDecision,
  type CarriedState,
  type ConversationInput,
  type ConversationOptions,
  type ConversationResult,
  type ConversationSnapshot,
  type ConversationStatus,
  MAX_USER_MESSAGE_CHARS,
  type PendingApproval,
  type TokenUsage,
  type TurnOutcome,
  type TurnResult,
} from './api';
import { addUsage, ZERO_USAGE } from './usage';

/** Open statuses; every other status means the conversation has ended. */
const OPEN: readonly ConversationStatus[] = ['running', 'awaiting_user', 'awaiting_approval'];
/** Turn results kept for callers that come back for them (`awaitTurn`), also across continue-as-new. */
const KEPT_RESULTS = 20;

export interface TurnFailure {
  turn: number;
  type: string;
  message: string;
}

/** The turn being worked on: its counters restart with every user message. */
export interface ActiveTurn {
  turn: number;
  modelCalls: number;
  toolCalls: number;
  usage: TokenUsage;
  /** The `max_tokens` rung a cut-off reply forced this turn up to; later calls of the turn start there. */
  maxTokens?: number;
}

export class ConversationState {
  readonly options: ConversationOptions;
  readonly transcript: MessageParam[];
  status: ConversationStatus = 'awaiting_user';
  lastText: string;
  modelCalls: number;
  toolCalls: number;
  usage: TokenUsage;
  runs: number;
  /** Model calls in this run: continue-as-new keeps each run's history bounded. */
  modelCallsThisRun = 0;
  endRequested = false;
  /** Set once the run decided to continue-as-new: waiting callers are told to ask the next run. */
  movingOn = false;
  active: ActiveTurn | undefined;
  /** Transcript length right after the last reply the model call cache knows about. */
  sentUpTo: number;
  /** The id of that reply (undefined before the first reply of a run). */
  lastReplyId: string | undefined;
  /** The transcript's size, kept as messages are added (checked against the limit every model call). */
  transcriptChars = 0;
  readonly running = new Map<string, ActivityInProgress>();
  readonly approvals = new Map<string, { request: PendingApproval; decision?: ApprovalDecision }>();
  private nextTurn: number;
  private readonly pending: { turn: number; text: string }[];
  private readonly results: TurnResult[];
  /** Why the conversation failed, for every caller still waiting on a turn. */
  private fatal: { type: string; message: string } | undefined;
  /** The search attribute values last written, so only changes are written (each write is a history event). */
  publishedAttributes = '';

  constructor(input: ConversationInput) {
    const carried = input.carried;
    this.options = input.options;
    this.transcript = [];
    for (const message of carried?.transcript ?? []) this.push(message);
    this.pending = carried ? [...carried.pendingMessages] : [];
    this.results = carried ? [...carried.results] : [];
    this.nextTurn = carried?.nextTurn ?? 1;
    this.modelCalls = carried?.modelCalls ?? 0;
    this.toolCalls = carried?.toolCalls ?? 0;
    this.usage = carried?.usage ?? ZERO_USAGE;
    this.runs = (carried?.runs ?? 0) + 1;
    this.lastText = carried?.lastText ?? '';
    this.active = carried?.inFlight ? { ...carried.inFlight } : undefined;
    // A new run's worker cache is empty: the first model call fetches the transcript once by query.
    this.sentUpTo = this.transcript.length;
    if (input.firstMessage !== undefined && !carried) this.enqueue(input.firstMessage);
    if (this.active || this.pending.length > 0) this.status = 'running';
  }

  get isOpen(): boolean {
    return OPEN.includes(this.status);
  }

  // ── user messages ────────────────────────────────────────────────────────────────────────────────

  /** Throws (rejecting the update before it is accepted) when the message cannot be taken. */
  validateMessage(text: unknown): void {
    if (typeof text !== 'string') throw new TypeError('The message must be a string.');
    if (text.trim() === '') throw new TypeError('The message is empty.');
    if (text.length > MAX_USER_MESSAGE_CHARS) {
      throw new TypeError(`The message has ${text.length} characters; the limit is ${MAX_USER_MESSAGE_CHARS}.`);
    }
    if (!this.isOpen || this.endRequested) throw new TypeError(`The conversation has ended (${this.status}).`);
  }

  enqueue(text: string): number {
    const turn = this.nextTurn++;
    this.pending.push({ turn, text });
    return turn;
  }

  get hasPendingMessage(): boolean {
    return this.pending.length > 0;
  }

  /** Starts the next user turn: its message enters the transcript. */
  beginTurn(): ActiveTurn {
    const next = this.pending.shift();
    if (!next) throw new Error('beginTurn without a pending message');
    this.push({ role: 'user', content: next.text });
    this.active = { turn: next.turn, modelCalls: 0, toolCalls: 0, usage: ZERO_USAGE };
    this.status = 'running';
    return this.active;
  }

  knowsTurn(turn: unknown): boolean {
    return typeof turn === 'number' && Number.isInteger(turn) && turn >= 1 && turn < this.nextTurn;
  }

  // ── model replies and tool results ───────────────────────────────────────────────────────────────

  recordModelCall(usage: TokenUsage): void {
    this.modelCalls++;
    this.modelCallsThisRun++;
    this.usage = addUsage(this.usage, usage);
    if (this.active) {
      this.active.modelCalls++;
      this.active.usage = addUsage(this.active.usage, usage);
    }
  }

  appendReply(message: MessageParam, replyId: string): void {
    this.push(message);
    this.sentUpTo = this.transcript.length;
    this.lastReplyId = replyId;
  }

  appendResults(message: MessageParam): void {
    this.push(message);
  }

  /** The transcript travels whole in the continue-as-new input, which must stay under the 2 MB payload limit. */
  get transcriptTooLarge(): boolean {
    return this.transcriptChars > this.options.limits.maxTranscriptChars;
  }

  private push(message: MessageParam): void {
    this.transcript.push(message);
    this.transcriptChars += JSON.stringify(message.content).length;
  }

  recordToolCalls(count: number): void {
    this.toolCalls += count;
    if (this.active) this.active.toolCalls += count;
  }

  /** Messages added since the last reply: what the next model call must carry. */
  newMessages(): MessageParam[] {
    return this.transcript.slice(this.sentUpTo);
  }

  // ── ending a turn ────────────────────────────────────────────────────────────────────────────────

  /** Ends the active turn with the model's last words; a final `status` ends the conversation too. */
  finishTurn(text: string, stopReason: TurnResult['stopReason'], status: ConversationStatus): TurnResult {
    const active = this.active;
    if (!active) throw new Error('finishTurn without an active turn');
    const result: TurnResult = {
      turn: active.turn,
      status,
      text,
      stopReason,
      modelCalls: active.modelCalls,
      toolCalls: active.toolCalls,
      usage: active.usage,
    };
    this.results.push(result);
    if (this.results.length > KEPT_RESULTS) this.results.shift();
    this.lastText = text;
    this.status = status;
    this.active = undefined;
    return result;
  }

  /** The conversation cannot go on: the active turn and every waiting one fail with this message. */
  failTurn(type: string, message: string): void {
    this.fatal = { type, message };
    this.active = undefined;
    this.status = 'failed';
    this.lastText = message;
  }

  /** Undefined while the turn is still being worked on. */
  outcomeOf(turn: number): TurnOutcome | TurnFailure | undefined {
    const result = this.results.find((r) => r.turn === turn);
    if (result) return { kind: 'reply', result };
    if (this.fatal) return { turn, ...this.fatal };
    if (!this.isOpen) {
      // The conversation ended before reaching this turn.
      return { turn, type: 'ConversationEnded', message: `The conversation ended (${this.status}) before turn ${turn} was answered.` };
    }
    if (this.movingOn) return { kind: 'continued', turn };
    return undefined;
  }

  // ── approvals ────────────────────────────────────────────────────────────────────────────────────

  requestApproval(request: PendingApproval): void {
    this.approvals.set(request.callId, { request });
    this.status = 'awaiting_approval';
  }

  validateDecision(decision: ApprovalDecision): void {
    if (!decision || typeof decision.callId !== 'string') throw new TypeError('The decision must name a callId.');
    const pending = this.approvals.get(decision.callId);
    if (!pending || pending.decision) throw new TypeError(`No tool call ${decision.callId} is waiting for approval.`);
    if (decision.argumentsDigest !== pending.request.argumentsDigest) {
      throw new TypeError(`The arguments of ${decision.callId} are not the ones approved (digest mismatch).`);
    }
  }

  decide(decision: ApprovalDecision): void {
    const pending = this.approvals.get(decision.callId);
    if (pending) pending.decision = decision;
  }

  settleApproval(callId: string): void {
    this.approvals.delete(callId);
    if (this.approvals.size === 0 && this.status === 'awaiting_approval') this.status = 'running';
  }

  // ── views ────────────────────────────────────────────────────────────────────────────────────────

  snapshot(): ConversationSnapshot {
    return {
      status: this.status,
      model: this.options.model,
      protocol: this.options.protocol,
      turns: this.turnsDone(),
      modelCalls: this.modelCalls,
      toolCalls: this.toolCalls,
      usage: this.usage,
      transcriptLength: this.transcript.length,
      lastText: this.lastText,
      pendingApprovals: [...this.approvals.values()].filter((a) => !a.decision).map((a) => a.request),
      running: [...this.running.values()],
      runs: this.runs,
    };
  }

  /** Turns answered so far. */
  turnsDone(): number {
    return this.nextTurn - 1 - this.pending.length - (this.active ? 1 : 0);
  }

  result(): ConversationResult {
    return {
      status: this.status,
      text: this.lastText,
      turns: this.turnsDone(),
      modelCalls: this.modelCalls,
      toolCalls: this.toolCalls,
      usage: this.usage,
      transcriptLength: this.transcript.length,
    };
  }

  carry(): CarriedState {
    return {
      transcript: this.transcript,
      results: this.results,
      pendingMessages: this.pending,
      ...(this.active && { inFlight: this.active }),
      nextTurn: this.nextTurn,
      modelCalls: this.modelCalls,
      toolCalls: this.toolCalls,
      usage: this.usage,
      runs: this.runs,
      lastText: this.lastText,
    };
  }
}
