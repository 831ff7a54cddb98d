// Message threads emulated (beta `message-threads-2026-08-12`): a request with `thread: {type: 'create'}` has its
// conversation, system prompt and tools held under its response id; `{type: 'continue', previous_message_id}` sends
// only the new messages, and the server answers the conversation it holds plus them. Each response is continued once;
// a thread lasts 5 minutes after its last response. Refusals are the API's: 404 `thread_not_found`, 400
// `thread_already_continued` / `thread_continue_in_flight` / `thread_fingerprint_mismatch` (naming the fields) /
// `thread_unsupported_request` (naming the feature in `details.unsupported`), with `details.error_code` so the SDK
// raises its typed errors.
export const THREADS_BETA = 'message-threads-2026-08-12';
/** A thread expires this long after its last stored response. */
export const THREAD_TTL_MS = 5 * 60_000;

type Json = Record<string, unknown>;

export type ThreadErrorCode =
  | 'thread_not_found'
  | 'thread_already_continued'
  | 'thread_continue_in_flight'
  | 'thread_fingerprint_mismatch'
  | 'thread_unsupported_request';

export interface ThreadRefusal {
  status: number;
  type: string;
  message: string;
  code?: ThreadErrorCode;
  unsupported?: string[];
}

/** What a stored response holds: the fields a continue may not change, and the conversation up to the response. */
interface Held {
  model: string;
  system?: unknown;
  tools?: unknown;
  messages: Json[];
  expiresAt: number;
}

/** A threaded request being answered: what is stored under its response id once the reply is complete. */
export interface PendingThread {
  /** The response id it continues (absent: it creates a thread). */
  from?: string;
  held: Omit<Held, 'expiresAt'>;
}

export type OpenedThread = { ok: true; body: Json; pending?: PendingThread } | { ok: false; refusal: ThreadRefusal };

/** The request fields the thread keeps from its create request and a continue must leave out. */
const HELD_FIELDS = ['system', 'tools'] as const;

export class Threads {
  private readonly held = new Map<string, Held>();
  /** Responses already continued (until they would have expired): a second continue from one is refused. */
  private readonly continued = new Map<string, number>();
  private readonly inFlight = new Set<string>();

  constructor(private readonly now: () => number) {}

  /** How many responses the server holds a thread under (tests check nothing lingers). */
  get size(): number {
    return this.held.size;
  }

  /** The request as the model reads it: a continue's held conversation with its new messages after it. */
  open(body: Json, betas: ReadonlySet<string>): OpenedThread {
    const thread = body['thread'];
    if (thread === undefined || thread === null) return { ok: true, body };
    const { thread: _thread, ...rest } = body;
    if (!betas.has(THREADS_BETA)) return invalid(`thread: requires the anthropic-beta header ${THREADS_BETA}`);
    const type = isObject(thread) ? thread['type'] : undefined;
    if (type !== 'create' && type !== 'continue') return invalid(`thread.type: Input should be 'create' or 'continue'`);
    const unsupported = unsupportedFeatures(body);
    if (unsupported.length > 0) {
      return refuse(400, 'thread_unsupported_request', `thread: not supported with ${unsupported.join(', ')}`, {
        unsupported,
      });
    }
    const model = String(body['model']);
    const messages = Array.isArray(body['messages']) ? (body['messages'] as Json[]) : [];
    if (type === 'create') {
      return { ok: true, body: rest, pending: { held: { model, ...heldFields(body), messages } } };
    }
    const from = (thread as Json)['previous_message_id'];
    if (typeof from !== 'string' || from === '') return invalid('thread.previous_message_id: Field required');
    for (const field of HELD_FIELDS) {
      if (field in body) return invalid(`${field}: leave it out when continuing a thread (the thread keeps its own)`);
    }
    this.sweep();
    if (this.inFlight.has(from)) {
      return refuse(400, 'thread_continue_in_flight', `Another request is still continuing from ${from}.`);
    }
    if (this.continued.has(from)) {
      return refuse(400, 'thread_already_continued', `The response ${from} has already been continued.`);
    }
    const held = this.held.get(from);
    if (!held) return refuse(404, 'thread_not_found', `No thread state was found for ${from}.`);
    if (held.model !== model) {
      return refuse(400, 'thread_fingerprint_mismatch', `These fields differ from the thread's: model.`);
    }
    this.inFlight.add(from);
    const whole = [...held.messages, ...messages];
    const expanded: Json = { ...rest, ...heldFields(held), messages: whole };
    return { ok: true, body: expanded, pending: { from, held: { ...heldFields(held), model, messages: whole } } };
  }

