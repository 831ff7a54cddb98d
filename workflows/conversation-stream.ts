// The conversation's event log (common/stream-events.ts), held by the workflow with Temporal's WorkflowStream and
// appended to by the workflow only, in memory (no history event). Readers read it by query while the conversation
// works and long-poll it (the WorkflowStream update) while it waits. It keeps the events of the current and the
// previous turn; a run hands them to the next one at continue-as-new, within a byte budget, so offsets go on across
// runs. A copy of the events as objects answers queries without decoding the stream's payloads each time.
import { defaultPayloadConverter } from '@temporalio/workflow';
import { decodePayloadWire, WorkflowStream, type WorkflowStreamState } from '@temporalio/workflow-streams/workflow';
import { CONVERSATION_EVENTS, STREAM_PAGE_EVENTS, type StreamEvent, type StreamPage } from '../common/stream-events';
import { jsonBytes } from '../common/utf8-length';

/** At most this much of the log is carried to the next run (within what the transcript leaves of the payload budget). */
export const MAX_CARRIED_STREAM_BYTES = 512_000;

export class ConversationStream {
  private readonly stream: WorkflowStream;
  /** The log's events, oldest kept first, and the offset of the first. */
  private readonly events: StreamEvent[];
  private base: number;
  /** Where the previous and the current turn began: older events are dropped when a turn ends. */
  private turnStarts: number[] = [];

  constructor(prior?: WorkflowStreamState) {
    this.stream = new WorkflowStream(prior);
    this.base = prior?.base_offset ?? 0;
    this.events = (prior?.log ?? []).map((item) =>
      defaultPayloadConverter.fromPayload<StreamEvent>(decodePayloadWire(item.data)),
    );
    if (prior) this.turnStarts = [prior.base_offset];
  }

  publish(event: StreamEvent): void {
    this.stream.topic<StreamEvent>(CONVERSATION_EVENTS).publish(event);
    this.events.push(event);
  }

  /** Events from offset `from` on (from the oldest kept one if `from` was dropped), a page at a time. */
  read(from: number): Omit<StreamPage, 'busy'> {
    const start = Math.max(from, this.base);
    const events = this.events
      .slice(start - this.base, start - this.base + STREAM_PAGE_EVENTS)
      .map((event, i) => ({ offset: start + i, event }));
    return { events, next: start + events.length };
  }

  /** The offset the next event will have. */
  offset(): number {
    return this.base + this.events.length;
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
    this.stream.detachPollers();
  }

  /**
   * The log for the next run, within `budgetBytes`: both turns when they fit, else the current turn, else nothing
   * (a reader behind the kept part then resumes from the oldest kept event; the transcript has the rest).
   */
  carry(budgetBytes: number): WorkflowStreamState {
    const budget = Math.min(budgetBytes, MAX_CARRIED_STREAM_BYTES);
    let state = this.stream.getState();
    for (const keepFrom of [this.turnStarts.at(-1), this.offset()]) {
      if (jsonBytes(state) <= budget || keepFrom === undefined) break;
      this.truncate(keepFrom);
      state = this.stream.getState();
    }
    return state;
  }

  private truncate(upTo: number): void {
    if (upTo <= this.base) return;
    this.stream.truncate(upTo);
    this.events.splice(0, upTo - this.base);
    this.base = upTo;
  }
}
