// Merges a conversation's two sources into the one sequence a reader gets (streaming/stream-events.ts): the durable log,
// and the live reply of the model call in flight (its attempt's heartbeat details). Text seen live is not given again
// when the final reply enters the log (the text event is cut to what is new); a tool call seen live is given again
// marked `seen`. When the attempt that streams changes (a retry, a worker that died), the reader is told to drop the
// earlier attempt's output. Pure: conversation-events.ts does the reading.
import type { LiveReply, StreamEvent, StreamItem } from '../stream-events';
import { formatCursor, type LivePosition, type StreamCursor } from './stream-cursor';

export class StreamMerger {
  private offset: number;
  private position: LivePosition | undefined;
  /** The model call the log says is running (between its start and its end or discard). */
  private running: number | undefined;
  /** The last model call the log says ended: its live reply is stale. */
  private ended = 0;

  constructor(from: StreamCursor = { offset: -1 }) {
    this.offset = from.offset;
    this.position = from.live;
    this.running = from.live?.call;
  }

  /** The model call whose live reply is worth reading now, if any. */
  get inFlight(): number | undefined {
    return this.running;
  }

  cursor(): StreamCursor {
    return { offset: this.offset, ...(this.position && { live: { ...this.position } }) };
  }

  durable(offset: number, event: StreamEvent): StreamItem[] {
    const items: StreamItem[] = [];
    this.offset = offset;
    let seen = false;
    switch (event.type) {
      case 'model_call_started':
        // A call the log ended and starts again went to a fallback model: its live reply is fresh again.
        this.ended = Math.min(this.ended, event.call - 1);
        this.running = event.call;
        // A reader that looked at the call before reading its start has its position in it already.
        if (this.position?.call !== event.call) this.position = undefined;
        break;
      case 'text':
      case 'thinking': {
        items.push(...this.switchAttempt(event.call, event.attempt));
        const delivered = this.delivered(event.call, event.attempt, event.block);
        const at = Math.min(delivered, event.text.length);
        // A redacted thinking block has no text: seen when the reader got it live (its position reached the block).
        const redactedSeen =
          event.type === 'thinking' &&
          event.redacted === true &&
          this.position?.call === event.call &&
          this.position.attempt === event.attempt &&
          this.position.block >= event.block;
        seen = (at === event.text.length && at > 0) || redactedSeen;
        event = { ...event, at, text: event.text.slice(at) };
        this.advance(event.call, event.attempt, event.block, at + event.text.length);
        break;
      }
      case 'tool_call_started':
      case 'tool_call_input': {
        items.push(...this.switchAttempt(event.call, event.attempt));
        const had = this.delivered(event.call, event.attempt, event.block);
        const end = event.type === 'tool_call_input' ? 1 : 0;
        seen = had >= end && this.position !== undefined && this.position.block >= event.block;
        this.advance(event.call, event.attempt, event.block, end);
        break;
      }
      case 'model_call_finished':
      case 'model_output_discarded':
        if (event.type === 'model_call_finished' || event.attempt === undefined)
          this.ended = Math.max(this.ended, event.call);
        if (this.running === event.call) this.running = undefined;
        if (this.position?.call === event.call) this.position = undefined;
        break;
      default:
        break;
    }
    items.push({ offset, cursor: formatCursor(this.cursor()), event, ...(seen && { seen: true as const }) });
    return items;
  }

  /**
   * What the live reply of model call `call` adds: `attempt` is the attempt running now, `reply` its last heartbeat.
   * A reader that joined while the call ran (its start was before the cursor) learns of it here.
   */
  live(call: number, attempt: number, reply: LiveReply | undefined): StreamItem[] {
    if (this.running === undefined && call > this.ended) this.running = call;
    if (this.running !== call) return [];
    const items = this.switchAttempt(call, attempt);
    // Details of another call, or still those of an earlier attempt (the new one has not heartbeaten yet).
    if (!reply || reply.call !== call || reply.attempt !== attempt) return items;
    let position =
      this.position?.call === call && this.position.attempt === attempt
        ? this.position
        : { call, attempt, block: -1, end: 0 };
    const emit = (event: StreamEvent, next: LivePosition) => {
      position = next;
      this.position = next;
      items.push({ offset: this.offset, cursor: formatCursor(this.cursor()), live: true, event });
    };
    for (const block of [...reply.blocks].sort((a, b) => a.index - b.index)) {
      if (block.index < position.block) continue;
      const fresh = block.index > position.block;
      if (block.kind === 'text' || block.kind === 'thinking') {
        const delivered = fresh ? 0 : position.end;
        // The heartbeat holds only the tail of a long block: what a reader missed before it comes with the final reply.
        if (block.at > delivered) break;
        const end = block.at + block.text.length;
        if (end > delivered) {
          const text = block.text.slice(delivered - block.at);
          const event: StreamEvent =
            block.kind === 'text'
              ? { type: 'text', call, attempt, block: block.index, at: delivered, text }
              : {
                  type: 'thinking',
                  call,
                  attempt,
                  block: block.index,
                  at: delivered,
                  text,
                  ...(block.redacted && { redacted: true as const }),
                };
          emit(event, { ...position, block: block.index, end });
        } else if (fresh && block.kind === 'thinking' && block.redacted) {
          // A redacted block has no text: it is told once, when it first shows.
          emit(
            { type: 'thinking', call, attempt, block: block.index, at: 0, text: '', redacted: true },
            { ...position, block: block.index, end: 0 },
          );
        } else if (fresh) {
          position = { ...position, block: block.index, end: delivered };
        }
      } else {
        const { id, name } = block;
        if (fresh)
          emit(
            { type: 'tool_call_started', call, attempt, block: block.index, id, name },
            { call, attempt, block: block.index, end: 0 },
          );
        if (block.input !== undefined && position.end < 1) {
          emit(
            { type: 'tool_call_input', call, attempt, block: block.index, id, name, input: block.input },
            { call, attempt, block: block.index, end: 1 },
          );
        }
      }
    }
    return items;
  }

  /** Moves the position forward to (block, end); never back (the log's reply may trail what was seen live). */
  private advance(call: number, attempt: number, block: number, end: number): void {
    const p = this.position;
    const same = p?.call === call && p.attempt === attempt;
    if (same && (block < p.block || (block === p.block && end <= p.end))) return;
    this.position = { call, attempt, block, end };
  }

  /** Characters (text) or steps (tool: 0 started, 1 input) of a block this reader has; -1 for none. */
  private delivered(call: number, attempt: number, block: number): number {
    const p = this.position;
    if (!p || p.call !== call || p.attempt !== attempt || block > p.block) return 0;
    return block < p.block ? Number.MAX_SAFE_INTEGER : p.end;
  }

  /** Output of an earlier attempt of `call` was shown: the reader drops it before the new attempt's. */
  private switchAttempt(call: number, attempt: number): StreamItem[] {
    const p = this.position;
    if (!p || p.call !== call || p.attempt === attempt) return [];
    this.position = undefined;
    const event: StreamEvent = { type: 'model_output_discarded', call, attempt: p.attempt, reason: 'retried' };
    return [{ offset: this.offset, cursor: formatCursor(this.cursor()), live: true, event }];
  }
}
