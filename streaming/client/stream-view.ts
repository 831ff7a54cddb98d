// What a reader shows of a conversation's events: each model call's text and tool calls as they arrive, minus the
// output of attempts the stream said to drop (a retried attempt, a reply cut by max_tokens). Pure.
import type { StreamEvent } from '../stream-events';

export type ViewBlock =
  | { kind: 'text'; text: string }
  /** What the model thought (not part of the answer's text); `redacted`: encrypted, nothing to show. */
  | { kind: 'thinking'; text: string; redacted?: true }
  | { kind: 'tool'; id: string; name: string; input?: unknown; result?: { isError: boolean; content: string } };

interface AttemptView {
  call: number;
  attempt: number;
  blocks: Map<number, ViewBlock>;
}

export class StreamView {
  private readonly attempts: AttemptView[] = [];
  /** Per model call, the highest attempt dropped (Infinity: every attempt). */
  private readonly dropped = new Map<number, number>();

  apply(event: StreamEvent): void {
    switch (event.type) {
      case 'model_call_started':
        // A call dropped whole and started again went to a fallback model: its attempts count from 1 again.
        this.dropped.delete(event.call);
        return;
      case 'model_output_discarded': {
        const upTo = event.attempt ?? Number.POSITIVE_INFINITY;
        this.dropped.set(event.call, Math.max(this.dropped.get(event.call) ?? 0, upTo));
        for (let i = this.attempts.length - 1; i >= 0; i--) {
          const view = this.attempts[i]!;
          if (view.call === event.call && view.attempt <= upTo) this.attempts.splice(i, 1);
        }
        return;
      }
      case 'text': {
        // Text carries its place in the block: what was seen already (live, then in the final reply) adds nothing.
        const block = this.block(event.call, event.attempt, event.block, () => ({ kind: 'text', text: '' }));
        if (block?.kind === 'text' && event.at <= block.text.length && event.at + event.text.length > block.text.length)
          block.text = block.text.slice(0, event.at) + event.text;
        return;
      }
      case 'thinking': {
        const block = this.block(event.call, event.attempt, event.block, () => ({
          kind: 'thinking',
          text: '',
          ...(event.redacted && { redacted: true as const }),
        }));
        if (
          block?.kind === 'thinking' &&
          event.at <= block.text.length &&
          event.at + event.text.length > block.text.length
        )
          block.text = block.text.slice(0, event.at) + event.text;
        return;
      }
      case 'tool_call_started':
      case 'tool_call_input': {
        const { id, name } = event;
        const block = this.block(event.call, event.attempt, event.block, () => ({ kind: 'tool', id, name }));
        if (block?.kind === 'tool' && event.type === 'tool_call_input') block.input = event.input;
        return;
      }
      case 'tool_result': {
        const tool = this.tools().find((block) => block.id === event.id);
        if (tool) tool.result = { isError: event.isError, content: event.content };
        return;
      }
      default:
        return;
    }
  }

  /** Every block still shown, model call by model call. */
  blocks(): ViewBlock[] {
    return this.attempts.flatMap((view) => [...view.blocks.entries()].sort(([a], [b]) => a - b).map(([, b]) => b));
  }

  /** The text still shown, all model calls joined. */
  text(): string {
    return this.blocks()
      .map((block) => (block.kind === 'text' ? block.text : ''))
      .join('');
  }

  /** The thinking still shown, all model calls joined (redacted blocks have none). */
  thinking(): string {
    return this.blocks()
      .map((block) => (block.kind === 'thinking' ? block.text : ''))
      .join('');
  }

  tools(): Extract<ViewBlock, { kind: 'tool' }>[] {
    return this.blocks().filter((block) => block.kind === 'tool');
  }

  /** The block, made if new; undefined for output of a dropped attempt (a late event of a dead attempt). */
  private block(call: number, attempt: number, index: number, make: () => ViewBlock): ViewBlock | undefined {
    if (attempt <= (this.dropped.get(call) ?? -1)) return undefined;
    let view = this.attempts.find((v) => v.call === call && v.attempt === attempt);
    if (!view) {
      view = { call, attempt, blocks: new Map() };
      this.attempts.push(view);
    }
    let block = view.blocks.get(index);
    if (!block) {
      block = make();
      view.blocks.set(index, block);
    }
    return block;
  }
}
