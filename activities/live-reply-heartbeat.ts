// While a reply streams, the model activity heartbeats the reply so far (common/stream-events.ts LiveReply) at most
// once per interval: readers of the conversation poll it from the activity's pending state, so the live text costs no
// history event (heartbeats are not recorded in the history). The heartbeat also keeps the activity alive, as
// keepAlive does otherwise. Long text blocks are sent as their tail: a reader further behind waits for the final reply.
import type { Context } from '@temporalio/activity';
import type { BetaMessage, BetaRawMessageStreamEvent } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { cutDeepInput } from '../common/protocols/tool-use-blocks';
import type { LiveBlock, LiveReply } from '../common/stream-events';

/** The most text of one block a heartbeat carries. */
export const MAX_LIVE_TEXT_CHARS = 8_000;

type Block =
  | { kind: 'text' | 'thinking'; text: string; redacted?: true }
  | { kind: 'tool'; id: string; name: string; input?: unknown };

export class LiveReplyHeartbeat {
  private readonly blocks = new Map<number, Block>();
  private changed = true;
  private lastBeat = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly keepAliveMs: number;

  constructor(
    private readonly context: Context,
    private readonly call: number,
    intervalMs: number,
    /** Fields every heartbeat carries besides the reply (what the call's attempts billed: activities/billed-attempts.ts). */
    private readonly extra: () => object | undefined = () => undefined,
  ) {
    this.keepAliveMs = Math.max(500, (context.info.heartbeatTimeoutMs ?? 30_000) / 3);
    this.beat(); // at once: readers learn which attempt streams
    this.timer = setInterval(() => {
      if (this.changed || Date.now() - this.lastBeat >= this.keepAliveMs) this.beat();
    }, intervalMs);
  }

  /**
   * Follows the SDK's stream: text and thinking as they come, a redacted thinking block at its start, a tool call by
   * name at its start, its input once whole.
   */
  onStreamEvent(event: BetaRawMessageStreamEvent, snapshot: BetaMessage): void {
    if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') {
      this.append(event.index, 'text', event.delta.text);
    } else if (event.type === 'content_block_delta' && event.delta.type === 'thinking_delta') {
      this.append(event.index, 'thinking', event.delta.thinking);
    } else if (event.type === 'content_block_start' && event.content_block.type === 'redacted_thinking') {
      this.blocks.set(event.index, { kind: 'thinking', text: '', redacted: true });
    } else if (event.type === 'content_block_start' && event.content_block.type === 'tool_use') {
      const { id, name } = event.content_block;
      this.blocks.set(event.index, { kind: 'tool', id, name });
    } else if (event.type === 'content_block_stop') {
      const block = this.blocks.get(event.index);
      const done = snapshot.content[event.index];
      // A model's input can nest deeper than a heartbeat's JSON can go: cut like the activity's result.
      if (block?.kind === 'tool' && done?.type === 'tool_use') block.input = cutDeepInput(done.input);
      else return;
    } else {
      return;
    }
    this.changed = true;
  }

  private append(index: number, kind: 'text' | 'thinking', text: string): void {
    const block = this.blocks.get(index);
    if (block?.kind === kind) block.text += text;
    else this.blocks.set(index, { kind, text });
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** A heartbeat now, whatever the interval: the last one before the attempt fails. */
  beat(): void {
    this.lastBeat = Date.now();
    this.changed = false;
    this.context.heartbeat({ ...this.reply(), ...this.extra() });
  }

  private reply(): LiveReply {
    const blocks: LiveBlock[] = [];
    for (const [index, block] of this.blocks) {
      if (block.kind === 'tool') blocks.push({ index, ...block });
      else {
        const at = Math.max(0, block.text.length - MAX_LIVE_TEXT_CHARS);
        const text = block.text.slice(at);
        if (block.kind === 'text') blocks.push({ index, kind: 'text', at, text });
        else blocks.push({ index, kind: 'thinking', at, text, ...(block.redacted && { redacted: true as const }) });
      }
    }
    return { call: this.call, attempt: this.context.info.attempt, blocks };
  }
}
