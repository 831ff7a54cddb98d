// The format version of what one build writes for another: a conversation's start and continue-as-new input, a child
// conversation's input, the model-side activities' inputs. In a fleet that mixes builds (a rolling deploy without
// Worker Deployments, a rollback) a run or an activity written by a newer build can land on an older worker. The strict
// schemas must keep refusing what no build wrote (hostile input ends the conversation with InvalidConversationInput),
// and must not refuse a newer build's fields: the version tells the two apart. An input whose `v` is newer than this
// build reads is left for a build that reads it (the task fails retryably and waits), never refused. Pure and
// workflow-safe. Design and operator's view: docs/upgrading.md.

/**
 * The input format this build writes, and the newest it reads. Bump it when a build writes an input an older build
 * would misread or refuse (a new key in the options, the carried state or an activity input; a key left out that the
 * older build needs); results follow their input's format (a worker answers an older input in its older format).
 * Absent `v`: format 1 (what every build up to 0.1.0 wrote).
 */
export const INPUT_FORMAT = 1;

/** The error name of a task left for a newer build: a workflow task or an activity attempt fails with it and is retried. */
export const NEWER_INPUT_FORMAT = 'NewerInputFormat';

/** The `v` of an input this build cannot read because a newer build wrote it; undefined for any other input. */
export function newerInputFormat(input: unknown): number | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const v = (input as { v?: unknown }).v;
  return typeof v === 'number' && Number.isSafeInteger(v) && v > INPUT_FORMAT ? v : undefined;
}

/** Why a task was left for another build: the same words in the workflow task failure and the activity failure. */
export function newerInputFormatMessage(what: string, v: number): string {
  return (
    `${what} was written in input format ${v} by a newer build; this build reads formats up to ${INPUT_FORMAT}. ` +
    'Left for a worker of a newer build (retried until one takes it): finish the rollout, or roll it back only with ' +
    'Worker Deployments on (docs/upgrading.md).'
  );
}
