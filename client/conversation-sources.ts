// The two things a reader of a conversation follows, as they come (common/stream-events.ts), read so that streaming
// adds as little as possible to the history:
//   - while the workflow works (an activity or a workflow task pending), the reader polls DescribeWorkflowExecution
//     every `liveIntervalMs`: the running model call's heartbeat details are its live reply, and when the history has
//     grown and what runs has changed, the log's new events are read with a query (getStreamEvents) — neither is
//     recorded in the history;
//   - while it waits (for a person: the next message, an approval), the reader parks on the log's long-poll update
//     (WorkflowStreamClient, following continue-as-new) until the next event, then watches again.
// StreamMerger turns these into the events a reader gets; the gateway shares one source among many readers.
import type { Client } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import { MODEL_ACTIVITY } from '../common/activity-contracts';
import {
  CONVERSATION_EVENTS,
  type LiveReply,
  STREAM_PAGE_EVENTS,
  type StreamEvent,
  type StreamPage,
} from '../common/stream-events';
import { streamEventsQuery } from '../common/workflow-messages';
import { toConversationError } from './errors';

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

  /** The log's events from nextOffset, a page at a time; true when the conversation ended. */
  async function* readLog(): AsyncGenerator<SourceItem, boolean, undefined> {
    for (;;) {
      const page: StreamPage = await guarded(() => handle.query(streamEventsQuery, nextOffset));
      for (const { offset, event } of page.events) {
        nextOffset = offset + 1;
        yield { kind: 'durable', offset, event };
        if (event.type === 'conversation_ended') return true;
      }
      if (page.events.length < STREAM_PAGE_EVENTS) return false;
    }
  }

  try {
    while (!signal?.aborted) {
      if (parked) {
        // Nothing runs: wait on the log's long poll for the next event, then watch again.
        const items = WorkflowStreamClient.create(client, id)
          .topic<StreamEvent>(CONVERSATION_EVENTS)
          .subscribe(nextOffset);
        const step = await guarded(() => items.next());
        items.return(undefined).catch(() => undefined);
        if (step.done) {
          // The conversation closed, or the long poll gave up while it is still open.
          const { status } = await guarded(() => handle.describe());
          if (status.name !== 'RUNNING') return;
          await sleep(100);
          continue;
        }
        nextOffset = step.value.offset + 1;
        yield { kind: 'durable', offset: step.value.offset, event: step.value.data };
        if (step.value.data.type === 'conversation_ended') return;
        parked = false;
        readAt = undefined; // the rest of that poll's batch comes with the next read
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
        if (yield* readLog()) return;
      }
      // Waiting for someone (a message, an approval): park on the long poll instead of looking again and again.
      if (!working) parked = true;
      else await sleep(liveIntervalMs);
    }
  } catch (err) {
    if (signal?.aborted) return;
    throw toConversationError(err, id);
  }
}

function sleep(ms: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms));
}
