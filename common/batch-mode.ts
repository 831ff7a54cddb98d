// Batch mode (docs/batches.md): a conversation's model calls go through the Message Batches API at half price instead
// of `messages.create`, and the workflow waits for them durably. The option, per conversation and per turn, and the
// pure arithmetic of the wait. Workflow-safe: types, zod and plain functions only.
import { z } from 'zod';
import { sharedOnce } from './shared-once';

/** How long a call waits, at most, for others to share its batch (the worker's default; a conversation may pick). */
export const DEFAULT_BATCH_WINDOW_MS = 2_000;
/** A window longer than this would hold the submitting activity too long. */
export const MAX_BATCH_WINDOW_MS = 60_000;

/**
 * `true`: each model call goes through a Message Batch (half the price, an answer within 24 hours, usually minutes).
 * `{ windowMs }`: the same, waiting at most that long for other calls of the worker to share the batch. `false` (per
 * turn): this turn's calls go to `messages.create` as usual.
 */
export const batchOptionSchema = sharedOnce('batchMode.batchOptionSchema', () =>
  z.union([z.boolean(), z.strictObject({ windowMs: z.number().int().min(0).max(MAX_BATCH_WINDOW_MS).optional() })]),
);
export type BatchOption = z.infer<typeof batchOptionSchema>;

/** A call in batch mode: how long it waits to share a batch (absent: the worker's window). */
export interface BatchMode {
  windowMs?: number;
}

/** The batch mode of a call: the turn's option wins over the conversation's; undefined is `messages.create`. */
export function batchModeOf(conversation?: BatchOption, turn?: BatchOption): BatchMode | undefined {
  const option = turn ?? conversation;
  if (option === undefined || option === false) return undefined;
  return option === true || option.windowMs === undefined ? {} : { windowMs: option.windowMs };
}

/** The batch option a child conversation inherits from a parent call in this mode; undefined when it is off. */
export function batchOptionOf(conversation?: BatchOption, turn?: BatchOption): BatchOption | undefined {
  const mode = batchModeOf(conversation, turn);
  if (!mode) return undefined;
  return mode.windowMs === undefined ? true : { windowMs: mode.windowMs };
}

/** The first poll waits this long after the submission; each next poll twice as long, up to the maximum. */
export const FIRST_POLL_MS = 2_000;
export const MAX_POLL_MS = 60_000;
/**
 * Polls of one submission, at most: with 60 s between them from the sixth on, a little over 25 hours — past the
 * API's 24-hour expiry, after which every request has a result (`expired` at worst).
 */
export const MAX_POLLS = 1_520;
/** Submissions of one call, at most: the first and its retries after an expired, errored or missing result. */
export const MAX_SUBMISSIONS = 4;

/** How long to wait before poll `n` (0-based) of a submission. */
export function pollDelayMs(n: number): number {
  return Math.min(MAX_POLL_MS, FIRST_POLL_MS * 2 ** Math.min(n, 10));
}
