// A local HTTP server that speaks the Anthropic Messages API, for the real `@anthropic-ai/sdk` through `baseURL`:
//
//   const server = await startMessagesApi();
//   const client = new Anthropic({ apiKey: 'test-key', baseURL: server.url, maxRetries: 0 });
//
// Endpoints: `POST /v1/messages` (JSON or SSE, as `stream` asks) and `POST /v1/messages/count_tokens`; anything else
// is 404 `not_found_error`, but for the test-control routes under `/_test/` (scripts for a worker in another process). Auth: `Authorization: Bearer <key>` (current SDKs) or `x-api-key: <key>` (older ones);
// none → 401, a key starting with `invalid` → 401. Requests are validated like the real API (validate-request.ts);
// valid ones are answered by a scripted step when one matches (types.ts) or by the demo model (demo-model.ts), with
// usage from a deterministic token estimate and prompt-cache accounting (prompt-cache.ts). Every response carries a
// `request-id: req_…` header; errors are `{type:'error', error:{type, message}, request_id}`.
// With rate limits set (rate-limits.ts), a request past a per-minute limit of its model is a 429 `rate_limit_error`
// with `retry-after`, and every `/v1/messages` response carries the `anthropic-ratelimit-*` headers.
//
// Only node:http; the per-request work is a JSON parse, a validation pass and (with cache breakpoints) one sha256
// chain over the prompt, so a thousand concurrent streams are cheap.
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { digest, isSummaryRequest, requestInSummary } from './compaction-summary';
import {
  betasOf,
  checkContextManagement,
  type AppliedEdit,
  type Compaction,
  compactIfDue,
  prepareContext,
} from './context-management';
import { demoReply, firstUserText } from './demo-model';
import { errorBody, errorTypeForStatus, statusForErrorType } from './errors';
import { messageId, requestId, toolUseId } from './ids';
import { PromptCache } from './prompt-cache';
import { inputJsonOf, messageText, streamReply, wait, type Reply, type ReplyBlock, type ReplyUsage } from './respond';
import { outputTokens } from './tokens';
import { Containers, offersCodeExecution, serverToolUsage, serverToolUseId } from './server-tools';
import type { MessagesApi, MessagesApiOptions, RecordedRequest, ScriptStep, ScriptUsage } from './types';
import { asScriptSteps, scriptProblems, scriptRequestSchema } from './script-schema';
import { outputSchemaOf, validateRequest } from './validate-request';
import { checkThinking, demoThinking, thinkingBudget, thinkingOmitted, thinkingOn, ThinkingSigner } from './thinking';
import { type PendingThread, scriptedRefusal, type ThreadRefusal, Threads } from './threads';
import { type AnsweredRequest, isRefusal as isBatchRefusal, MessageBatches } from './batches';
import { type RateLimits, RateLimiter, rateLimitsSchema } from './rate-limits';

export type { MessagesApi, MessagesApiOptions, RecordedRequest, ScriptStep } from './types';

/** The API's limit for a Messages request body. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;
/** Where the test-control routes live: outside the API's `/v1/`. */
const CONTROL_PREFIX = '/_test/';
/** The header a batch's own request to `/v1/messages` carries: its batch id (batches.ts). */
const BATCH_HEADER = 'x-local-batch';
/** How the answer to a batch's request tells the batch a scripted `batch-result` step shaped its line. */
const BATCH_RESULT_HEADER = 'x-local-batch-result';
export const DEFAULT_BATCH_DELAY_MS = 200;
export const DEFAULT_CONTEXT_WINDOW_TOKENS = 1_000_000;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** The API key of a request: `x-api-key`, or the token of `Authorization: Bearer …`. */
function apiKeyOf(headers: IncomingHttpHeaders): string | undefined {
  const key = headers['x-api-key'];
  if (typeof key === 'string' && key.trim() !== '') return key.trim();
  const auth = headers['authorization'];
  const bearer = typeof auth === 'string' ? /^Bearer\s+(\S.*)$/i.exec(auth.trim())?.[1] : undefined;
  return bearer?.trim() || undefined;
}

/** Everything one request's handling needs; `signal` aborts when the client goes away or the server closes. */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  record: RecordedRequest;
  requestId: string;
  signal: AbortSignal;
  /** A threaded request: its conversation is held under the reply's id once the reply is complete (threads.ts). */
  thread?: PendingThread;
  /** A batch's request answered by a `batch-result` step: the batch shapes its result line so. */
  shaped?: AnsweredRequest['shaped'];
  /** The `anthropic-ratelimit-*` headers of the request's admission (or refusal), rate-limits.ts. */
  rateLimitHeaders?: Record<string, string>;
  /** What the reply used, for settling its rate-limit admission once the response ends. */
  used?: { outputTokens: number; cacheReadInputTokens: number };
}