  /** The reply completed: the conversation with it is held under its id, and the response it continued is spent. */
  store(pending: PendingThread, replyId: string, reply: Json): void {
    this.sweep();
    const now = this.now();
    if (pending.from !== undefined) this.spend(pending.from, now);
    const held = pending.held.messages.map(withoutBreakpoints);
    // A reply to a request that ends with the assistant's paused turn continues that turn: it joins its message.
    const last = held.at(-1);
    const messages =
      last?.['role'] === 'assistant'
        ? [...held.slice(0, -1), { ...last, content: [...blocksOf(last), ...blocksOf(reply)] }]
        : [...held, reply];
    this.held.set(replyId, { ...pending.held, messages, expiresAt: now + THREAD_TTL_MS });
  }

  /** The request ended without a complete reply: the response it continued may be continued again. */
  release(pending: PendingThread): void {
    if (pending.from !== undefined) this.inFlight.delete(pending.from);
  }

  clear(): void {
    this.held.clear();
    this.continued.clear();
    this.inFlight.clear();
  }

  private spend(from: string, now: number): void {
    this.inFlight.delete(from);
    this.held.delete(from);
    this.continued.set(from, now + THREAD_TTL_MS);
  }

  /** Expired threads go; entries are in the order they were stored, so the oldest come first. */
  private sweep(): void {
    const now = this.now();
    for (const [id, held] of this.held) {
      if (held.expiresAt > now) break;
      this.held.delete(id);
    }
    for (const [id, until] of this.continued) {
      if (until > now) break;
      this.continued.delete(id);
    }
  }
}

/** The features a request combines with `thread` that threads do not support (the SDK's ThreadUnsupportedFeatureName). */
function unsupportedFeatures(body: Json): string[] {
  const features: string[] = [];
  const thinking = body['thinking'];
  if (isObject(thinking) && thinking['type'] !== 'disabled') features.push('thinking');
  if (body['context_management'] !== undefined) features.push('context_management');
  return features;
}

function heldFields(from: Json | Held): Pick<Held, 'system' | 'tools'> {
  const fields: Pick<Held, 'system' | 'tools'> = {};
  if ('system' in from && from.system !== undefined) fields.system = from.system;
  if ('tools' in from && from.tools !== undefined) fields.tools = from.tools;
  return fields;
}

/**
 * A held message without its cache breakpoints: they were set for the request that sent it, and a thread that kept
 * them all would pass the API's four soon.
 */
function withoutBreakpoints(message: Json): Json {
  const content = message['content'];
  if (!Array.isArray(content)) return message;
  return {
    ...message,
    content: content.map((block: unknown) => {
      if (!isObject(block) || !('cache_control' in block)) return block;
      const { cache_control: _breakpoint, ...rest } = block;
      return rest;
    }),
  };
}

function blocksOf(message: Json): unknown[] {
  const content = message['content'];
  return Array.isArray(content) ? content : [{ type: 'text', text: String(content) }];
}

function invalid(message: string): OpenedThread {
  return { ok: false, refusal: { status: 400, type: 'invalid_request_error', message } };
}

function refuse(
  status: number,
  code: ThreadErrorCode,
  message: string,
  extra: { unsupported?: string[] } = {},
): OpenedThread {
  const type = status === 404 ? 'not_found_error' : 'invalid_request_error';
  return { ok: false, refusal: { status, type, message, code, ...extra } };
}

/** The refusal a scripted `{fault: 'thread'}` step answers with. */
export function scriptedRefusal(code: ThreadErrorCode, message?: string, unsupported?: string[]): ThreadRefusal {
  const status = code === 'thread_not_found' ? 404 : 400;
  const refusal = refuse(status, code, message ?? `Scripted thread error: ${code}.`, {
    ...(code === 'thread_unsupported_request' && { unsupported: unsupported ?? ['thinking'] }),
  });
  return (refusal as { refusal: ThreadRefusal }).refusal;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
