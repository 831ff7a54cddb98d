// How many event streams are open, per token and per conversation: one over either cap is 429 with Retry-After, so a
// few callers (or one browser's tabs) cannot take every long poll a conversation has.
import { HttpError, RETRY_SOON } from './http-answers';

export class OpenStreams {
  /** Open event streams per token (by its digest) and per conversation. */
  private readonly byToken = new Map<string, number>();
  private readonly byConversation = new Map<string, number>();

  constructor(
    private readonly maxPerToken: number,
    private readonly maxPerConversation: number,
  ) {}

  /** Counts a new stream of token `who` on conversation `id`, or throws 429; returns what uncounts it. */
  open(who: string, id: string): () => void {
    if ((this.byToken.get(who) ?? 0) >= this.maxPerToken) {
      const message = `This token has ${this.maxPerToken} event streams open, the most it may; close one first.`;
      throw new HttpError(429, 'too_many_streams', message, RETRY_SOON);
    }
    if ((this.byConversation.get(id) ?? 0) >= this.maxPerConversation) {
      const message = `This conversation has ${this.maxPerConversation} event streams open, the most it may; close one first.`;
      throw new HttpError(429, 'too_many_streams', message, RETRY_SOON);
    }
    count(this.byToken, who, +1);
    count(this.byConversation, id, +1);
    return () => {
      count(this.byToken, who, -1);
      count(this.byConversation, id, -1);
    };
  }
}

function count(counts: Map<string, number>, key: string, step: 1 | -1): void {
  const next = (counts.get(key) ?? 0) + step;
  if (next > 0) counts.set(key, next);
  else counts.delete(key);
}
