// The workflow's side of a conversation's live feed (streaming/worker/live-feed.ts): a sink through which the workflow tells
// the worker running it each event it appends to its log, so that readers following the feed on that worker's relay
// get them as they are written instead of polling Temporal for them. Sinks are not called during replay and leave no
// trace in the history; the log (and its query and long poll) stays the record. Types only: workflow-safe.
import type { Sinks } from '@temporalio/workflow';
import type { StreamEvent } from './stream-events';

export interface LiveFeedSinks extends Sinks {
  liveFeed: {
    /** The workflow appended `event` to its log at `offset`. */
    published(offset: number, event: StreamEvent): void;
    /** This run takes no more readers (it ends, or continues as new): the feed ends. */
    detached(): void;
  };
}
