// The conversation's event log (streaming/stream-events.ts): plain JSON events that the workflow appends to, in memory
// (no history event), and that nobody else can write. Readers read it by query while the conversation works and
// with a bounded long poll while it waits (streaming/workflow/stream-readers.ts). It keeps the events of the current and the
// previous turn; a run hands them to the next one at continue-as-new, within a byte budget, so offsets go on across
// runs.
import { inWorkflowContext, proxySinks, workflowInfo } from '@temporalio/workflow';
import type { LiveFeedSinks } from '../live-feed-sinks';
import { type CarriedStream, type ConversationStreamInput, type LegacyCarriedStream } from '../stream-event-schema';
import { STREAM_PAGE_BYTES, STREAM_PAGE_EVENTS, type StreamEvent, type StreamPage } from '../stream-events';
import { jsonBytes } from '../../common/utf8-length';

/**
 * The worker's live feed of this run (streaming/live-feed-sinks.ts), told only what is written now (not what a replay
 * writes again); it leaves nothing in the history. Absent outside a workflow (the log's unit tests).
 */
const liveFeed = (): LiveFeedSinks['liveFeed'] | undefined =>
  inWorkflowContext() && !workflowInfo().unsafe.isReplaying ? proxySinks<LiveFeedSinks>().liveFeed : undefined;

/** At most this much of the log is carried to the next run (within what the transcript leaves of the payload budget). */
export const MAX_CARRIED_STREAM_BYTES = 512_000;

export class ConversationStream {
  /** The log's events, oldest kept first, with the bytes of each one's JSON; `base` is the offset of the first. */
  private readonly events: StreamEvent[] = [];
  private readonly sizes: number[] = [];
  private base = 0;
  /**
   * Where version 0.1.0's log would begin: its carried events are not decoded here (only counted), but its polls,
   * replayed from old histories, waited on their own base. Equal to `base` on a run that started without them.
   */
  private oldBase = 0;
  /** Where the previous and the current turn began: older events are dropped when a turn ends. */
  private turnStarts: number[] = [];
  private detached = false;

  /** `prior`: what the previous run handed over (continue-as-new only; checked by conversationInputSchema). */
  constructor(prior?: ConversationStreamInput) {
    if (!prior) return;
    if (isLegacy(prior)) {
      // 0.1.0's base64 payloads are not decoded in workflow code: the new run goes on after them. A reader that had
      // not read them resumes at the next event (the transcript has what it missed).
      this.oldBase = prior.base_offset;
      this.base = prior.base_offset + prior.log.length;
      this.turnStarts = [prior.base_offset];
      return;
    }
    this.base = this.oldBase = prior.base;
    for (const event of prior.events) this.append(event);
    this.turnStarts = [prior.base];
  }

  /** Only the workflow writes into the log. */
  publish(event: StreamEvent): void {
    liveFeed()?.published(this.offset(), event);
    this.append(event);
  }

  /**
   * Events from offset `from` on (from the oldest kept one if `from` was dropped), a page at a time: at most
   * STREAM_PAGE_EVENTS, and STREAM_PAGE_BYTES of JSON unless the first event alone is larger.
   */
  read(from: number): Omit<StreamPage, 'busy'> {
    const start = Math.max(from, this.base);
    const events: StreamPage['events'] = [];
    let bytes = 0;
    for (let i = start - this.base; i < this.events.length && events.length < STREAM_PAGE_EVENTS; i++) {
      bytes += this.sizes[i]!;
      if (bytes > STREAM_PAGE_BYTES && events.length > 0) break;
      events.push({ offset: this.base + i, event: this.events[i]! });
    }
    const next = start + events.length;
    return { events, next, more: next < this.offset() };
  }

  /** The offset the next event will have. */
  offset(): number {
    return this.base + this.events.length;
  }

  /** Whether the log has an event at offset `from` or later (what a long poll from `from` waits for). */
  hasEventsFrom(from: number): boolean {
    return this.offset() > Math.max(from, this.base);
  }

  /** The run is ending (continue-as-new, the conversation's end): long polls answer now, new ones are refused. */
  get isDetached(): boolean {
    return this.detached;
  }

  /** Where 0.1.0's log would begin now (see `oldBase`): for its replayed polls only. */
  get legacyBase(): number {
    return this.oldBase;
  }

  turnStarted(turn: number, text: string): void {
    this.turnStarts = [...this.turnStarts.slice(-1), this.offset()];
    this.publish({ type: 'turn_started', turn, text });
  }

  /** A turn ended: events before the previous turn are dropped, so the log stays two turns long. */
  turnEnded(): void {
    if (this.turnStarts.length === 2) this.truncate(this.turnStarts[0]!);
  }

  /** No new polls from now on; polls waiting now return what they have (the run ends or continues as new). */
  detachReaders(): void {
    this.detached = true;
    liveFeed()?.detached();
  }

  /**
   * The log for the next run, within `budgetBytes`: both turns when they fit, else the current turn, else nothing
   * (a reader behind the kept part then resumes from the oldest kept event; the transcript has the rest).
   */
  carry(budgetBytes: number): CarriedStream {
    const budget = Math.min(budgetBytes, MAX_CARRIED_STREAM_BYTES);
    for (const keepFrom of [this.turnStarts.at(-1), this.offset()]) {
      if (this.carriedBytes() <= budget || keepFrom === undefined) break;
      this.truncate(keepFrom);
    }
    return { base: this.base, events: [...this.events] };
  }

  private append(event: StreamEvent): void {
    this.events.push(event);
    this.sizes.push(jsonBytes(event));
  }

  /** The JSON size of the carried log: its events, their commas, and `{"base":…,"events":[]}`. */
  private carriedBytes(): number {
    return this.sizes.reduce((sum, size) => sum + size + 1, 0) + 40;
  }

  private truncate(upTo: number): void {
    this.oldBase = Math.max(this.oldBase, upTo);
    const drop = Math.min(upTo, this.offset()) - this.base;
    if (drop <= 0) return;
    this.events.splice(0, drop);
    this.sizes.splice(0, drop);
    this.base += drop;
  }
}

function isLegacy(prior: ConversationStreamInput): prior is LegacyCarriedStream {
  return 'log' in prior;
}
