// While a reply streams, the model activity heartbeats the reply so far (streaming/stream-events.ts LiveReply) at most
// once per interval: readers of the conversation poll it from the activity's pending state, so the live text costs no
// history event (heartbeats are not recorded in the history). The heartbeat also keeps the activity alive, as
// keepAlive does otherwise. Long text blocks are sent as their tail: a reader further behind waits for the final reply.
// On a worker with a live relay (live-relay.ts) the reply also goes to the relay as it comes, the heartbeats name the
// relay and come at most once per RELAYED_HEARTBEAT_MS: readers that reach the relay do not need them.
import type { Context } from '@temporalio/activity';
import type { LoadedDataConverter } from '@temporalio/common';
import type { BetaMessage, BetaRawMessageStreamEvent } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { cutDeepInput } from '../../common/protocols/tool-use-blocks';
import { type LiveBlock, type LiveReply, MAX_LIVE_TEXT_CHARS } from '../stream-events';
import type { LiveBlockState, LiveChannel } from './live-channel';
import type { LiveRelay } from './live-relay';

/** The heartbeat interval while a relay carries the reply: for readers that cannot reach it. */
export const RELAYED_HEARTBEAT_MS = 1_000;

/** The worker's relay and the data converter its lines are encoded with. */
export interface RelayTarget {
  relay: LiveRelay;
  converter: LoadedDataConverter;
}

export class LiveReplyHeartbeat {
  private readonly blocks = new Map<number, LiveBlockState>();
  private readonly channel: LiveChannel | undefined;
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
    target?: RelayTarget,
  ) {
    this.keepAliveMs = Math.max(500, (context.info.heartbeatTimeoutMs ?? 30_000) / 3);
    const { attempt } = context.info;
    const run = context.info.workflowExecution; // absent only for an activity started on its own
    this.channel = target?.relay.open({ call, attempt, blocks: this.blocks }, target.converter, run);
    this.beat(); // at once: readers learn which attempt streams (and where its relay is)
    this.timer = setInterval(
      () => {
        if (this.changed || Date.now() - this.lastBeat >= this.keepAliveMs) this.beat();
      },
      this.channel ? Math.max(intervalMs, RELAYED_HEARTBEAT_MS) : intervalMs,
    );
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
    this.channel?.changed();
  }

  private append(index: number, kind: 'text' | 'thinking', text: string): void {
    const block = this.blocks.get(index);
    if (block?.kind === kind) block.text += text;
    else this.blocks.set(index, { kind, text });
  }

  /** The attempt is over: the relay's readers get the rest and go back to Temporal for the outcome. */
  stop(): void {
    clearInterval(this.timer);
    void this.channel?.end();
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
    return {
      call: this.call,
      attempt: this.context.info.attempt,
      blocks,
      ...(this.channel && { relay: this.channel.url }),
      ...(this.channel?.feedUrl && { feed: this.channel.feedUrl }),
    };
  }
}
