// The worker's copy of each conversation's transcript, so a model call's input carries only what is new.
// On a miss (worker restarted, another worker, a new run) the transcript is read from the workflow by query.
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';

export type TranscriptReader = (conversation: { workflowId: string; runId: string }, length: number) => Promise<MessageParam[]>;

export class TranscriptCache {
  private readonly entries = new Map<string, MessageParam[]>();
  hits = 0;
  misses = 0;

  constructor(private readonly read: TranscriptReader, private readonly capacity = 5_000) {}

  /** The first `length` messages: the cached prefix plus `newMessages`, or, if the prefix is not here, a query. */
  async assemble(conversation: { workflowId: string; runId: string }, length: number, newMessages: MessageParam[]): Promise<MessageParam[]> {
    const key = keyOf(conversation);
    const cached = this.entries.get(key);
    if (cached && cached.length + newMessages.length === length) {
      this.hits++;
      return cached.concat(newMessages);
    }
    this.misses++;
    const messages = await this.read(conversation, length);
    if (messages.length !== length) {
      throw new Error(`The workflow returned ${messages.length} messages; the model call needs ${length}.`);
    }
    return messages;
  }

  /** Remembers the transcript as the workflow will have it after this reply (least recently used goes first). */
  remember(conversation: { workflowId: string; runId: string }, messages: MessageParam[]): void {
    const key = keyOf(conversation);
    this.entries.delete(key);
    this.entries.set(key, messages);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }
}

function keyOf({ workflowId, runId }: { workflowId: string; runId: string }): string {
  return `${workflowId}/${runId}`;
}
