// Message Batches emulated (`/v1/messages/batches`): create, retrieve, list, cancel, and results as JSONL. Each request
// of a batch is answered the way `POST /v1/messages` answers it (the server passes an `answer` function that sends it
// there: validation, scripts and the demo model included); a batch stays `in_progress` until every request is answered
// and `delayMs` has passed since its creation, then it is `ended` and its results can be read.
//
// A script step `{fault: 'batch-result', result}` shapes one request's result line: `expired`, a `malformed` line (not
// JSON), or a line under an `unknown_custom_id`. A request the API refuses (a 400, a scripted status) ends `errored`
// with that error. Cancelling before the batch ended cancels every request not yet released (all of them here: a
// batch's results are released together). No timers: a batch's state is read from the clock when asked.
import { randomBytes } from 'node:crypto';

export type Json = Record<string, unknown>;

/** What `POST /v1/messages` answered one request of a batch with. */
export interface AnsweredRequest {
  status: number;
  body: unknown;
  /** A scripted `batch-result` step's verdict on this request's line. */
  shaped?: 'expired' | 'malformed' | 'unknown_custom_id';
}

export type AnswerRequest = (
  params: Json,
  headers: Record<string, string>,
  batchId: string,
) => Promise<AnsweredRequest>;

export type BatchResult =
  | { type: 'succeeded'; message: unknown }
  | { type: 'errored'; error: unknown }
  | { type: 'canceled' }
  | { type: 'expired' };

interface BatchRequest {
  customId: string;
  answered?: AnsweredRequest;
}

interface Batch {
  id: string;
  createdAt: number;
  /** When its results are released, at the earliest. */
  readyAt: number;
  expiresAt: number;
  canceledAt?: number;
  endedAt?: number;
  requests: BatchRequest[];
  /** Settles once every request has an answer. */
  answered: Promise<void>;
}

/** What `POST /v1/messages/batches` was refused for (400 `invalid_request_error`). */
export interface BatchRefusal {
  ok: false;
  message: string;
}

const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;
/** The API's limit on requests per batch. */
export const MAX_BATCH_REQUESTS = 100_000;
/** A batch expires 24 hours after its creation. */
const EXPIRY_MS = 24 * 60 * 60 * 1000;
/** Batches kept for `list` and results, oldest dropped first (a soak creates thousands). */
const MAX_BATCHES_KEPT = 10_000;

export function batchId(): string {
  return `msgbatch_01${randomBytes(18).toString('base64url').replace(/[-_]/g, 'x').slice(0, 24)}`;
}

export class MessageBatches {
  private readonly batches = new Map<string, Batch>();

  constructor(
    private readonly answer: AnswerRequest,
    private readonly now: () => number,
    /** How long a batch stays `in_progress` at least; changed by `setDelay`. */
    public delayMs: number,
    /** Where results are read: `<baseUrl>/v1/messages/batches/<id>/results`. */
    private readonly baseUrl: () => string,
  ) {}

  /** Checks a create body and starts answering its requests; refusals are the API's 400s. */
  create(body: unknown, headers: Record<string, string>): Json | BatchRefusal {
    const requests = isObject(body) ? body['requests'] : undefined;
    if (!Array.isArray(requests) || requests.length === 0)
      return refuse('requests: expected a non-empty array of {custom_id, params}');
    if (requests.length > MAX_BATCH_REQUESTS) return refuse(`requests: at most ${MAX_BATCH_REQUESTS} per batch`);
    const seen = new Set<string>();
    for (const [i, request] of requests.entries()) {
      if (!isObject(request)) return refuse(`requests.${i}: expected an object`);
      const customId = request['custom_id'];
      if (typeof customId !== 'string' || !CUSTOM_ID.test(customId))
        return refuse(`requests.${i}.custom_id: expected 1 to 64 characters of [a-zA-Z0-9_-]`);
      if (seen.has(customId)) return refuse(`requests.${i}.custom_id: ${customId} is not unique in this batch`);
      seen.add(customId);
      if (!isObject(request['params'])) return refuse(`requests.${i}.params: expected an object`);
      if (request['params']['stream'] === true) return refuse(`requests.${i}.params.stream: not allowed in a batch`);
    }
    const createdAt = this.now();
    const id = batchId();
    const entries: BatchRequest[] = requests.map((r) => ({ customId: (r as Json)['custom_id'] as string }));
    // Answered one after another: a batch of a thousand must not open a thousand sockets at once.
    const answered = (async () => {
      for (const [i, entry] of entries.entries()) {
        const params = (requests[i] as Json)['params'] as Json;
        entry.answered = await this.answer(params, headers, id).catch((err: unknown) => ({
          status: 500,
          body: { type: 'error', error: { type: 'api_error', message: `local batch: ${String(err)}` } },
        }));
      }
    })();
    const batch: Batch = {
      id,
      createdAt,
      readyAt: createdAt + this.delayMs,
      expiresAt: createdAt + EXPIRY_MS,
      requests: entries,
      answered,
    };
    this.batches.set(id, batch);
    while (this.batches.size > MAX_BATCHES_KEPT) this.batches.delete(this.batches.keys().next().value!);
    return this.view(batch);
  }