/** What the model answers: the request as it reads it, and what context management did to it. */
interface Turn {
  body: Json;
  compaction?: Compaction;
  appliedEdits: AppliedEdit[];
  /** The request asked for context management: the reply reports its applied edits. */
  managed: boolean;
}

class MessagesApiServer implements MessagesApi {
  url = '';
  requests: RecordedRequest[] = [];
  private readonly scripts = new Map<string, ScriptStep[]>();
  private readonly sockets = new Set<Socket>();
  private readonly inFlight = new Set<AbortController>();
  private readonly cache: PromptCache;
  /** Signs the thinking blocks this server issues and checks those sent back (thinking.ts). */
  private readonly signer = new ThinkingSigner();
  private readonly containers: Containers;
  /** Message threads: the conversations held under response ids (threads.ts). */
  private readonly threads: Threads;
  /** Message Batches (batches.ts): each request answered through `POST /v1/messages` on this server. */
  readonly batches: MessageBatches;
  private latencyMs: number;
  private contextWindow: number;
  private tokenDelayMs: number;
  /** Per-minute limits per model (rate-limits.ts); undefined: none. */
  private rateLimiter: RateLimiter | undefined;
  private readonly now: () => number;
  private readonly server: http.Server;

  constructor(options: MessagesApiOptions) {
    this.latencyMs = options.latencyMs ?? 0;
    this.contextWindow = options.contextWindowTokens ?? DEFAULT_CONTEXT_WINDOW_TOKENS;
    this.tokenDelayMs = options.tokenDelayMs ?? 0;
    this.now = options.now ?? Date.now;
    this.setRateLimits(options.rateLimits ?? null);
    this.cache = new PromptCache(options.now ?? Date.now);
    this.containers = new Containers(options.now ?? Date.now);
    this.threads = new Threads(options.now ?? Date.now);
    this.batches = new MessageBatches(
      (params, headers, batch) => this.answerForBatch(params, headers, batch),
      options.now ?? Date.now,
      options.batchDelayMs ?? DEFAULT_BATCH_DELAY_MS,
      () => this.url,
    );
    this.server = http.createServer({ requestTimeout: 0, keepAliveTimeout: 5_000 }, (req, res) => {
      void this.handle(req, res).catch((err: unknown) => this.internalError(req, res, err));
    });
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  async listen(host: string, port: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen({ host, port, backlog: 4096 }, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    const address = this.server.address() as AddressInfo;
    const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    this.url = `http://${shownHost}:${address.port}`;
  }

  script(match: string, steps: ScriptStep[]): void {
    if (match === '') throw new Error('script: match must be a non-empty string');
    const queue = this.scripts.get(match);
    if (queue) queue.push(...steps);
    else this.scripts.set(match, [...steps]);
  }

  requestsFor(match: string): RecordedRequest[] {
    return this.requests.filter(
      (r) => r.path === '/v1/messages' && (r.threadText ?? firstUserText(r.body)).includes(match),
    );
  }

  setLatency(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new Error(`setLatency: expected a non-negative number, got ${ms}`);
    this.latencyMs = ms;
  }

  setContextWindow(tokens: number): void {
    if (!Number.isInteger(tokens) || tokens < 1)
      throw new Error(`setContextWindow: expected a positive integer, got ${tokens}`);
    this.contextWindow = tokens;
  }

  setTokenDelay(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new Error(`setTokenDelay: expected a non-negative number, got ${ms}`);
    this.tokenDelayMs = ms;
  }

  setBatchDelay(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new Error(`setBatchDelay: expected a non-negative number, got ${ms}`);
    this.batches.delayMs = ms;
  }

  setRateLimits(limits: RateLimits | null): void {
    const parsed = rateLimitsSchema.safeParse(limits);
    if (!parsed.success) throw new Error(`setRateLimits: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
    const limiter = parsed.data && new RateLimiter(parsed.data);
    this.rateLimiter = limiter && limiter.active ? limiter : undefined;
  }

  batchesAnswered(): Promise<void> {
    return this.batches.settled();
  }

  reset(): void {
    this.batches.clear();
    this.scripts.clear();
    this.requests.length = 0;
    this.cache.clear();
    this.threads.clear();
    // Full buckets again, under the same limits.
    if (this.rateLimiter) this.rateLimiter = new RateLimiter(this.rateLimiter.limits);
  }

  async close(): Promise<void> {
    for (const controller of this.inFlight) controller.abort();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  // -------------------------------------------------------------------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if ((req.url ?? '').startsWith(CONTROL_PREFIX)) return this.control(req, res);
    const record: RecordedRequest = {
      at: Date.now(),
      method: req.method ?? 'GET',
      path: (req.url ?? '/').split('?')[0] ?? '/',
      headers: flattenHeaders(req.headers),
      body: undefined,
      status: 0,
      stream: false,
    };
    this.requests.push(record);
    const controller = new AbortController();
    this.inFlight.add(controller);
    res.once('close', () => {
      this.inFlight.delete(controller);
      // Only a client that went away mid-answer needs waking up (an abort builds a DOMException: not for free).
      if (!res.writableFinished) controller.abort();
    });
    const ex: Exchange = { req, res, record, requestId: requestId(), signal: controller.signal };

    const raw = await this.readBody(req);
    let body: unknown;
    let badJson: string | undefined;
    if (raw !== null && raw.length > 0) {
      try {
        body = JSON.parse(raw);
      } catch (err) {
        body = raw;
        badJson = (err as Error).message;
      }
    }
    record.body = body;
    record.stream = isObject(body) && body['stream'] === true;

    if (!(await wait(this.latencyMs, ex.signal))) return;

    if (raw === null) return this.sendError(ex, 413, 'request_too_large');
    const key = apiKeyOf(req.headers);
    if (key === undefined) return this.sendError(ex, 401, 'authentication_error', 'x-api-key header is required');
    if (key.startsWith('invalid')) return this.sendError(ex, 401, 'authentication_error', 'invalid x-api-key');

    const route = `${record.method} ${record.path.replace(/\/+$/, '')}`;
    if (route.includes(' /v1/messages/batches')) return this.batchRoute(ex, route, body, badJson);
    if (route !== 'POST /v1/messages' && route !== 'POST /v1/messages/count_tokens') {
      return this.sendError(ex, 404, 'not_found_error', 'Not Found');
    }
    if (badJson !== undefined || body === undefined) {
      return this.sendError(
        ex,
        400,
        'invalid_request_error',
        `There was an issue with the request body: ${badJson ?? 'it is empty'}`,
      );
    }
    const countTokens = route.endsWith('/count_tokens');
    // A continue is read as the conversation its thread holds with the new messages after it, and checked as such.
    const opened =
      countTokens || !isObject(body)
        ? undefined
        : this.threads.open(body, betasOf(req.headers['anthropic-beta'] as string | undefined));
    if (opened && !opened.ok) return this.refuseThread(ex, opened.refusal);
    if (opened?.pending) {
      const pending = opened.pending;
      ex.thread = pending;
      // A request that ends without a complete reply leaves the response it continued free to continue.
      res.once('close', () => {
        if (ex.thread) this.threads.release(pending);
      });
      if (pending.from !== undefined) record.threadText = firstUserText(opened.body);
    }
    const verdict = validateRequest(opened?.body ?? body, { countTokens });
    if (!verdict.ok) return this.sendError(ex, 400, 'invalid_request_error', verdict.message);
    const request = (opened?.body ?? body) as Json;
    const thinkingProblem = checkThinking(request, this.signer, countTokens);
    if (thinkingProblem) return this.sendError(ex, 400, 'invalid_request_error', thinkingProblem);
    const serverToolProblem = this.containers.check(request, countTokens);
    if (serverToolProblem) return this.sendError(ex, 400, 'invalid_request_error', serverToolProblem);
    const managed = checkContextManagement(request, betasOf(record.headers['anthropic-beta']));
    if (!managed.ok) return this.sendError(ex, 400, 'invalid_request_error', managed.message, {}, managed.code);
    const prepared = prepareContext(request, managed.management);
    if (countTokens) {
      return this.sendJson(ex, 200, {
        input_tokens: prepared.tokens,
        ...(managed.management && { context_management: { original_input_tokens: prepared.originalTokens } }),
      });
    }
    if (prepared.tokens > this.contextWindow) {
      const message = `prompt is too long: ${prepared.tokens} tokens > ${this.contextWindow} maximum`;
      return this.sendError(ex, 400, 'invalid_request_error', message);
    }
    if (!this.admit(ex, prepared.body, prepared.tokens)) return;
    const turn: Turn = {
      body: prepared.body,
      appliedEdits: prepared.appliedEdits,
      managed: managed.management !== undefined,
    };
    const compaction = compactIfDue(prepared, managed.management);
    if (compaction) turn.compaction = compaction;
    // Paused after compacting: the block alone, and the model carries on when it is sent back.
    if (compaction?.pause) return this.send(ex, this.reply(turn, [], 'compaction', null), 0, { demo: true });
    const messages = Array.isArray(prepared.body['messages']) ? (prepared.body['messages'] as Json[]) : [];
    if (isSummaryRequest(messages)) {
      // The orchestrator's own compaction asks for a summary: the model writes one, whatever was scripted.
      const question = firstUserText(prepared.body);
      const text = digest(messages, requestInSummary(question) ?? question);
      return this.send(
        ex,
        this.reply(turn, [{ type: 'text', text: `<summary>\n${text}\n</summary>` }], 'end_turn', null),
        0,
        { demo: true },
      );
    }

    const taken = this.takeStep(prepared.body);
    if (taken) record.match = taken.match;
    await this.answer(ex, turn, taken?.step ?? { demo: true });
  }

  /**
   * Takes the request's cost from the model's rate-limit buckets, or answers 429 `rate_limit_error` with `retry-after`
   * and says so (false). Input is the prompt as counted here; output is estimated as `max_tokens` and settled when
   * the response ends, with the cache reads given back (the API does not count them). A batch's own requests are not
   * limited (the API has separate batch limits).
   */
  private admit(ex: Exchange, body: Json, inputTokens: number): boolean {
    const limiter = this.rateLimiter;
    if (!limiter || ex.record.headers[BATCH_HEADER] !== undefined) return true;
    const model = String(body['model']);
    const maxTokens = typeof body['max_tokens'] === 'number' ? body['max_tokens'] : 0;
    const admission = limiter.admit(model, { inputTokens, outputTokens: maxTokens }, this.now());
    ex.rateLimitHeaders = admission.headers;
    if (!admission.ok) {
      this.sendError(ex, 429, 'rate_limit_error', admission.message, {
        'retry-after': String(admission.retryAfterSeconds),
      });
      return false;
    }
    ex.res.once('close', () => admission.settle(ex.used ?? { outputTokens: 0, cacheReadInputTokens: 0 }, this.now()));
    return true;
  }

  /**
   * The Message Batches routes (batches.ts): `POST /v1/messages/batches`, `GET /v1/messages/batches`,
   * `GET …/<id>`, `POST …/<id>/cancel`, `GET …/<id>/results` (JSONL, once the batch ended).
   */
  private batchRoute(ex: Exchange, route: string, body: unknown, badJson: string | undefined): void {
    const match = /^(GET|POST) \/v1\/messages\/batches(?:\/([A-Za-z0-9_-]+))?(\/cancel|\/results)?$/.exec(route);
    const [, method, id, action] = match ?? [];
    const notFound = () =>
      this.sendError(ex, 404, 'not_found_error', id ? `No message batch with id ${id}` : 'Not Found');
    if (!match) return notFound();
    if (method === 'POST' && id === undefined) {
      if (badJson !== undefined || body === undefined)
        return this.sendError(
          ex,
          400,
          'invalid_request_error',
          `There was an issue with the request body: ${badJson ?? 'it is empty'}`,
        );
      const beta = ex.record.headers['anthropic-beta'];
      const created = this.batches.create(body, beta ? { 'anthropic-beta': beta } : {});
      if (isBatchRefusal(created)) return this.sendError(ex, 400, 'invalid_request_error', created.message);
      return this.sendJson(ex, 200, created);
    }
    if (method === 'GET' && id === undefined) {
      return this.sendJson(ex, 200, this.batches.list(new URL(ex.req.url ?? '/', 'http://local').searchParams));
    }
    if (id === undefined) return notFound();
    if (method === 'POST' && action === '/cancel') {
      const canceled = this.batches.cancel(id);
      return canceled ? this.sendJson(ex, 200, canceled) : notFound();
    }
    if (method !== 'GET' || (action !== undefined && action !== '/results')) return notFound();
    const batch = this.batches.retrieve(id);
    if (!batch) return notFound();
    if (action === undefined) return this.sendJson(ex, 200, batch);
    const results = this.batches.results(id);
    if (results === undefined)
      return this.sendError(ex, 400, 'invalid_request_error', `Message batch ${id} has not finished processing`);
    this.writeHead(ex, 200, {
      'content-type': 'application/binary',
      'content-length': String(Buffer.byteLength(results)),
    });
    ex.res.end(results);
  }

  /** One request of a batch, answered by this server's `POST /v1/messages` (recorded there with the batch's id). */
  private async answerForBatch(params: Json, headers: Record<string, string>, batch: string): Promise<AnsweredRequest> {
    const response = await fetch(`${this.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'local-batch', [BATCH_HEADER]: batch, ...headers },
      body: JSON.stringify(params),
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // a body that is not JSON stays text: the result says what came back
    }
    const shaped = response.headers.get(BATCH_RESULT_HEADER);
    return {
      status: response.status,
      body,
      ...((shaped === 'expired' || shaped === 'malformed' || shaped === 'unknown_custom_id') && { shaped }),
    };
  }

  /**
   * The test-control routes, for a test whose worker runs in another process (not recorded, no API key):
   *   POST   /_test/scripts            {match, steps}: what `script(match, steps)` does
   *   DELETE /_test/scripts            what `reset()` does
   *   GET    /_test/requests?match=M   {requests}: `requestsFor(M)`, or every request without `match`
   *   GET    /_test/batches            {batches: [{id, customIds, status}]}, oldest first
   *   POST   /_test/batch-delay        {ms}: what `setBatchDelay(ms)` does
   *   POST   /_test/rate-limits        {requestsPerMinute?, inputTokensPerMinute?, outputTokensPerMinute?} or null:
   *                                     what `setRateLimits(limits)` does ({} or null: no limits)
   */
  private async control(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://local');
    const route = `${req.method ?? 'GET'} ${url.pathname.replace(/\/+$/, '')}`;
    const reply = (status: number, payload: unknown): void => {
      const text = JSON.stringify(payload);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
      res.end(text);
    };
    const raw = await this.readBody(req);
    if (route === 'GET /_test/requests') {
      const match = url.searchParams.get('match');
      return reply(200, { requests: match === null ? this.requests : this.requestsFor(match) });
    }
    if (route === 'GET /_test/batches') return reply(200, { batches: this.batches.all() });
    if (route === 'POST /_test/batch-delay') {
      const ms = Number((JSON.parse(raw || '{}') as { ms?: unknown }).ms);
      if (!Number.isFinite(ms) || ms < 0) return reply(400, { error: 'expected {"ms": <non-negative number>}' });
      this.setBatchDelay(ms);
      return reply(200, { ms });
    }
    if (route === 'POST /_test/rate-limits') {
      let limits: unknown;
      try {
        limits = JSON.parse(raw || 'null');
      } catch {
        return reply(400, { error: 'the body is not JSON: {"inputTokensPerMinute": n, …} or null' });
      }
      const parsed = rateLimitsSchema.safeParse(limits);
      if (!parsed.success) return reply(400, { error: `not rate limits:\n${scriptProblems(parsed.error)}` });
      this.setRateLimits(parsed.data);
      return reply(200, { rateLimits: this.rateLimiter?.limits ?? null });
    }
    if (route === 'DELETE /_test/scripts') {
      this.reset();
      return reply(200, { reset: true });
    }
    if (route !== 'POST /_test/scripts') return reply(404, { error: `no test-control route ${route}` });
    let body: unknown;
    try {
      body = JSON.parse(raw ?? '');
    } catch {
      return reply(400, { error: 'the body is not JSON: {"match": "...", "steps": [...]}' });
    }
    const parsed = scriptRequestSchema.safeParse(body);
    if (!parsed.success) return reply(400, { error: `not a script:\n${scriptProblems(parsed.error)}` });
    this.script(parsed.data.match, asScriptSteps(parsed.data.steps));
    return reply(200, { match: parsed.data.match, queued: this.scripts.get(parsed.data.match)?.length ?? 0 });
  }

  /** The body as text, or null once it passed the API's size limit. */
  private async readBody(req: IncomingMessage): Promise<string | null> {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) tooLarge = true;
      if (!tooLarge) chunks.push(chunk);
    }
    return tooLarge ? null : Buffer.concat(chunks).toString('utf8');
  }

