// The worker's copy of each conversation's model context (system prompt and transcript), so a model call's input
// carries only what is new. On a miss (worker restarted, another worker, a new run) it is read from the workflow
// by query — except on a conversation's first call, which carries everything itself.
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { CallModelInput, ConversationRun, ModelContext } from '../common/activity-contracts';
import { NEWER_INPUT_FORMAT, newerInputFormat, newerInputFormatMessage } from '../common/input-format';

export type ModelContextReader = (conversation: ConversationRun, length: number) => Promise<ModelContext>;

/** What the cache may hold in all, in UTF-8 bytes of JSON (about what the transcripts take in memory, and more). */
export const DEFAULT_MODEL_CONTEXT_CACHE_BYTES = 256 * 2 ** 20;

export class ModelContextCache {
  /** Least recently used first. Bounded by bytes, not entries: one long transcript can weigh as much as a thousand. */
  private readonly entries = new Map<string, { context: ModelContext; bytes: number }>();
  private heldBytes = 0;
  /**
   * The JSON size of each message held, measured once: a conversation's messages stay the same objects from call to
   * call (the context only grows), so remembering a context costs what it added, not its whole length again.
   */
  private readonly messageBytes = new WeakMap<MessageParam, number>();
  hits = 0;
  misses = 0;

  constructor(
    private readonly read: ModelContextReader,
    readonly maxBytes = DEFAULT_MODEL_CONTEXT_CACHE_BYTES,
  ) {}

  /** The UTF-8 size of the JSON of every context held. */
  get bytes(): number {
    return this.heldBytes;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The context of this call: its first `transcriptLength` messages and the system prompt. */
  async assemble({
    conversation,
    transcriptLength,
    newMessages,
    fullContext,
    afterReply,
  }: CallModelInput & { conversation: ConversationRun }): Promise<ModelContext> {
    if (fullContext && newMessages.length === transcriptLength) return { ...fullContext, messages: newMessages };
    const cached = this.entries.get(keyOf(conversation))?.context;
    if (
      cached &&
      afterReply !== undefined &&
      cached.lastReplyId === afterReply &&
      cached.messages.length + newMessages.length === transcriptLength
    ) {
      this.hits++;
      return { ...cached, messages: cached.messages.concat(newMessages) };
    }
    this.misses++;
    const context = await this.read(conversation, transcriptLength);
    if (context.messages.length !== transcriptLength) {
      throw new Error(
        `The workflow returned ${context.messages.length} messages; the model call needs ${transcriptLength}.`,
      );
    }
    return context;
  }

  /**
   * Remembers the context as the workflow will have it after this reply. The least recently used go first once the
   * cache holds more than `maxBytes`; a context larger than that on its own is not kept (it is read again).
   */
  remember(conversation: ConversationRun, context: ModelContext): void {
    const key = keyOf(conversation);
    this.forget(key);
    const bytes = this.sizeOf(context);
    if (bytes > this.maxBytes) return;
    this.entries.set(key, { context, bytes });
    this.heldBytes += bytes;
    while (this.heldBytes > this.maxBytes) this.forget(this.entries.keys().next().value!);
  }

  /** The UTF-8 size of the context's JSON: the rest of it, its messages (each measured once) and their commas. */
  private sizeOf(context: ModelContext): number {
    const { messages } = context;
    let bytes =
      Buffer.byteLength(JSON.stringify({ ...context, messages: [] }), 'utf8') + Math.max(0, messages.length - 1);
    for (const message of messages) {
      let size = this.messageBytes.get(message);
      if (size === undefined) {
        size = Buffer.byteLength(JSON.stringify(message), 'utf8');
        this.messageBytes.set(message, size);
      }
      bytes += size;
    }
    return bytes;
  }

  /** Drops what the cache holds of a conversation's run (its transcript now lives in the API's thread). */
  forget(conversation: ConversationRun | string): void {
    const key = typeof conversation === 'string' ? conversation : keyOf(conversation);
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.heldBytes -= entry.bytes;
  }
}

function keyOf({ workflowId, runId }: ConversationRun): string {
  return `${workflowId}/${runId}`;
}

/**
 * A model-side activity's input with the conversation it serves named: the run that scheduled the activity. An input a
 * newer build wrote (common/input-format.ts) fails the attempt before anything is sent or billed, retryably: a retry
 * lands on another worker, and so the call waits for a worker of a build that reads it.
 */
export function withConversation<I extends CallModelInput>(input: I): I & { conversation: ConversationRun } {
  const newer = newerInputFormat(input);
  if (newer !== undefined) {
    const activity = Context.current().info.activityType;
    throw ApplicationFailure.retryable(
      newerInputFormatMessage(`The ${activity} activity's input`, newer),
      NEWER_INPUT_FORMAT,
    );
  }
  if (input.conversation) return input as I & { conversation: ConversationRun };
  const run = Context.current().info.workflowExecution;
  if (!run) throw new Error('A model call runs only as an activity of a conversation workflow.');
  return { ...input, conversation: { workflowId: run.workflowId, runId: run.runId } };
}

export type { MessageParam };
