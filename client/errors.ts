// The client's one error type: a `code` to branch on and a message a person can act on.
import { ApplicationFailure, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/common';
import { WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { FailureType } from '../common/failure-types';
import { GrpcStatus, grpcStatusOf } from './grpc-status';
import { missingSearchAttribute, missingSearchAttributesMessage } from './missing-search-attributes';

export type ConversationErrorCode =
  | 'invalid_options'
  | 'invalid_message'
  /** The workflow refused the call (its validator): ended conversation, unknown or forgotten turn, wrong approval. */
  | 'rejected'
  | 'not_found'
  /** A conversation with this id exists already, or existed: ids are not reused. */
  | 'already_started'
  /** The turn failed (e.g. the model API refused the key); the conversation is still open for the next message. */
  | 'turn_failed'
  /** The conversation ended with a failure. */
  | 'conversation_failed'
  /** No answer within the time the caller was willing to wait; the turn goes on in the workflow. */
  | 'timeout'
  /** No worker answered on the task queue. */
  | 'unavailable'
  /** The conversation takes no more callers waiting on its turns for now (nothing was sent); try again shortly. */
  | 'busy'
  /**
   * The namespace lacks the conversation search attributes, so nothing can start there until they are added (the
   * message names ensureSearchAttributes and the Temporal CLI commands). Not a caller's bad option, not temporary.
   */
  | 'search_attributes_missing';

export class ConversationError extends Error {
  override name = 'ConversationError';
  constructor(
    readonly code: ConversationErrorCode,
    message: string,
    /** The failure's type when the workflow or a model call named it (e.g. `ModelAuthentication`). */
    readonly failureType?: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The refusals of a conversation's validators, by failure type; any other failure ended the conversation. */
const CODE_OF_FAILURE: Partial<Record<string, ConversationErrorCode>> = {
  [FailureType.Rejected]: 'rejected',
  [FailureType.Busy]: 'busy',
  [FailureType.InvalidMessageOptions]: 'invalid_options',
};

/** The code of a validator's refusal of this failure type, or undefined when it is no refusal. */
export function refusalCode(failureType: string | null | undefined): ConversationErrorCode | undefined {
  return CODE_OF_FAILURE[failureType ?? ''];
}

/** Maps what Temporal's client throws onto ConversationError; anything unexpected passes through. */
export function toConversationError(err: unknown, conversationId: string): unknown {
  if (err instanceof ConversationError) return err;
  const missing = missingSearchAttribute(err);
  if (missing) {
    const message = missingSearchAttributesMessage(missing.namespace, missing.attribute);
    return new ConversationError('search_attributes_missing', message, undefined, { cause: err });
  }
  if (err instanceof WorkflowNotFoundError || isGrpcNotFound(err)) {
    return new ConversationError('not_found', `No open conversation "${conversationId}".`, undefined, { cause: err });
  }
  if (err instanceof WorkflowExecutionAlreadyStartedError) {
    const message = `Conversation "${conversationId}" already exists (or existed: ids are not reused); send it a message instead.`;
    return new ConversationError('already_started', message, undefined, { cause: err });
  }
  if (err instanceof WorkflowUpdateFailedError || err instanceof WorkflowFailedError) {
    const cause = err.cause;
    if (cause instanceof ApplicationFailure) {
      const code = refusalCode(cause.type) ?? 'conversation_failed';
      return new ConversationError(code, cause.message, cause.type ?? undefined, { cause: err });
    }
    return new ConversationError('conversation_failed', cause?.message ?? err.message, undefined, { cause: err });
  }
  return err;
}

/**
 * A query (or another call a worker must answer) that no worker answered: with no worker polling the conversation's
 * task queue the server waits for one until the call's deadline, then answers DEADLINE_EXCEEDED — or, when its own
 * 30 s ends the call first, resets the stream, which the client reports as CANCELLED (seen in about half the runs), or
 * refuses with FAILED_PRECONDITION "no poller seen for task queue recently, worker may be down".
 */
export function noWorkerAnswered(err: unknown, taskQueue: string): ConversationError | undefined {
  const status = grpcStatusOf(err);
  const noPoller = status === GrpcStatus.FAILED_PRECONDITION && /no poller seen/i.test(messagesOf(err));
  if (status !== GrpcStatus.DEADLINE_EXCEEDED && status !== GrpcStatus.CANCELLED && !noPoller) return undefined;
  return new ConversationError(
    'unavailable',
    `No worker answered on task queue "${taskQueue}" in time; is a worker running (and polling that task queue)?`,
    undefined,
    { cause: err },
  );
}

/**
 * The server refused an update because the workflow's last task failed or timed out (FAILED_PRECONDITION "…Workflow
 * Task in failed state"): the update was not taken, and is taken once a retried task completes (a worker restart, a
 * task that ran past its timeout on a loaded worker). Safe to send again with the same update id.
 */
export function refusedWhileTaskFails(err: unknown): boolean {
  return grpcStatusOf(err) === GrpcStatus.FAILED_PRECONDITION && /workflow task in failed state/i.test(messagesOf(err));
}

/** The messages along an error's cause chain, one a line: where a gRPC status's details are. */
export function messagesOf(err: unknown): string {
  const messages: string[] = [];
  let cause = err;
  for (let depth = 0; cause instanceof Error && depth < 10; depth++, cause = cause.cause) messages.push(cause.message);
  if (cause !== undefined && !(cause instanceof Error)) messages.push(String(cause));
  return messages.join('\n');
}

/**
 * Any failure as a caller is told of it: a ConversationError's code and message; Temporal out of reach is
 * `unavailable`; anything else `internal`, with the messages along its causes on one line (no stack).
 */
export function failureReport(err: unknown): { code: string; message: string } {
  if (err instanceof ConversationError) return { code: err.code, message: err.message };
  const message = messagesOf(err).replace(/\s+/g, ' ').trim().slice(0, 1_000) || 'unknown error';
  return { code: grpcStatusOf(err) === GrpcStatus.UNAVAILABLE ? 'unavailable' : 'internal', message };
}

function isGrpcNotFound(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: number }).code === 5;
}
