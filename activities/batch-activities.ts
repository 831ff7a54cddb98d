// Batch mode's activities (docs/batches.md): short ones, so that no worker slot is held while a batch runs; the workflow
// waits between them with timers (workflows/batched-model-call.ts).
//
//   submitBatchedModelCall  builds the call's request as callModel would (the worker's context cache, or a query), puts
//                           it in the process's open batch window (batch-window.ts), heartbeats the batch id once the
//                           batch exists, and returns {batchId, customId}. A retry first looks for the batch its
//                           earlier attempt recorded (heartbeat details, then this process's memory): a call is never
//                           submitted twice. What remains: a worker killed in the ~50 ms between `batches.create`
//                           answering and the heartbeat reaching the server submits the call again, in a new batch
//                           (the API cannot be asked which batch holds a custom_id).
//   checkBatchedModelCall   the batch's status (one `retrieve` per batch and second in this process); once it ended,
//                           this call's result from the batch's JSONL (read once per process and kept a minute for
//                           every member), read into a CallModelResult exactly like callModel's.
//   cancelBatchedModelCall  the conversation stopped waiting: the batch is cancelled when no other member this process
//                           submitted still waits. The API has no per-request cancel.
import { createHash } from 'node:crypto';
import Anthropic from '@anthropic-ai/sdk';
import type { BetaMessage } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type {
  BatchedCall,
  BatchedCallCheck,
  CallModelResult,
  CheckBatchedCallInput,
  SubmitBatchedCallInput,
} from '../common/activity-contracts';
import { FailureType } from '../common/failure-types';
import type { ToolDescription } from '../common/protocols/types';
import { BatchWindow, type BatchEntry } from './batch-window';
import { keepAlive } from './keep-alive';
import { callModelResultOf, withContextManagement } from './managed-context';
import { type ModelContextCache, withConversation } from './model-context-cache';
import type { McpToolSets } from './mcp/mcp-tool-sets';
import { buildingRequest, toModelFailure } from './model-failure';
import { forTheHistory } from './model-activities';
import { buildModelRequest } from './model-request';
import { DEFAULT_MAX_REPLY_BYTES, replyTooLarge } from './reply-size-limit';

export interface BatchActivityDeps {
  anthropic: Anthropic;
  tools: readonly ToolDescription[];
  cache: ModelContextCache;
  mcpToolSets?: McpToolSets;
  /** The process's shared window; one per worker process (createBatchWindow). */
  window: BatchWindow;
  maxReplyBytes?: number;
}

/** How long one batch's status and results are kept for its other members, in ms. */
const STATUS_TTL_MS = 1_000;
const RESULTS_TTL_MS = 60_000;
/** Batches whose results the process keeps at once, at most. */
const MAX_CACHED_RESULTS = 64;

/** The process's batch window: every call in batch mode on this worker goes out through it. */
export function createBatchWindow(anthropic: Anthropic, windowMs: number): BatchWindow {
  return new BatchWindow(async (requests: BatchEntry[], betas: string[]) => {
    const batch = await anthropic.beta.messages.batches.create({
      // The params were built by buildModelRequest, as callModel sends them; the SDK's type is a union of every shape.
      requests: requests.map((r) => ({ custom_id: r.customId, params: r.params as never })),
      ...(betas.length > 0 && { betas }),
    });
    return batch.id;
  }, windowMs);
}

/** A custom_id for one submission of one call: the same for every attempt of its activity, never for another. */
export function batchCustomId(workflowId: string, activityId: string): string {
  const readable = activityId.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 24);
  const hash = createHash('sha256').update(`${workflowId}\u0000${activityId}`).digest('base64url').slice(0, 39);
  return `${readable}-${hash}`;
}

/** One result line of a batch, as far as it could be read. */
type ResultEntry =
  | { type: 'succeeded'; message: BetaMessage }
  | { type: 'errored'; error: { type?: string; message?: string } }
  | { type: 'canceled' | 'expired' };

interface ReadResults {
  byId: Map<string, ResultEntry>;
  /** Lines that were not JSON or not a result: a call whose line is among them has no result. */
  unreadable: number;
}