  retrieve(id: string): Json | undefined {
    const batch = this.batches.get(id);
    return batch && this.view(batch);
  }

  /** Newest first, as the API lists them; `limit` 1–1000 (default 20), `after_id`/`before_id` paging. */
  list(query: URLSearchParams): Json {
    const limit = Math.min(1000, Math.max(1, Number(query.get('limit') ?? 20) || 20));
    let all = [...this.batches.values()].reverse();
    const after = query.get('after_id');
    const before = query.get('before_id');
    if (after) all = all.slice(all.findIndex((b) => b.id === after) + 1);
    if (before)
      all = all.slice(
        0,
        Math.max(
          0,
          all.findIndex((b) => b.id === before),
        ),
      );
    const page = all.slice(0, limit).map((b) => this.view(b));
    return {
      data: page,
      has_more: all.length > limit,
      first_id: (page[0]?.['id'] as string | undefined) ?? null,
      last_id: (page.at(-1)?.['id'] as string | undefined) ?? null,
    };
  }

  /** Cancels a batch that has not ended; an ended one is returned as it is. */
  cancel(id: string): Json | undefined {
    const batch = this.batches.get(id);
    if (!batch) return undefined;
    if (this.status(batch) !== 'ended' && batch.canceledAt === undefined) batch.canceledAt = this.now();
    return this.view(batch);
  }

  /** The results as JSONL (one line per request, in request order), or undefined while the batch has not ended. */
  results(id: string): string | undefined {
    const batch = this.batches.get(id);
    if (!batch || this.status(batch) !== 'ended') return undefined;
    return batch.requests.map((r) => this.line(batch, r)).join('\n') + '\n';
  }

  /** Every batch's id and its custom ids, oldest first (the test-control view). */
  all(): { id: string; customIds: string[]; status: string }[] {
    return [...this.batches.values()].map((b) => ({
      id: b.id,
      customIds: b.requests.map((r) => r.customId),
      status: this.status(b),
    }));
  }

  /** Resolves once every request of every batch has been answered (tests; the server's close). */
  async settled(): Promise<void> {
    await Promise.all([...this.batches.values()].map((b) => b.answered));
  }

  clear(): void {
    this.batches.clear();
  }

  private status(batch: Batch): 'in_progress' | 'canceling' | 'ended' {
    if (batch.endedAt !== undefined) return 'ended';
    const now = this.now();
    const done = batch.requests.every((r) => r.answered !== undefined);
    // A cancelled batch ends at once: nothing of it was released, so every request is cancelled.
    if (batch.canceledAt !== undefined || (done && now >= batch.readyAt) || now >= batch.expiresAt) {
      batch.endedAt = now;
      return 'ended';
    }
    return 'in_progress';
  }

  private resultOf(batch: Batch, request: BatchRequest): BatchResult {
    if (batch.canceledAt !== undefined) return { type: 'canceled' };
    const answered = request.answered;
    if (!answered || answered.shaped === 'expired') return { type: 'expired' };
    if (answered.status === 200) return { type: 'succeeded', message: answered.body };
    return { type: 'errored', error: answered.body };
  }

  private line(batch: Batch, request: BatchRequest): string {
    const shaped = request.answered?.shaped;
    if (shaped === 'malformed') return `{"custom_id": "${request.customId}", "result": {"type": "succ`;
    const customId = shaped === 'unknown_custom_id' ? `unknown-${request.customId}`.slice(0, 64) : request.customId;
    return JSON.stringify({ custom_id: customId, result: this.resultOf(batch, request) });
  }

  private view(batch: Batch): Json {
    const status = this.status(batch);
    const counts = { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0 };
    for (const request of batch.requests) {
      if (status !== 'ended') counts.processing++;
      else counts[this.resultOf(batch, request).type]++;
    }
    const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
    return {
      id: batch.id,
      type: 'message_batch',
      processing_status: status,
      request_counts: counts,
      created_at: iso(batch.createdAt),
      expires_at: iso(batch.expiresAt),
      ended_at: iso(batch.endedAt),
      cancel_initiated_at: iso(batch.canceledAt),
      archived_at: null,
      results_url: status === 'ended' ? `${this.baseUrl()}/v1/messages/batches/${batch.id}/results` : null,
    };
  }
}

function refuse(message: string): BatchRefusal {
  return { ok: false, message };
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isRefusal(value: Json | BatchRefusal): value is BatchRefusal {
  return value['ok'] === false;
}