  /** The next step of the longest script key found in the first user message, if any has steps left. */
  private takeStep(body: Json): { match: string; step: ScriptStep } | undefined {
    if (this.scripts.size === 0) return undefined;
    const text = firstUserText(body);
    let best: string | undefined;
    for (const [match, queue] of this.scripts) {
      if (queue.length > 0 && text.includes(match) && (best === undefined || match.length > best.length)) best = match;
    }
    const step = best === undefined ? undefined : this.scripts.get(best)?.shift();
    return best !== undefined && step ? { match: best, step } : undefined;
  }

  private async answer(ex: Exchange, turn: Turn, step: ScriptStep): Promise<void> {
    const body = turn.body;
    const stream = body['stream'] === true;
    const delayMs = Math.max(0, step.delayMs ?? 0);
    switch (step.fault) {
      case 'status': {
        if (!(await wait(delayMs, ex.signal))) return;
        const type = step.errorType ?? errorTypeForStatus(step.status);
        return this.sendError(ex, step.status, type, step.message, step.headers);
      }
      case 'thread':
        if (!(await wait(delayMs, ex.signal))) return;
        return this.refuseThread(ex, scriptedRefusal(step.error, step.message, step.unsupported));
      case 'connection-reset':
        if (!(await wait(delayMs, ex.signal))) return;
        ex.record.status = 0;
        ex.req.socket.destroy();
        return;
      case 'stream-error': {
        const type = step.errorType ?? 'overloaded_error';
        if (!stream) {
          if (!(await wait(delayMs, ex.signal))) return;
          return this.sendError(ex, statusForErrorType(type), type, step.message);
        }
        const afterBlocks = Math.max(0, step.afterBlocks ?? 1);
        const content: ReplyBlock[] = Array.from({ length: afterBlocks }, (_, i) => ({
          type: 'text',
          text: step.text ?? `Partial reply, part ${i + 1}, before the stream failed.`,
        }));
        const reply = this.reply(turn, content, 'end_turn', null, step.usage);
        ex.used = usedBy(reply);
        return streamReply(ex.res, reply, {
          ...this.streamOptions(ex, step),
          delayMs,
          failure: { afterBlocks, body: errorBody(type, step.message, ex.requestId) },
        });
      }
      case 'batch-result':
        // Outside a batch this is a demo reply; in one, the batch shapes the request's result line (batches.ts).
        if (ex.record.headers[BATCH_HEADER] !== undefined) ex.shaped = step.result;
        return this.answer(ex, turn, { demo: true, ...(step.delayMs !== undefined && { delayMs: step.delayMs }) });
      case 'truncated-tool-use': {
        const json = JSON.stringify(step.tool.input);
        const cutAt = Math.max(0, Math.min(json.length, step.cutAt ?? Math.floor(json.length / 2)));
        const content: ReplyBlock[] = [];
        if (step.text) content.push({ type: 'text', text: step.text });
        content.push({
          type: 'tool_use',
          id: toolUseId(),
          name: step.tool.name,
          input: step.tool.input,
          partialJson: json.slice(0, cutAt),
        });
        return this.send(ex, this.reply(turn, content, 'max_tokens', null), delayMs, step);
      }
      default:
        break;
    }
    if ('reply' in step) {
      let lastServerCall = '';
      const content: ReplyBlock[] = this.withThinking(
        body,
        step.reply.content.map((block): ReplyBlock => {
          switch (block.type) {
            case 'text':
              return { type: 'text', text: block.text };
            case 'json':
              return { type: 'text', text: JSON.stringify(block.value) };
            case 'thinking':
              return this.thinkingBlock(body, block.thinking);
            case 'redacted_thinking':
              return {
                type: 'redacted_thinking',
                data: this.signer.redact(block.thinking ?? 'Thinking the safety system chose to encrypt.'),
              };
            case 'server_tool_use':
              lastServerCall = block.id ?? serverToolUseId();
              return {
                type: 'server',
                json: { type: block.type, id: lastServerCall, name: block.name, input: block.input },
              };
            case 'web_search_tool_result':
            case 'web_fetch_tool_result':
            case 'code_execution_tool_result':
            case 'bash_code_execution_tool_result':
            case 'text_editor_code_execution_tool_result':
            case 'tool_search_tool_result':
              return {
                type: 'server',
                json: { type: block.type, tool_use_id: block.tool_use_id ?? lastServerCall, content: block.content },
              };
            default:
              return {
                type: 'tool_use',
                id: block.id ?? toolUseId(),
                name: block.name,
                input: block.input,
                ...(block.inputJson !== undefined && { inputJson: block.inputJson }),
              };
          }
        }),
      );
      const notJson = notJsonAnswer(body, content);
      if (notJson) return this.sendError(ex, 400, 'invalid_request_error', notJson);
      const reply = this.reply(
        turn,
        content,
        step.reply.stop_reason,
        step.reply.stop_sequence ?? null,
        step.reply.usage,
      );
      return this.send(ex, reply, delayMs, step);
    }
    const demo = demoReply(body);
    const demoContent: ReplyBlock[] = demo.content.map((block) =>
      block.type === 'text'
        ? block
        : {
            type: 'tool_use',
            id: toolUseId(),
            name: block.name,
            input: block.input,
            ...(block.partialJson !== undefined && { partialJson: block.partialJson }),
          },
    );
    const content = this.withThinking(body, demoContent);
    return this.send(ex, this.reply(turn, content, demo.stop_reason, demo.stop_sequence), delayMs, step);
  }