export function createBatchActivities({
  anthropic,
  tools,
  cache,
  mcpToolSets,
  window,
  maxReplyBytes = DEFAULT_MAX_REPLY_BYTES,
}: BatchActivityDeps) {
  const described = new Map(tools.map((tool) => [tool.name, tool]));
  const statuses = new Map<string, { at: number; status: Promise<string> }>();
  const results = new Map<string, { at: number; read: Promise<ReadResults> }>();

  async function submitBatchedModelCall(given: SubmitBatchedCallInput): Promise<BatchedCall> {
    const input = withConversation(given);
    const context = Context.current();
    const customId = batchCustomId(input.conversation.workflowId, context.info.activityId);
    // An earlier attempt of this very submission recorded its batch: it is not submitted again.
    const recorded = recordedBatch(context.info.heartbeatDetails);
    if (recorded) return { batchId: recorded, customId };
    const stopHeartbeats = keepAlive(context);
    try {
      const known = window.known(customId);
      const batchId =
        (known && (await known.catch(() => undefined))) ??
        (await (async () => {
          const { params, betas } = await requestOf(input);
          return window.submit({ customId, params }, betas, input.batch.windowMs);
        })());
      // Recorded at once (the worker flushes heartbeats within 50 ms): a retry after a crash finds it.
      context.heartbeat({ batchId });
      return { batchId, customId };
    } catch (err) {
      if (context.cancellationSignal.aborted) throw err;
      throw toModelFailure(err);
    } finally {
      stopHeartbeats();
    }
  }

  /** The request callModel would send for this call, as a batch request's params, and the betas it needs. */
  async function requestOf(input: ReturnType<typeof withConversation<SubmitBatchedCallInput>>) {
    const { system, messages } = await cache.assemble(input);
    const { mcpToolSet } = input.request;
    const mcpTools = mcpToolSet !== undefined ? await mcpToolSets?.get(input.conversation, mcpToolSet) : undefined;
    return buildingRequest(() => {
      const offered = input.request.tools.map((name) => {
        const tool = described.get(name) ?? mcpTools?.get(name);
        if (!tool) throw new Error(`Tool ${name} is not registered on this worker.`);
        return tool;
      });
      const built = withContextManagement(
        buildModelRequest({ ...input.request, ...(system !== undefined && { system }) }, messages, offered),
        input.request.contextManagement,
      );
      const { stream: _stream, betas, ...params } = built;
      return { params: params as Record<string, unknown>, betas: betas ?? [] };
    });
  }

  async function checkBatchedModelCall({
    batchId,
    customId,
    callNumber,
  }: CheckBatchedCallInput): Promise<BatchedCallCheck> {
    const context = Context.current();
    try {
      const status = await statusOf(batchId);
      if (status !== 'ended') return { kind: 'pending', status };
      const read = await resultsOf(batchId);
      const entry = read.byId.get(customId);
      if (!entry) {
        const unreadable = read.unreadable > 0 ? ` (${read.unreadable} of its lines could not be read)` : '';
        return { kind: 'resubmit', reason: `batch ${batchId} has no result for this call${unreadable}` };
      }
      if (entry.type === 'expired' || entry.type === 'canceled')
        return { kind: 'resubmit', reason: `its request in batch ${batchId} was ${entry.type}` };
      if (entry.type === 'errored') {
        const { type = 'api_error', message = 'no message' } = entry.error;
        const failure = toModelFailure(apiErrorOf(type, message));
        // A request refused for good fails the call, as callModel's would; the rest is worth another submission.
        if (failure.nonRetryable) throw failure;
        return { kind: 'resubmit', reason: `its request in batch ${batchId} failed: ${type}: ${message}` };
      }
      if (entry.type !== 'succeeded') return { kind: 'resubmit', reason: `batch ${batchId}: unknown result` };
      return { kind: 'reply', reply: replyOf(entry.message, callNumber) };
    } catch (err) {
      if (err instanceof ApplicationFailure || context.cancellationSignal.aborted) throw err;
      throw toModelFailure(err);
    }
  }

  /** The reply as callModel's result records it (the worker's context cache is left to read it again by query). */
  function replyOf(message: BetaMessage, callNumber: number): CallModelResult {
    let reply: CallModelResult;
    try {
      reply = callModelResultOf(message);
    } catch (err) {
      throw ApplicationFailure.create({
        type: FailureType.ModelCallFailed,
        message: `Call ${callNumber}: the batch result is not a message: ${String(err)}`.slice(0, 500),
        nonRetryable: true,
      });
    }
    const result: CallModelResult = { ...reply, content: reply.content.map(forTheHistory), attempt: 1 };
    const tooLarge = replyTooLarge(result, maxReplyBytes, reply.usage);
    if (tooLarge) throw tooLarge;
    return result;
  }

  function statusOf(batchId: string): Promise<string> {
    const now = Date.now();
    const cached = statuses.get(batchId);
    if (cached && now - cached.at < STATUS_TTL_MS) return cached.status;
    const status = anthropic.beta.messages.batches.retrieve(batchId).then((b) => b.processing_status);
    statuses.set(batchId, { at: now, status });
    status.catch(() => statuses.delete(batchId));
    for (const [id, entry] of statuses) if (now - entry.at >= STATUS_TTL_MS) statuses.delete(id);
    return status;
  }

  function resultsOf(batchId: string): Promise<ReadResults> {
    const now = Date.now();
    const cached = results.get(batchId);
    if (cached && now - cached.at < RESULTS_TTL_MS) return cached.read;
    const read = fetchResults(batchId);
    results.set(batchId, { at: now, read });
    read.catch(() => results.delete(batchId));
    for (const [id, entry] of results) {
      if (now - entry.at >= RESULTS_TTL_MS || results.size > MAX_CACHED_RESULTS) results.delete(id);
    }
    return read;
  }

  /** The batch's JSONL read line by line: a line that is not a result is counted, not fatal to the others. */
  async function fetchResults(batchId: string): Promise<ReadResults> {
    const batch = await anthropic.beta.messages.batches.retrieve(batchId);
    if (!batch.results_url) throw new Error(`batch ${batchId} ended without a results_url`);
    // Read as text, not with the SDK's JSONL decoder: one malformed line would throw away every other member's result.
    const response = await anthropic
      .get(batch.results_url, { headers: { Accept: 'application/binary' }, __binaryResponse: true } as never)
      .asResponse();
    const text = await response.text();
    const byId = new Map<string, ResultEntry>();
    let unreadable = 0;
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      const entry = resultLine(line);
      if (entry) byId.set(entry.customId, entry.result);
      else unreadable++;
    }
    return { byId, unreadable };
  }

  async function cancelBatchedModelCall({ batchId, customId }: BatchedCall): Promise<{ canceled: boolean }> {
    if (!window.abandon(batchId, customId)) return { canceled: false };
    try {
      await anthropic.beta.messages.batches.cancel(batchId);
      return { canceled: true };
    } catch (err) {
      throw toModelFailure(err);
    }
  }

  return { submitBatchedModelCall, checkBatchedModelCall, cancelBatchedModelCall };
}

