// The one place that decides what a failed model call means. Temporal owns retries (the SDK runs with
// maxRetries 0), so every SDK error becomes an ApplicationFailure with a stable `type`, retryable or not,
// carrying the server's requested delay. The workflow matches on `type`, never on classes.
import Anthropic from '@anthropic-ai/sdk';
import { ApplicationFailure } from '@temporalio/common';
import { truncate } from '../common/safe-text';
import type { TokenUsage } from '../common/conversation-types';
import { ModelFailureType } from '../common/failure-types';
import { boundedText } from '../common/safe-text';

/** A failure's message reaches the caller: a builder's error text is cut to this. */
const MAX_REASON_CHARS = 1_000;

export interface ModelFailureKind {
  type: string;
  retryable: boolean;
}

/** By HTTP status. Anything not listed: 5xx retries, other 4xx do not. */
const BY_STATUS: Record<number, ModelFailureKind> = {
  400: { type: ModelFailureType.InvalidRequest, retryable: false },
  401: { type: ModelFailureType.Authentication, retryable: false },
  402: { type: ModelFailureType.Billing, retryable: false },
  403: { type: ModelFailureType.PermissionDenied, retryable: false },
  404: { type: ModelFailureType.NotFound, retryable: false },
  408: { type: ModelFailureType.RequestTimeout, retryable: true },
  409: { type: ModelFailureType.Conflict, retryable: true },
  413: { type: ModelFailureType.RequestTooLarge, retryable: false },
  429: { type: ModelFailureType.RateLimited, retryable: true },
  529: { type: ModelFailureType.Overloaded, retryable: true },
};

/**
 * The most of an error's text a failure carries. The endpoint writes it (a proxy can write megabytes, or text that is
 * not well-formed).
 */
export const MAX_FAILURE_MESSAGE_CHARS = 2_000;

/** The API's 400 for a prompt longer than the model's context window (`prompt is too long: 210000 tokens > 200000`). */
const PROMPT_TOO_LONG = /prompt is too long|exceeds? the (?:model's )?context window/i;

/** A delay the server asked for: `retry-after-ms` (milliseconds) wins over `retry-after` (seconds or a date). */
export function requestedDelayMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  const ms = Number(headers?.get('retry-after-ms'));
  if (headers?.get('retry-after-ms') && Number.isFinite(ms) && ms >= 0) return ms;
  const after = headers?.get('retry-after');
  if (!after) return undefined;
  const seconds = Number(after);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * An error thrown while building a request, before any HTTP call (the request builder, the tool lookup, the JSON
 * Schema transform): deterministic, so retrying it would fail the same way until the attempts run out.
 */
export class ModelRequestInvalid extends Error {
  override name = 'ModelRequestInvalid';
}

/** Runs a request builder; whatever it throws becomes a ModelRequestInvalid, which is not retried. */
export function buildingRequest<T>(build: () => T): T {
  try {
    return build();
  } catch (error) {
    const reason = boundedText(describe(error), MAX_REASON_CHARS);
    throw new ModelRequestInvalid(`The request could not be built: ${reason}`, { cause: error });
  }
}

export function classifyModelError(error: unknown): ModelFailureKind {
  if (error instanceof ModelRequestInvalid) return { type: ModelFailureType.RequestInvalid, retryable: false };
  if (error instanceof Anthropic.APIConnectionTimeoutError) return { type: ModelFailureType.Timeout, retryable: true };
  if (error instanceof Anthropic.APIConnectionError) return { type: ModelFailureType.ConnectionError, retryable: true };
  if (error instanceof Anthropic.APIError) {
    if (error.status === undefined) {
      // An `event: error` in the middle of a stream (overloaded, api_error, …): always worth another try.
      return { type: ModelFailureType.StreamError, retryable: true };
    }
    if (error.status === 400 && PROMPT_TOO_LONG.test(error.apiMessage ?? error.message)) {
      return { type: ModelFailureType.ContextWindowExceeded, retryable: false };
    }
    const kind =
      BY_STATUS[error.status] ??
      (error.status >= 500
        ? { type: ModelFailureType.ServerError, retryable: true }
        : { type: `ModelHttp${error.status}`, retryable: false });
    const shouldRetry = error.headers?.get('x-should-retry');
    if (shouldRetry === 'true') return { ...kind, retryable: true };
    if (shouldRetry === 'false') return { ...kind, retryable: false };
    return kind;
  }
  // Not from the API at all: a bug or an unexpected reply shape. Retrying may help (another worker, a fixed deploy).
  return { type: ModelFailureType.CallError, retryable: true };
}

/** The API has no capacity for the model now: 529 `overloaded_error`, or that error in the middle of a stream. */
export function isOverloaded(error: unknown): boolean {
  if (!(error instanceof Anthropic.APIError)) return false;
  return error.status === 529 || (error.status === undefined && error.type === 'overloaded_error');
}

/**
 * A call that may fall back to another model (common/fallback-models.ts): on attempt `attempt`, an overloaded model
 * is given up after `after` attempts.
 */
export interface FallbackPolicy {
  attempt: number;
  after: number;
}

/**
 * The failure a model activity throws for `error`; its message is what reaches the caller. `billed`: what the call's
 * attempts billed so far (activities/billed-attempts.ts), which the workflow counts. `fallback`: an overloaded model
 * on its last allowed attempt fails as ModelOverloaded, not retried, and the workflow moves the call to the next model.
 */
export function toModelFailure(error: unknown, billed?: TokenUsage, fallback?: FallbackPolicy): ApplicationFailure {
  const givesUp = fallback !== undefined && fallback.attempt >= fallback.after && isOverloaded(error);
  const kind = givesUp ? { type: ModelFailureType.Overloaded, retryable: false } : classifyModelError(error);
  const apiError = error instanceof Anthropic.APIError ? error : undefined;
  const delay = apiError ? requestedDelayMs(apiError.headers) : undefined;
  // What the API (or a proxy in front of it) said, bounded and well-formed: the worker encodes this failure itself,
  // and a failure it cannot report is no failure at all (the attempt would time out instead).
  const message = truncate(describe(error), MAX_FAILURE_MESSAGE_CHARS);
  const shown = (value: unknown) => (typeof value === 'string' ? boundedText(value, 200) : null);
  const about = {
    ...(apiError && {
      status: apiError.status ?? null,
      requestId: shown(apiError.requestID),
      errorType: shown(apiError.type),
    }),
    ...(billed && { billed }),
  };
  return ApplicationFailure.create({
    type: kind.type,
    message,
    nonRetryable: !kind.retryable,
    ...(kind.retryable && delay !== undefined && { nextRetryDelay: delay }),
    details: Object.keys(about).length > 0 ? [about] : [],
  });
}

function describe(error: unknown): string {
  if (error instanceof Anthropic.APIError) {
    const status = error.status === undefined ? 'stream error' : String(error.status);
    const detail = error.apiMessage ?? error.message;
    return `${status} ${error.type ?? 'error'}: ${detail}${error.requestID ? ` (request ${error.requestID})` : ''}`;
  }
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