  /** A thinking block as this server issues it: signed; with `display: omitted`, the signature alone. */
  private thinkingBlock(body: Json, thinking: string): ReplyBlock {
    const shown = thinkingOmitted(body) ? '' : thinking;
    return { type: 'thinking', thinking: shown, signature: this.signer.sign(shown) };
  }

  /**
   * With thinking on, the reply opens with a thinking block: the scripted one, or one written here (within an
   * `enabled` request's budget).
   */
  private withThinking(body: Json, content: ReplyBlock[]): ReplyBlock[] {
    if (!thinkingOn(body) || content.some((b) => b.type === 'thinking' || b.type === 'redacted_thinking'))
      return content;
    const budgetChars = (thinkingBudget(body) ?? Number.POSITIVE_INFINITY) * 4;
    return [this.thinkingBlock(body, demoThinking(body).slice(0, budgetChars)), ...content];
  }

  /**
   * A reply with its usage: input from the prompt cache's accounting, output estimated, overrides on top. After a
   * compaction the reply opens with its block, the model read the compacted prompt, and the compaction is an
   * iteration of its own that the top-level figures leave out.
   */
  private reply(
    turn: Turn,
    content: ReplyBlock[],
    stopReason: Reply['stop_reason'],
    stopSequence: string | null,
    overrides: ScriptUsage = {},
  ): Reply {
    const body = turn.body;
    const cache = this.cache.account(turn.compaction?.compactedBody ?? body);
    // Thinking is output: what the model thought (a redacted block's too), counted like text.
    const thoughts = content.flatMap((b): { type: 'text'; text: string }[] =>
      b.type === 'thinking'
        ? [{ type: 'text', text: b.thinking || b.signature }]
        : b.type === 'redacted_thinking'
          ? [{ type: 'text', text: b.data }]
          : [],
    );
    const thinkingTokens = thoughts.length > 0 ? outputTokens(thoughts) : undefined;
    const output =
      outputTokens(
        content.flatMap((b): Parameters<typeof outputTokens>[0][number][] =>
          b.type === 'text'
            ? [b]
            : b.type === 'tool_use'
              ? [{ type: 'tool_use' as const, name: b.name, json: b.partialJson ?? inputJsonOf(b) }]
              : [],
        ),
      ) + (thinkingTokens ?? 0);
    // A reply stopped by max_tokens used all of them.
    const maxTokens = body['max_tokens'];
    const spent = stopReason === 'max_tokens' && typeof maxTokens === 'number' ? maxTokens : output;
    const usage: ReplyUsage = {
      ...cache,
      output_tokens: spent,
      ...(thinkingTokens !== undefined && { thinking_tokens: Math.min(thinkingTokens, spent) }),
      server_tool_use: serverToolUsage(content),
    };
    if (overrides.input_tokens !== undefined) usage.input_tokens = overrides.input_tokens;
    if (overrides.output_tokens !== undefined) usage.output_tokens = overrides.output_tokens;
    if (overrides.cache_read_input_tokens !== undefined)
      usage.cache_read_input_tokens = overrides.cache_read_input_tokens;
    if (overrides.cache_creation_input_tokens !== undefined) {
      usage.cache_creation_input_tokens = overrides.cache_creation_input_tokens;
      usage.cache_creation = {
        ephemeral_5m_input_tokens: overrides.cache_creation_input_tokens,
        ephemeral_1h_input_tokens: 0,
      };
    }
    const compaction = turn.compaction;
    if (compaction) {
      const iteration = (type: string, u: typeof usage) => ({
        type,
        input_tokens: u.input_tokens,
        cache_read_input_tokens: u.cache_read_input_tokens,
        cache_creation_input_tokens: u.cache_creation_input_tokens,
        cache_creation: { ...u.cache_creation },
        output_tokens: u.output_tokens,
        ...(type === 'message' && { model: String(body['model']) }),
      });
      const read = {
        input_tokens: compaction.inputTokens,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
        cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
        output_tokens: compaction.outputTokens,
      };
      usage.iterations = [iteration('compaction', read), iteration('message', usage)];
    }
    return {
      id: messageId(),
      model: String(body['model']),
      content: compaction ? [compaction.block, ...content] : content,
      stop_reason: stopReason,
      stop_sequence: stopSequence,
      usage,
      ...(turn.managed && { context_management: { applied_edits: [...turn.appliedEdits] } }),
      ...(offersCodeExecution(body) && { container: this.containers.containerFor(body) }),
    };
  }

