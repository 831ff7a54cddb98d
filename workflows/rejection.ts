// The failure every validator of the conversation's updates and queries throws (the workflow's and the client's own
// check before a call): a leaf, so the event log's readers and the client use it without the state machine.
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../common/failure-types';
import { boundedText } from '../common/safe-text';

/** A refusal's text at most: it says what was wrong, and a key or value it names is never sent back whole. */
export const MAX_REJECTION_CHARS = 1_000;

/**
 * The failure every validator rejects with: the caller learns why, and nothing changed. Its message goes out through
 * the worker's encoder, which a lone surrogate stops (zod's messages quote unknown keys): bounded and well-formed here,
 * not only in the worker's failure converter.
 */
export function rejection(message: string, type: string = FailureType.Rejected): ApplicationFailure {
  return ApplicationFailure.create({
    type,
    message: boundedText(message, MAX_REJECTION_CHARS),
    nonRetryable: true,
  });
}
