// The worker's copy of each conversation's model context (system prompt and transcript), so a model call's input
// carries only what is new. On a miss (worker restarted, another worker, a new run) it is read from the workflow
// by query — except on a conversation's first call, which carries everything itself.
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { CallModelInput, ModelContext } from '../workflows/activity-contracts';

export type ModelContextReader = (conversation: CallModelInput['conversation'], length: number) => Promise<ModelContext>;

export class ModelContextCache {
  private readonly entries = new Map<string, ModelContext>();
  hits = 0;
  misses = 0;

  constructor(private readonly read: ModelContextReader, private readonly capacity = 5_000) {}

  /** The context of this call: its first `transcriptLength` messages and the system prompt. */
  async assemble({ conversation, transcriptLength, newMessages, fullContext, afterReply }: CallModelInput): Promise<ModelContext> {
    if (fullContext && newMessages.length === transcriptLength) return { ...fullContext, messages: newMessages };
    const cached = this.entries.get(keyOf(conversation));
    if (cached && afterReply !== undefined && cached.lastReplyId === afterReply && cached.messages.length + newMessages.length === transcriptLength) {
      this.hits++;
      return { ...cached, messages: cached.messages.concat(newMessages) };
    }
    this.misses++;
    const context = await this.read(conversation, transcriptLength);
    if (context.messages.length !== transcriptLength) {
      throw new Error(`The workflow returned ${context.messages.length} messages; the model call needs ${transcriptLength}.`);
    }
    return context;
  }

  /** Remembers the context as the workflow will have it after this reply (least recently used goes first). */
  remember(conversation: CallModelInput['conversation'], context: ModelContext): void {
    const key = keyOf(conversation);
    this.entries.delete(key);
    this.entries.set(key, context);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }
}

function keyOf({ workflowId, runId }: CallModelInput['conversation']): string {
  return `${workflowId}/${runId}`;
}

export type { MessageParam };
