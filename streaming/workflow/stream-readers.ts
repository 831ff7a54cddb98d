// How readers reach the conversation's event log (streaming/workflow/conversation-stream.ts), and only read it:
//   - the query getStreamEvents (nothing in the history), which readers use while a turn runs;
//   - the update pollEvents, a long poll for when the conversation waits for a person. A poll holds one of the few
//     updates Temporal lets a workflow have in flight until it answers, whether its reader is still there or not: it
//     answers within MAX_POLL_WAIT_MS even when nothing happens, and no more than MAX_POLLS_IN_FLIGHT wait at once,
//     so messages and approvals always find a slot;
//   - the two handlers @temporalio/workflow-streams registered in version 0.1.0, kept so that its histories replay:
//     its poll update refuses every new call and, replayed, completes where it did; its publish signal is ignored.
import { ApplicationFailure } from '@temporalio/common';
import { condition, defineSignal, defineUpdate, setHandler } from '@temporalio/workflow';
import { MAX_POLL_WAIT_MS, MAX_POLLS_IN_FLIGHT, PollRefusal, type StreamPage } from '../stream-events';
import {
  pollEventsUpdate,
  pollRequestSchema,
  streamEventsQuery,
  streamOffsetSchema,
} from '../../common/workflow-messages';
import type { ConversationStream } from './conversation-stream';
import { rejection } from '../../workflows/rejection';

/** 0.1.0's names (fixed by @temporalio/workflow-streams): old readers and old histories use them. */
const legacyPublishSignal = defineSignal<[unknown]>('__temporal_workflow_stream_publish');
const legacyPollUpdate = defineUpdate<LegacyPollResult, [unknown]>('__temporal_workflow_stream_poll');

interface LegacyPollResult {
  items: never[];
  next_offset: number;
  more_ready: boolean;
}

/** `busy`: a turn runs or messages wait for one (more events are coming without anyone writing). */
export function registerStreamReaders(stream: ConversationStream, busy: () => boolean): void {
  const page = (from: number): StreamPage => ({ ...stream.read(from), busy: busy() });
  let polls = 0;

  setHandler(streamEventsQuery, (from) => {
    const parsed = streamOffsetSchema.safeParse(from);
    if (!parsed.success) throw rejection('getStreamEvents takes an offset: an integer ≥ 0.');
    return page(parsed.data);
  });

  setHandler(
    pollEventsUpdate,
    async (request) => {
      // The validator let it in; a history replayed after a change of the schema must still not fail its task.
      const parsed = pollRequestSchema.safeParse(request);
      if (!parsed.success) throw rejection(POLL_USAGE);
      const { from, waitMs = MAX_POLL_WAIT_MS } = parsed.data;
      polls++;
      try {
        if (waitMs > 0 && !stream.isDetached && !stream.hasEventsFrom(from)) {
          await condition(() => stream.isDetached || stream.hasEventsFrom(from), waitMs);
        }
        return page(from);
      } finally {
        polls--;
      }
    },
    {
      validator: (request) => {
        // Fixed texts: a refusal never repeats what the caller sent.
        if (!pollRequestSchema.safeParse(request).success) throw rejection(POLL_USAGE);
        if (stream.isDetached) {
          throw refusal(
            PollRefusal.Detached,
            'This run of the conversation is ending: poll again (the next run answers).',
          );
        }
        if (polls >= MAX_POLLS_IN_FLIGHT) {
          throw refusal(
            PollRefusal.ReadersBusy,
            `${MAX_POLLS_IN_FLIGHT} long polls wait on this conversation already: read it with the getStreamEvents query.`,
          );
        }
      },
    },
  );

  // Nobody but the workflow writes into the log: what 0.1.0's publish signal brings is dropped unread.
  setHandler(legacyPublishSignal, () => undefined);

  setHandler(
    legacyPollUpdate,
    async (input) => {
      // Runs only for polls 0.1.0 accepted (its histories, replayed; a poll in flight across the upgrade): it waits
      // for what 0.1.0's WorkflowStream waited for, so it completes at the same point of the history.
      const from = legacyFromOffset(input);
      const truncated = () => from !== 0 && from < stream.legacyBase;
      const failIfTruncated = () => {
        if (truncated()) {
          throw ApplicationFailure.create({
            type: 'TruncatedOffset',
            message: 'The requested offset has been truncated.',
            nonRetryable: true,
          });
        }
      };
      failIfTruncated();
      await condition(() => stream.isDetached || truncated() || stream.offset() > Math.max(from, stream.legacyBase));
      failIfTruncated();
      return { items: [], next_offset: stream.offset(), more_ready: false };
    },
    {
      validator: (_input: unknown): void => {
        throw rejection(
          '__temporal_workflow_stream_poll is no longer served: read the log with the pollEvents update or the getStreamEvents query.',
        );
      },
    },
  );
}

const POLL_USAGE = `pollEvents takes { from: an offset (an integer ≥ 0), waitMs?: 0 to ${MAX_POLL_WAIT_MS} }.`;

function refusal(type: string, message: string): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true });
}

/** `from_offset` of a 0.1.0 poll ({ topics, from_offset }); 0 (its "from the oldest") when it is not a valid one. */
function legacyFromOffset(input: unknown): number {
  const offset = (input as { from_offset?: unknown } | null)?.from_offset;
  return typeof offset === 'number' && Number.isSafeInteger(offset) && offset >= 0 ? offset : 0;
}