  private async send(ex: Exchange, reply: Reply, delayMs: number, step: ScriptStep): Promise<void> {
    ex.used = usedBy(reply);
    if (ex.record.stream) await streamReply(ex.res, reply, { ...this.streamOptions(ex, step), delayMs });
    else if (!(await wait(delayMs, ex.signal))) return;
    else this.sendText(ex, 200, messageText(reply));
    if (ex.thread && !ex.signal.aborted) {
      // The server holds the whole reply or none of it: only a complete one is stored.
      const message = JSON.parse(messageText(reply)) as Json;
      this.threads.store(ex.thread, reply.id, { role: 'assistant', content: message['content'] });
      delete ex.thread;
    }
  }

  private refuseThread(ex: Exchange, refusal: ThreadRefusal): void {
    const { status, type, message, code, unsupported } = refusal;
    this.sendJson(ex, status, errorBody(type, message, ex.requestId, code, unsupported));
  }

  /** Pacing (the step's, else the server's) and where a paced stream records its tokens. */
  private streamOptions(ex: Exchange, step: ScriptStep) {
    const tokenDelayMs = Math.max(0, ('tokenDelayMs' in step ? step.tokenDelayMs : undefined) ?? this.tokenDelayMs);
    const emitted: { text: string; at: number }[] = [];
    if (tokenDelayMs > 0) ex.record.emitted = emitted;
    return {
      signal: ex.signal,
      writeHead: (status: number, headers: Record<string, string>) => this.writeHead(ex, status, headers),
      tokenDelayMs,
      onText: (text: string, at: number) => emitted.push({ text, at }),
    };
  }

