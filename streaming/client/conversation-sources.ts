// The two things a reader of a conversation follows, as they come (streaming/stream-events.ts), read so that streaming
// adds as little as possible to the history:
//   - while the workflow works (an activity or a workflow task pending), the reader polls DescribeWorkflowExecution
//     every `liveIntervalMs`: the running model call's heartbeat details are its live reply, and when the history has
//     grown and what runs has changed, the log's new events are read with a query (getStreamEvents) — neither is
//     recorded in the history;
//   - while it waits (for a person: the next message, an approval), the reader parks on the log's long poll (the
//     pollEvents update, following continue-as-new), which answers with the next event or after MAX_POLL_WAIT_MS, then
//     watches again. When the conversation has as many long polls as it takes (MAX_POLLS_IN_FLIGHT) the reader reads
//     by query instead, backing off, and tries a long poll again later: a reader is never failed for that.
//   - while a model call streams on a worker with a live relay (its heartbeat names it: streaming/worker/live-relay.ts),
//     the reader follows the reply there instead of polling, until the relay says the attempt is over; when the
//     relay cannot be reached or goes silent, it polls as above (the heartbeats still carry the reply, less often).
// StreamMerger turns these into the events a reader gets; the gateway shares one source among many readers.
import {
  type Client,
  type WorkflowHandle,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { MODEL_ACTIVITY, parseModelActivityId } from '../../common/activity-contracts';
import { type LiveReply, PollRefusal, type StreamEvent, type StreamPage } from '../stream-events';
import { pollEventsUpdate, streamEventsQuery } from '../../common/workflow-messages';
import { toConversationError } from '../../client/errors';
import type { EventsOptions } from '../../client/call-options';
import { followFeed, isFeedUrl } from './live-feed-reader';
import { followRelay, isRelayUrl } from './live-relay-reader';
import { GrpcStatus, grpcStatusOf, isTemporaryGrpcRefusal, mayAnswerLater } from '../../client/grpc-status';

type PendingActivities = NonNullable<Awaited<ReturnType<WorkflowHandle['describe']>>['raw']['pendingActivities']>;

export type SourceItem =
  | { kind: 'durable'; offset: number; event: StreamEvent }
  /** The running call's attempt now, and its last heartbeat (absent before the first). */
  | { kind: 'live'; call: number; attempt: number; reply?: LiveReply };

/** What the sources take: the events' options but the cursor, which the merger reads. */
export type SourceOptions = Omit<EventsOptions, 'after'>;

/**
 * The Temporal calls readers made, by kind and reason (`describe:working`, `query:log-grew`, …), since the process
 * started: what following conversations costs the server (the bench reports them per model call).
 */
export const readerCalls = new Map<string, number>();
function counted(call: string): void {
  readerCalls.set(call, (readerCalls.get(call) ?? 0) + 1);
}

export async function* conversationSources(
  client: Client,
  id: string,
  options: SourceOptions = {},
): AsyncGenerator<SourceItem, void, undefined> {
  const { signal } = options;
  const liveIntervalMs = options.liveIntervalMs ?? 150;
  const followRelays = options.liveRelay ?? true;
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
  /**
   * The history length and what ran when the log was last read: it is read again only when both changed. `model`: the
   * model call's activity then pending, whose `model_call_started` the reader has therefore read.
   */
  let readAt: { length: number; running: string; model: string | undefined } | undefined;
  let parked = false;
  /** The last relay followed (one per attempt): never followed twice, whether it ended or failed. */
  let lastRelay: string | undefined;
  /** …and whether it said its attempt is over (the call's outcome is then on its way to the history). */
  let lastRelayEnded = false;
  /** The feed last followed, and the offset the reader was at when it left it. */
  let leftFeed: { url: string; offset: number } | undefined;
  /** How long a reader waits between two looks at a working conversation whose history does not change. */
  let workingMs = liveIntervalMs;
  let lookedAtLength = -1;
  /** Reading the log's refusals other than "no worker answered in time", in a row. */
  const readsFailing = new RefusalsInARow();
  /** The long poll's refusals that may pass, in a row. */
  const pollsFailing = new RefusalsInARow();
  /** Why the next look happens (counted in readerCalls). */
  let lookReason = 'first';

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
  async function* readLog(reason: string): AsyncGenerator<SourceItem, boolean, undefined> {
    for (;;) {
      counted(`query:${reason}`);
      const page: StreamPage = await guarded(() => handle.query(streamEventsQuery, nextOffset));
      if (yield* deliver(page)) return true;
      if (!page.more || page.events.length === 0) return false;
    }
  }

  /**
   * The running model call (its number, attempt and last heartbeat, and the activity that runs it: on a fallback model
   * an activity of its own) among the pending activities, if one runs.
   */
  async function modelHeartbeat(pending: PendingActivities) {
    const model = pending.find((activity) => activity.activityType?.name === MODEL_ACTIVITY);
    const activityId = model?.activityId ?? '';
    const call = parseModelActivityId(activityId)?.call;
    if (!model || call === undefined) return undefined;
    const payloads = model.heartbeatDetails?.payloads;
    const reply = payloads?.length
      ? await decodeFromPayloadsAtIndex<LiveReply>(client.options.loadedDataConverter, 0, payloads).catch(
          () => undefined,
        )
      : undefined;
    return { call, attempt: model.attempt ?? 1, reply, activityId };
  }

  /** One long poll from nextOffset: its page, `busy` when it was refused for the cap, `again` when the run ended. */
  async function poll(): Promise<StreamPage | 'busy' | 'again'> {
    try {
      const page = await guarded(() => handle.executeUpdate(pollEventsUpdate, { args: [{ from: nextOffset }] }));
      pollsFailing.answered();
      return page;
    } catch (err) {
      if (signal?.aborted) throw err;
      const answer = pollAnswer(err);
      if (answer) {
        pollsFailing.answered(); // a poll that met anything else ends the row: busy, handed over, timed out
        return answer;
      }
      // A refusal that may pass (a loaded server aborting updates while it reloads the workflow, which 50 readers' polls
      // met in a whole run): polled again, for READ_GRACE_MS in a row, as the log's reads are.
      if (pollsFailing.allows(err)) return 'again';
      throw err;
    }
  }

  try {
    while (!signal?.aborted) {
      if (parked) {
        // Nothing runs: wait on the log's long poll for the next event, then watch again.
        const page = await poll();
        if (page === 'again') {
          counted('describe:poll-ended');
          const { status } = await guarded(() => handle.describe());
          if (status.name === 'RUNNING') {
            await sleep(100, signal); // the next run takes the next poll
            continue;
          }
          try {
            if (yield* readLog('closed')) return;
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
          lookReason = 'after-poll';
          parked = false;
          readAt = undefined;
        }
        continue;
      }

      counted(`describe:${lookReason}`);
      const { status, historyLength, raw } = await guarded(() => handle.describe());
      if (status.name !== 'RUNNING') {
        // Closed (or between runs of continue-as-new): whatever the log still has, then the end.
        if (status.name !== 'CONTINUED_AS_NEW') {
          try {
            if (yield* readLog('closed')) return;
          } catch {
            // A closed workflow answers queries only while a worker can replay it.
          }
          return;
        }
      }
      const pending = raw.pendingActivities ?? [];
      const beat = await modelHeartbeat(pending);
      let relay: { url: string; call: number; attempt: number } | undefined;
      let feed: string | undefined;
      /** A live reply only these looks can show: a model call streams and no relay carries it. */
      let pollingReply = false;
      // A model call's live reply is told only after the log's `model_call_started` for it (the log was read while its
      // activity ran): on a fallback model the call is an activity of its own whose attempts count from 1 again, and
      // told before the log says so its reply would be taken for the failed model's attempt of the same number.
      const started = () => beat !== undefined && readAt?.model === beat.activityId;
      if (beat) {
        const { call, attempt, reply } = beat;
        if (started()) yield { kind: 'live', call, attempt, ...(reply && { reply }) };
        const url = reply?.relay;
        const current = followRelays && reply?.call === call && reply.attempt === attempt;
        if (current && isRelayUrl(url) && url !== lastRelay) relay = { url, call, attempt };
        // The conversation's feed on the same worker carries this call and what follows it: not again from where it
        // was left (it had nothing more then).
        if (current && isFeedUrl(reply.feed) && !(reply.feed === leftFeed?.url && nextOffset === leftFeed.offset)) {
          feed = reply.feed;
        }
        pollingReply = !relay && !(url !== undefined && url === lastRelay && lastRelayEnded);
      }
      const running = pending.map((activity) => activity.activityId ?? '').join(',');
      const working = pending.length > 0 || Boolean(raw.pendingWorkflowTask);
      if (!readAt || (historyLength !== readAt.length && (running !== readAt.running || !working))) {
        const why = readAt ? 'history-grew' : 'first';
        readAt = { length: historyLength, running, model: beat?.activityId };
        try {
          if (yield* readLog(why)) return;
          readsFailing.answered();
        } catch (err) {
          // No worker answered in time (busy, or being restarted): read again at the next look. Other refusals that
          // may pass (the server between two workers) get READ_GRACE_MS in a row before the reader gives up.
          if (!isTemporary(err) && !readsFailing.allows(err)) throw err;
          readAt = undefined;
        }
        idleMs = IDLE_LOOK_MS.first;
      }
      if (relay && !started()) {
        relay = undefined; // the log could not be read: its reply waits for the next look
        pollingReply = true;
      }
      if (feed) {
        // Follow the turn where it is written: the log's events and the replies, as long as the workflow and its calls
        // stay on that worker. When the feed says nothing for a while, one look tells whether it is still the place.
        const followed = feed;
        let looked = { length: historyLength, offset: nextOffset };
        const stillHere = async (): Promise<boolean> => {
          counted('describe:feed-quiet');
          const { status, historyLength: length, raw: now } = await guarded(() => handle.describe());
          const waiting = (now.pendingActivities ?? []).length === 0 && !now.pendingWorkflowTask;
          if (status.name !== 'RUNNING' || waiting) return false; // over, or waiting for a person: park
          const beat = await modelHeartbeat(now.pendingActivities ?? []);
          if (beat?.reply && beat.reply.feed !== followed) return false; // a call streams from elsewhere
          // Workflow tasks completed and the feed brought nothing of them: the workflow runs elsewhere now.
          const elsewhere = length !== looked.length && !now.pendingWorkflowTask && nextOffset === looked.offset;
          looked = { length, offset: nextOffset };
          return !elsewhere;
        };
        const items = followFeed(feed, nextOffset, client.options.loadedDataConverter, signal, stillHere);
        try {
          for (let next = await items.next(); !next.done; next = await items.next()) {
            const item = next.value;
            if (item.kind === 'live') {
              yield item;
              continue;
            }
            nextOffset = item.offset + 1;
            yield item;
            if (item.event.type === 'conversation_ended') return;
          }
        } finally {
          await items.return('failed');
        }
        leftFeed = { url: feed, offset: nextOffset };
        readAt = undefined; // the feed may have missed events (written on another worker): read the log next time
        workingMs = liveIntervalMs;
        lookReason = 'feed-over';
      } else if (relay) {
        // Follow the reply where it is written; then look again at once (the call is over, or the relay is gone).
        lastRelay = relay.url;
        const { url, call: relayedCall, attempt } = relay;
        const replies = followRelay(url, { call: relayedCall, attempt }, client.options.loadedDataConverter, signal);
        try {
          for (let next = await replies.next(); ; next = await replies.next()) {
            if (next.done) {
              lastRelayEnded = next.value === 'ended';
              break;
            }
            yield { kind: 'live', call: relayedCall, attempt, reply: next.value };
          }
        } finally {
          await replies.return('failed');
        }
        workingMs = liveIntervalMs;
        lookReason = 'relay-over';
      } else if (working) {
        // Looks at a busy server cost it work: while nothing changes and no reply streams here, look less often.
        workingMs = pollingReply || historyLength !== lookedAtLength ? liveIntervalMs : Math.min(workingMs * 2, 1_000);
        lookedAtLength = historyLength;
        lookReason = beat ? 'model-call' : 'working';
        await sleep(workingMs, signal);
      } else if (Date.now() >= watchUntil && readAt) {
        // Waiting for someone (a message, an approval): park on the long poll instead of looking again and again.
        parked = true;
      } else {
        lookReason = 'idle';
        await sleep(idleMs, signal);
        idleMs = Math.min(idleMs * 2, IDLE_LOOK_MS.max);
      }
    }
  } catch (err) {
    if (signal?.aborted) return;
    throw toConversationError(err, id);
  }
}

/** How long, in a row, a reader goes on reading the log after refusals other than "no worker answered in time". */
const READ_GRACE_MS = 60_000;

/** While long polls are refused: how long a reader watches before it tries one again (× 1–2, at random)… */
const WATCH_SPELL_MS = 10_000;
/** …and how long it waits between two looks at a conversation that waits (doubling from the first to the last). */
const IDLE_LOOK_MS = { first: 250, max: 2_000 };

/** Refusals that may pass, in a row: a reader asks again for READ_GRACE_MS from the first, then gives up. */
class RefusalsInARow {
  /** Since when (undefined: the last call was answered). */
  private since: number | undefined;

  answered(): void {
    this.since = undefined;
  }

  /** Whether to ask again after `err`: a refusal that may pass, and such refusals have not lasted READ_GRACE_MS. */
  allows(err: unknown): boolean {
    this.since ??= Date.now();
    return mayAnswerLater(err) && Date.now() - this.since <= READ_GRACE_MS;
  }
}

/**
 * What a long poll that failed tells the reader to do: `busy` when refused over the cap, or over Temporal's own limit
 * of updates in flight (its client retried a while already); `again` when the run hands over (continue-as-new) or
 * ended while the poll waited, or the server dropped the poll unseen (its workflow task was lost to a restart).
 * Undefined for any other failure.
 */
function pollAnswer(err: unknown): 'busy' | 'again' | undefined {
  const type =
    err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure ? err.cause.type : undefined;
  if (type === PollRefusal.ReadersBusy || grpcStatusOf(err) === GrpcStatus.RESOURCE_EXHAUSTED) return 'busy';
  if (type === PollRefusal.Detached || type === 'AcceptedUpdateCompletedWorkflow' || type === 'UnprocessedUpdate')
    return 'again';
  if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError || err instanceof WorkflowNotFoundError) return 'again';
  return undefined;
}

/**
 * A query no worker answered in time, or a call Temporal refused for now: worth asking again a little later. A query
 * that waited for a worker until the server's own deadline (e.g. on the sticky queue of a worker that was just killed)
 * comes back as DEADLINE_EXCEEDED, or as CANCELLED when the server resets the stream (client/errors.ts); a reader that
 * cancelled its own call stops at the loop's `signal.aborted` check instead.
 */
function isTemporary(err: unknown): boolean {
  const status = grpcStatusOf(err);
  return status === GrpcStatus.DEADLINE_EXCEEDED || status === GrpcStatus.CANCELLED || isTemporaryGrpcRefusal(err);
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
