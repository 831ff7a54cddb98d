// A parent's events with its sub-agents' (issue #33). A sub-agent is a child conversation with a stream of its own: on
// the parent's `agent_started` the reader follows that stream too and yields its events tagged `agent: <child id>` (a
// grandchild's, followed the same way by the child's reader, keep their own id), until the child's stream ends. The
// parent's `agent_finished` waits until then, so a child's steps come before its end. `steps` leaves out a child's
// token-level events (text, thinking, tool calls starting, live replies); `all` keeps them.
//
// Cursors: a child's event carries the parent's cursor as it stood (a child moves no parent position), and its
// `offset` is the child's own. A reader that resumes after a cursor follows again, from their first event, the
// children started before it and not finished there (`openAgents`): it may see their earlier steps again, and can
// drop them by (agent, offset).
import type { Client } from '@temporalio/client';
import { streamEventsQuery } from '../../common/workflow-messages';
import type { StreamItem, StreamPage } from '../stream-events';

export type AgentsMode = 'steps' | 'all' | 'none';

/** Children a reader follows at once; those started beyond it are not followed (the parent's events still say them). */
export const MAX_FOLLOWED_AGENTS = 16;

/**
 * Whether a child's event is a step (kept with `steps`): not text, thinking, a tool call's start, nor live; nor its
 * `conversation_ended` (the parent's `agent_finished` says it), so that a reader that stops at `conversation_ended`
 * stops at its own conversation's.
 */
export function isStep(item: StreamItem): boolean {
  if (item.live) return false;
  const { type } = item.event;
  return (
    type !== 'text' &&
    type !== 'thinking' &&
    type !== 'tool_call_started' &&
    type !== 'model_output_discarded' &&
    type !== 'conversation_ended'
  );
}

/** How long the parent's `agent_finished` waits for the child's stream to end (it is over: only its reader lags). */
const HOLD_MAX_MS = 30_000;

export interface SubAgentOptions {
  mode: 'steps' | 'all';
  /** The parent's cursor before its first event here: what a child's event carries until the parent moves. */
  cursor: string;
  /** Children to follow from the start (started before the cursor, not finished there). */
  open?: readonly string[];
  max?: number;
}

/**
 * How a child's stream is read: its events from the first, ending with the child's (a child's own children followed
 * too). `finished()` turns true once the parent said the child ended (a child that never started is not waited for).
 */
export type FollowAgent = (agentId: string, finished: () => boolean) => AsyncIterable<StreamItem>;

type Next = { lane: Lane; result?: IteratorResult<StreamItem>; error?: unknown };
interface Lane {
  agent: string | undefined;
  items: AsyncIterator<StreamItem>;
  next?: Promise<Next>;
  finished: boolean;
}

