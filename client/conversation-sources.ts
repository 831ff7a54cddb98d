// The two things a reader of a conversation follows, as they come (common/stream-events.ts), read so that streaming
// adds as little as possible to the history:
//   - while the workflow works (an activity or a workflow task pending), the reader polls DescribeWorkflowExecution
//     every `liveIntervalMs`: the running model call's heartbeat details are its live reply, and when the history has
//     grown and what runs has changed, the log's new events are read with a query (getStreamEvents) — neither is
//     recorded in the history;
//   - while it waits (for a person: the next message, an approval), the reader parks on the log's long poll (the
//     pollEvents update, following continue-as-new), which answers with the next event or after MAX_POLL_WAIT_MS, then
//     watches again. When the conversation has as many long polls as it takes (MAX_POLLS_IN_FLIGHT) the reader reads
//     by query instead, backing off, and tries a long poll again later: a reader is never failed for that.
// StreamMerger turns these into the events a reader gets; the gateway shares one source among many readers.
import {
  type Client,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { MODEL_ACTIVITY } from '../common/activity-contracts';
import { type LiveReply, PollRefusal, type StreamEvent, type StreamPage } from '../common/stream-events';
import { pollEventsUpdate, streamEventsQuery } from '../common/workflow-messages';
import { toConversationError } from './errors';
import { GrpcStatus, grpcStatusOf, isTemporaryGrpcRefusal } from './grpc-status';

export type SourceItem =
  | { kind: 'durable'; offset: number; event: StreamEvent }
  /** The running call's attempt now, and its last heartbeat (absent before the first). */
  | { kind: 'live'; call: number; attempt: number; reply?: LiveReply };

export interface SourceOptions {
  /** The first durable offset to read (0: the oldest event still kept). */
  fromOffset?: number;
  /** Ends the iteration (and the poll waiting on the server) when aborted. */
  signal?: AbortSignal;
  /** How often a working conversation is looked at (its live reply, whether its log grew). Default 150 ms. */
  liveIntervalMs?: number;
}

export async function* conversationSources(
  client: Client,
  id: string,
  options: SourceOptions = {},
): AsyncGenerator<SourceItem, void, undefined> {
  const { signal } = options;
  const liveIntervalMs = options.liveIntervalMs ?? 150;
  // Each RPC adds an abort listener to the signal it runs under and never removes it: a signal of its own per call,
  // linked to the caller's, keeps a long reader from piling them up.
  const guarded = async <T>(call: () => Promise<T>): Promise<T> => {
    if (!signal) return call();
    const own = new AbortController();
    const abort = () => own.abort();
    signal.addEventListener('abort', abort, { once: true });
    try {
      return await client.withAbortSignal(own.signal, call);
    } finally {
      signal.removeEventListener('abort', abort);
    }
  };
  const handle = client.workflow.getHandle(id);
  let nextOffset = options.fromOffset ?? 0;
  /** The history length and what ran when the log was last read: it is read again only when both changed. */
  let readAt: { length: number; running: string } | undefined;
  let parked = false;

  /** Until when a reader whose long poll was refused (as many as the conversation takes wait) watches instead. */
  let watchUntil = 0;
  /** How long a reader that watches a waiting conversation waits between two looks (it doubles while nothing moves). */
  let idleMs = IDLE_LOOK_MS.first;

  /** The events of a page, in order; true when the conversation ended. */
  function* deliver(page: StreamPage): Generator<SourceItem, boolean, undefined> {
    for (const { offset, event } of page.events) {
      nextOffset = offset + 1;
      yield { kind: 'durable', offset, event };
      if (event.type === 'conversation_ended') return true;
    }
    return false;
  }

  /** The log's events from nextOffset by query, a page at a time; true when the conversation ended. */
  async function* readLog(): AsyncGenerator<SourceItem, boolean, undefined> {
    for (;;) {
      const page: StreamPage = await guarded(() => handle.query(streamEventsQuery, nextOffset));
      if (yield* deliver(page)) return true;
      if (!page.more || page.events.length === 0) return false;
    }
  }

  /** One long poll from nextOffset: its page, `busy` when it was refused for the cap, `again` when the run ended. */
  async function poll(): Promise<StreamPage | 'busy' | 'again'> {
    try {
      return await guarded(() => handle.executeUpdate(pollEventsUpdate, { args: [{ from: nextOffset }] }));
    } catch (err) {
      if (signal?.aborted) throw err;
      const refusal = err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure;
      const type = refusal ? (err.cause as ApplicationFailure).type : undefined;
      // Over the cap, or over Temporal's own limit of updates in flight (its client retried a while already).
      if (type === PollRefusal.ReadersBusy || grpcStatusOf(err) === GrpcStatus.RESOURCE_EXHAUSTED) return 'busy';
      // The run hands over (continue-as-new) or ended while the poll waited; or the server dropped the poll unseen
      // (its workflow task was lost to a restart).
      if (type === PollRefusal.Detached || type === 'AcceptedUpdateCompletedWorkflow' || type === 'UnprocessedUpdate')
        return 'again';
      if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError || err instanceof WorkflowNotFoundError)
        return 'again';
      throw err;
    }
  }

  try {
    while (!signal?.aborted) {
      if (parked) {
        // Nothing runs: wait on the log's long poll for the next event, then watch again.
        const page = await poll();
        if (page === 'again') {
          const { status } = await guarded(() => handle.describe());
          if (status.name === 'RUNNING') {
            await sleep(100, signal); // the next run takes the next poll
            continue;
          }
          try {
            if (yield* readLog()) return;
          } catch {
            // A closed workflow answers queries only while a worker can replay it.
          }
          return;
        }
        if (page === 'busy') {
          // As many polls wait as the conversation takes: watch it (describe; the query when its history grew),
          // looking less often while nothing moves, and try a long poll again later.
          parked = false;
          watchUntil = Date.now() + WATCH_SPELL_MS * (1 + Math.random());
          continue;
        }
        if (yield* deliver(page)) return;
        // More of the log is ready (a long one): poll again at once. Events, or a turn under way: watch again.
        if (!page.more && (page.events.length > 0 || page.busy)) {
          parked = false;
          readAt = undefined;
        }
        continue;
      }

      const { status, historyLength, raw } = await guarded(() => handle.describe());
      if (status.name !== 'RUNNING') {
        // Closed (or between runs of continue-as-new): whatever the log still has, then the end.
        if (status.name !== 'CONTINUED_AS_NEW') {
          try {
            if (yield* readLog()) return;
          } catch {
            // A closed workflow answers queries only while a worker can replay it.
          }
          return;
        }
      }
      const pending = raw.pendingActivities ?? [];
      const model = pending.find((activity) => activity.activityType?.name === MODEL_ACTIVITY);
      const call = Number(/^model-(\d+)$/.exec(model?.activityId ?? '')?.[1]);
      if (model && Number.isInteger(call)) {
        const payloads = model.heartbeatDetails?.payloads;
        const reply = payloads?.length
          ? await decodeFromPayloadsAtIndex<LiveReply>(client.options.loadedDataConverter, 0, payloads).catch(
              () => undefined,
            )
          : undefined;
        yield { kind: 'live', call, attempt: model.attempt ?? 1, ...(reply && { reply }) };
      }
      const running = pending.map((activity) => activity.activityId ?? '').join(',');
      const working = pending.length > 0 || Boolean(raw.pendingWorkflowTask);
      if (!readAt || (historyLength !== readAt.length && (running !== readAt.running || !working))) {
        readAt = { length: historyLength, running };
        try {
          if (yield* readLog()) return;
        } catch (err) {
          // No worker answered in time (busy, or being restarted): read again at the next look.
          if (!isTemporary(err)) throw err;
          readAt = undefined;
        }
        idleMs = IDLE_LOOK_MS.first;
      }
      if (working) {
        await sleep(liveIntervalMs, signal);
      } else if (Date.now() >= watchUntil && readAt) {
        // Waiting for someone (a message, an approval): park on the long poll instead of looking again and again.
        parked = true;
      } else {
        await sleep(idleMs, signal);
        idleMs = Math.min(idleMs * 2, IDLE_LOOK_MS.max);
      }
    }
  } catch (err) {
    if (signal?.aborted) return;
    throw toConversationError(err, id);
  }
}

/** While long polls are refused: how long a reader watches before it tries one again (× 1–2, at random)… */
const WATCH_SPELL_MS = 10_000;
/** …and how long it waits between two looks at a conversation that waits (doubling from the first to the last). */
const IDLE_LOOK_MS = { first: 250, max: 2_000 };

/** A query no worker answered in time, or a call Temporal refused for now: worth asking again a little later. */
function isTemporary(err: unknown): boolean {
  const status = grpcStatusOf(err);
  return status === GrpcStatus.DEADLINE_EXCEEDED || isTemporaryGrpcRefusal(err);
}

/** Resolves after `ms`, or as soon as `signal` aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<undefined> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve(undefined);
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
