// One model call with threads on (common/threads.ts, docs/threads.md). The first attempt of a call the workflow lets
// continue sends only the new messages as a `continue` of the previous reply's thread — no system prompt, no tools,
// and no need for the earlier transcript at all. Every other call, every later attempt (a retry, a re-run after a
// worker died: the first attempt may have continued that reply already), and a continue whose fingerprint no longer
// matches, sends the whole conversation as a new thread (`create`). A continue the API refuses (not found, already
// continued, in flight, fingerprint mismatch) is sent again at once, whole, as a new thread; a request the API cannot
// thread at all goes whole without a thread.
import { createHash } from 'node:crypto';
import { APIError } from '@anthropic-ai/sdk';
import type { BetaMessageStreamParams } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { ModelContext } from '../common/activity-contracts';
import type { ThreadRequest, ThreadUse } from '../common/threads';
import { THREAD_REPLAY_CODES, THREAD_UNSUPPORTED_CODE, THREADS_BETA } from '../common/threads';

export interface ThreadedCall<R> {
  thread: ThreadRequest;
  /** The activity attempt: only the first may continue. */
  attempt: number;
  /** The request's fingerprint (threadFingerprint of the request built without the conversation's own system prompt). */
  fingerprint: string;
  /** The request over the new messages only (what a continue sends, less system and tools). */
  delta: () => BetaMessageStreamParams;
  /** The request over the whole conversation (reads the earlier transcript from the worker's cache or the workflow). */
  whole: () => Promise<WholeRequest>;
  send: (request: BetaMessageStreamParams) => Promise<R>;
}

/** A request over the whole conversation, and the model context (system prompt and transcript) it was built from. */
export interface WholeRequest {
  request: BetaMessageStreamParams;
  modelContext: ModelContext;
}

/** What a threaded call sent and got; `modelContext` is absent when it continued its thread and never read the whole. */
export interface ThreadedReply<R> {
  message: R;
  request: BetaMessageStreamParams;
  thread: ThreadUse;
  modelContext?: ModelContext;
}

export async function sendThreaded<R>(call: ThreadedCall<R>): Promise<ThreadedReply<R>> {
  const { thread, fingerprint } = call;
  let error: string | undefined;
  if (call.attempt === 1 && thread.continueFrom !== undefined && thread.fingerprint === fingerprint) {
    const request = asContinue(call.delta(), thread.continueFrom);
    try {
      return { message: await call.send(request), request, thread: { mode: 'continued', fingerprint } };
    } catch (err) {
      const refusal = threadRefusal(err);
      if (!refusal) throw err;
      if (refusal.unsupported) return sendUnthreaded(call, refusal.unsupported);
      error = refusal.code;
    }
  }
  const whole = await call.whole();
  const request = asCreate(whole.request);
  try {
    const message = await call.send(request);
    return {
      message,
      request,
      thread: error ? { mode: 'fell_back', fingerprint, error } : { mode: 'created', fingerprint },
      modelContext: whole.modelContext,
    };
  } catch (err) {
    const refusal = threadRefusal(err);
    if (!refusal?.unsupported) throw err;
    return {
      message: await call.send(whole.request),
      request: whole.request,
      thread: { mode: 'unthreaded', unsupported: refusal.unsupported },
      modelContext: whole.modelContext,
    };
  }
}

async function sendUnthreaded<R>(call: ThreadedCall<R>, unsupported: string[]): Promise<ThreadedReply<R>> {
  const { request, modelContext } = await call.whole();
  const thread: ThreadUse = { mode: 'unthreaded', unsupported };
  return { message: await call.send(request), request, thread, modelContext };
}

/**
 * What a thread keeps from the request that created it and a continue cannot change: the model, the system prompt
 * and the tools. The conversation's own system prompt never changes, so the request is built without it; what the
 * protocol puts there (the legacy protocol's tool descriptions) counts.
 */
export function threadFingerprint(request: Pick<BetaMessageStreamParams, 'model' | 'system' | 'tools'>): string {
  const kept = JSON.stringify({ model: request.model, system: request.system ?? null, tools: request.tools ?? null });
  return createHash('sha256').update(kept).digest('hex').slice(0, 32);
}

function withThreadsBeta(request: BetaMessageStreamParams): BetaMessageStreamParams {
  const betas = request.betas ?? [];
  return betas.includes(THREADS_BETA) ? request : { ...request, betas: [...betas, THREADS_BETA] };
}

export function asCreate(request: BetaMessageStreamParams): BetaMessageStreamParams {
  return { ...withThreadsBeta(request), thread: { type: 'create' } };
}

/** The thread keeps its system prompt and tools: a continue leaves them out. */
export function asContinue(request: BetaMessageStreamParams, previousMessageId: string): BetaMessageStreamParams {
  const { system: _system, tools: _tools, ...rest } = withThreadsBeta(request);
  return { ...rest, thread: { type: 'continue', previous_message_id: previousMessageId } };
}

/** A thread refusal of the API (by its `details.error_code`), or undefined for any other failure. */
export function threadRefusal(err: unknown): { code: string; unsupported?: string[] } | undefined {
  if (!(err instanceof APIError)) return undefined;
  const code = err.errorCode;
  if (code === THREAD_UNSUPPORTED_CODE) {
    const details = (err.error as { error?: { details?: { unsupported?: unknown } } } | undefined)?.error?.details;
    const named = Array.isArray(details?.unsupported) ? details.unsupported.map(String).slice(0, 8) : [];
    return { code, unsupported: named };
  }
  return (THREAD_REPLAY_CODES as readonly (string | null)[]).includes(code) ? { code: code! } : undefined;
}