/** The parent's events (`own`) merged with its followed children's, as they come. */
export async function* withSubAgents(
  own: AsyncIterable<StreamItem>,
  follow: FollowAgent,
  options: SubAgentOptions,
): AsyncGenerator<StreamItem, void, undefined> {
  const max = options.max ?? MAX_FOLLOWED_AGENTS;
  let cursor = options.cursor;
  const parent: Lane = { agent: undefined, items: own[Symbol.asyncIterator](), finished: false };
  const lanes = new Map<string | undefined, Lane>([[undefined, parent]]);
  const open = (agent: string): void => {
    if (lanes.has(agent) || lanes.size - 1 >= max) return;
    const lane: Lane = { agent, items: undefined as unknown as AsyncIterator<StreamItem>, finished: false };
    lane.items = follow(agent, () => lane.finished)[Symbol.asyncIterator]();
    lanes.set(agent, lane);
  };
  for (const agent of options.open ?? []) open(agent);
  /** The parent's `agent_finished` for a child still being read: given once that child's stream ends. */
  let held: StreamItem | undefined;
  /** Resolves when a child's stream took longer than HOLD_MAX_MS to end after its parent said it finished. */
  let holdOver: Promise<'hold-over'> | undefined;
  let holdTimer: NodeJS.Timeout | undefined;
  const step = (lane: Lane): Promise<Next> =>
    (lane.next ??= lane.items.next().then(
      (result) => ({ lane, result }),
      (error: unknown) => ({ lane, error: error ?? new Error('stream failed') }),
    ));
  try {
    for (;;) {
      const reading = [...lanes.values()].filter((lane) => !(lane === parent && held));
      if (reading.length === 0) return;
      const next = await Promise.race([...reading.map(step), ...(holdOver ? [holdOver] : [])]);
      if (next === 'hold-over') {
        // The child's reader lags (or hangs): given up, so the parent goes on.
        const late = held!.event.type === 'agent_finished' ? held!.event.agentId : undefined;
        void lanes
          .get(late)
          ?.items.return?.(undefined)
          ?.catch(() => {});
        lanes.delete(late);
        cursor = held!.cursor;
        yield held!;
        held = undefined;
        holdOver = undefined;
        continue;
      }
      const { lane, result, error } = next;
      lane.next = undefined;
      if (error !== undefined || result?.done) {
        lanes.delete(lane.agent);
        if (lane === parent) {
          if (error !== undefined) throw error;
          return;
        }
        // A child's stream that fails is left out; the parent's events still say how it ended.
        if (held?.event.type === 'agent_finished' && held.event.agentId === lane.agent) {
          cursor = held.cursor;
          clearTimeout(holdTimer);
          holdOver = undefined;
          yield held;
          held = undefined;
        }
        continue;
      }
      const item = result!.value;
      if (lane === parent) {
        // The cursor moves with what is given: a held `agent_finished` moves it when it is given.
        const { event } = item;
        if (event.type === 'agent_started') open(event.agentId);
        if (event.type === 'agent_finished') {
          const child = lanes.get(event.agentId);
          if (child) {
            child.finished = true;
            held = item;
            holdOver = new Promise((resolve) => {
              holdTimer = setTimeout(() => resolve('hold-over'), HOLD_MAX_MS);
            });
            continue;
          }
        }
        cursor = item.cursor;
        yield item;
        if (event.type === 'conversation_ended') return;
      } else {
        if (options.mode === 'steps' && !isStep(item)) continue;
        yield { ...item, cursor, agent: item.agent ?? lane.agent! };
      }
    }
  } finally {
    clearTimeout(holdTimer);
    // Not awaited: a reader parked on a long poll ends when the caller's signal aborts (conversation-events.ts).
    for (const lane of lanes.values()) void lane.items.return?.(undefined)?.catch(() => {});
  }
}

/**
 * The children started in the parent's log up to `offset` and not finished there (at most MAX_FOLLOWED_AGENTS), read
 * by query; none when the log cannot be read.
 */
export async function openAgents(client: Client, id: string, offset: number): Promise<string[]> {
  const open = new Set<string>();
  try {
    const handle = client.workflow.getHandle(id);
    for (let from = 0; from <= offset;) {
      const page: StreamPage = await handle.query(streamEventsQuery, from);
      for (const { offset: at, event } of page.events) {
        if (at > offset) break;
        if (event.type === 'agent_started') open.add(event.agentId);
        if (event.type === 'agent_finished') open.delete(event.agentId);
      }
      if (page.events.length === 0 || !page.more) break;
      from = page.next;
    }
  } catch {
    return [];
  }
  return [...open].slice(0, MAX_FOLLOWED_AGENTS);
}

/** How long a reader waits for a child named by `agent_started` to exist (it is started just after). */
const CHILD_START_WAIT_MS = 30_000;

/**
 * Resolves true once the child's workflow exists; false when the parent said it finished and it still does not (it
 * never started), when CHILD_START_WAIT_MS passed, or when `signal` aborts.
 */
export async function childExists(
  client: Client,
  agentId: string,
  finished: () => boolean,
  signal?: AbortSignal,
): Promise<boolean> {
  const deadline = Date.now() + CHILD_START_WAIT_MS;
  for (;;) {
    try {
      await client.workflow.getHandle(agentId).describe();
      return true;
    } catch {
      if (signal?.aborted || finished() || Date.now() > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}
