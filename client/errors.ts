// The client's one error type: a `code` to branch on and a message a person can act on.
import { ApplicationFailure, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/common';
import { WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';

export type ConversationErrorCode =
  | 'invalid_options'
  | 'invalid_message'
  | 'rejected' // the workflow refused the call (validator): ended conversation, unknown turn, wrong approval
  | 'not_found'
  | 'conversation_failed' // the conversation ended with a failure (e.g. the model API rejected the request)
  | 'already_started';

export class ConversationError extends Error {
  override name = 'ConversationError';
  constructor(readonly code: ConversationErrorCode, message: string, readonly failureType?: string, options?: ErrorOptions) {
    super(message, options);
  }
}

/** Maps what Temporal's client throws onto ConversationError; anything unexpected passes through. */
export function toConversationError(err: unknown, conversationId: string): unknown {
  if (err instanceof ConversationError) return err;
  if (err instanceof WorkflowNotFoundError || isGrpcNotFound(err)) {
    return new ConversationError('not_found', `No open conversation "${conversationId}".`, undefined, { cause: err });
  }
  if (err instanceof WorkflowExecutionAlreadyStartedError) {
    return new ConversationError('already_started', `Conversation "${conversationId}" already exists.`, undefined, { cause: err });
  }
  if (err instanceof WorkflowUpdateFailedError || err instanceof WorkflowFailedError) {
    const cause = err.cause;
    if (cause instanceof ApplicationFailure) {
      // Validators reject with plain errors (type TypeError); a failed turn carries the model failure's type.
      const rejected = cause.type === 'TypeError' || cause.type === 'Error';
      return new ConversationError(rejected ? 'rejected' : 'conversation_failed', cause.message, cause.type ?? undefined, { cause: err });
    }
    return new ConversationError('conversation_failed', cause?.message ?? err.message, undefined, { cause: err });
  }
  return err;
}

function isGrpcNotFound(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: number }).code === 5;
}