  // -------------------------------------------------------------------------------------------------------------

  private writeHead(ex: Exchange, status: number, headers: Record<string, string>): void {
    ex.record.status = status;
    const shaped = ex.shaped !== undefined && { [BATCH_RESULT_HEADER]: ex.shaped };
    const limits = ex.rateLimitHeaders ?? this.rateLimitHeadersNow(ex);
    ex.res.writeHead(status, { 'request-id': ex.requestId, ...shaped, ...limits, ...headers });
  }

  /** A Messages response that never reached admission (a 400, …) still shows the model's buckets as they are. */
  private rateLimitHeadersNow(ex: Exchange): Record<string, string> {
    const body: unknown = ex.record.body;
    if (!this.rateLimiter || ex.record.path.replace(/\/+$/, '') !== '/v1/messages') return {};
    if (ex.record.headers[BATCH_HEADER] !== undefined || !isObject(body) || typeof body['model'] !== 'string')
      return {};
    return this.rateLimiter.headers(body['model'], this.now());
  }

  private sendJson(ex: Exchange, status: number, payload: unknown, headers: Record<string, string> = {}): void {
    this.sendText(ex, status, JSON.stringify(payload), headers);
  }

  private sendText(ex: Exchange, status: number, text: string, headers: Record<string, string> = {}): void {
    if (ex.res.destroyed || ex.res.headersSent) return;
    this.writeHead(ex, status, {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(text)),
      ...headers,
    });
    ex.res.end(text);
  }

  private sendError(
    ex: Exchange,
    status: number,
    type: string,
    message?: string,
    headers: Record<string, string> = {},
    code?: string,
  ): void {
    this.sendJson(ex, status, errorBody(type, message, ex.requestId, code), headers);
  }

  private internalError(req: IncomingMessage, res: ServerResponse, err: unknown): void {
    // A client that went away while its body was being read is not our error.
    if (req.destroyed || res.destroyed) {
      res.destroy();
      return;
    }
    console.error('local Messages API: internal error', err);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const id = requestId();
    const text = JSON.stringify(errorBody('api_error', `local Messages API internal error: ${String(err)}`, id));
    res.writeHead(500, { 'content-type': 'application/json', 'request-id': id });
    res.end(text);
  }
}

/** What a reply used, as rate limits count it. */
function usedBy(reply: Reply): { outputTokens: number; cacheReadInputTokens: number } {
  return { outputTokens: reply.usage.output_tokens, cacheReadInputTokens: reply.usage.cache_read_input_tokens };
}

/**
 * Why a scripted final reply cannot be what the API answers a request with `output_config.format`: its text is not
 * JSON (constrained decoding makes it JSON). A test that scripts this has a bug; the 400 says so.
 */
function notJsonAnswer(body: Json, content: ReplyBlock[]): string | undefined {
  if (!outputSchemaOf(body) || content.some((block) => block.type === 'tool_use')) return undefined;
  const text = content.map((block) => (block.type === 'text' ? block.text : '')).join('');
  try {
    JSON.parse(text);
    return undefined;
  } catch {
    return `scripted reply: the request asks for output_config.format, but the reply text is not JSON: ${text.slice(0, 200)}`;
  }
}

/** Starts the server (default 127.0.0.1, any free port). */
export async function startMessagesApi(options: MessagesApiOptions = {}): Promise<MessagesApi> {
  const server = new MessagesApiServer(options);
  await server.listen(options.host ?? '127.0.0.1', options.port ?? 0);
  return server;
}