/** The batch id an earlier attempt heartbeated, if it did. */
function recordedBatch(details: unknown): string | undefined {
  const batchId = (details as { batchId?: unknown } | undefined)?.batchId;
  return typeof batchId === 'string' && batchId.length > 0 ? batchId : undefined;
}

function resultLine(line: string): { customId: string; result: ResultEntry } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return undefined;
  }
  const { custom_id: customId, result } = (parsed ?? {}) as { custom_id?: unknown; result?: Record<string, unknown> };
  if (typeof customId !== 'string' || typeof result !== 'object' || result === null) return undefined;
  switch (result['type']) {
    case 'succeeded':
      return typeof result['message'] === 'object' && result['message'] !== null
        ? { customId, result: { type: 'succeeded', message: result['message'] as BetaMessage } }
        : undefined;
    case 'errored': {
      // `error` is the API's error body: {type: 'error', error: {type, message}}.
      const body = result['error'] as { error?: { type?: unknown; message?: unknown } } | undefined;
      const type = typeof body?.error?.type === 'string' ? body.error.type : undefined;
      const message = typeof body?.error?.message === 'string' ? body.error.message.slice(0, 2_000) : undefined;
      return {
        customId,
        result: { type: 'errored', error: { ...(type && { type }), ...(message && { message }) } },
      };
    }
    case 'canceled':
    case 'expired':
      return { customId, result: { type: result['type'] } };
    default:
      return undefined;
  }
}

const STATUS_OF: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** An errored result as the SDK's error for the same refusal, so the classifier's verdict is callModel's. */
function apiErrorOf(type: string, message: string): Error {
  const status = STATUS_OF[type] ?? 500;
  return Anthropic.APIError.generate(status, { type: 'error', error: { type, message } }, message, new Headers());
}
