// Sends items a batch at a time, one batch on its way at most: what arrives while a batch is on its way goes in the
// next. Under load many items share one message; when it is quiet an item goes at once, alone. The fleet rate
// limiter's reservations and reports use it (activities/fleet-rate-limiter.ts): Temporal takes only a few updates in
// flight per workflow, and each message costs the limiter a workflow task.

interface Queued<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
  /** The caller stopped waiting before the item was sent: it is not sent. */
  dropped: boolean;
}

export interface Sending<R> {
  result: Promise<R>;
  /** Takes the item out if it is not on its way yet (its result then never settles). */
  drop(): void;
}

export class BatchedSender<T, R> {
  private readonly queue: Array<Queued<T, R>> = [];
  private sending = false;

  /** `send` answers each item of a batch, in order. */
  constructor(
    private readonly send: (items: T[]) => Promise<R[]>,
    private readonly maxBatch: number,
  ) {}

  add(item: T): Sending<R> {
    let entry!: Queued<T, R>;
    const result = new Promise<R>((resolve, reject) => {
      entry = { item, resolve, reject, dropped: false };
    });
    this.queue.push(entry);
    void this.drain();
    return {
      result,
      drop: () => {
        entry.dropped = true;
      },
    };
  }

  private async drain(): Promise<void> {
    if (this.sending) return;
    this.sending = true;
    try {
      for (;;) {
        const batch: Array<Queued<T, R>> = [];
        while (batch.length < this.maxBatch && this.queue.length > 0) {
          const next = this.queue.shift()!;
          if (!next.dropped) batch.push(next);
        }
        if (batch.length === 0) return;
        try {
          const results = await this.send(batch.map((entry) => entry.item));
          batch.forEach((entry, i) => entry.resolve(results[i]!));
        } catch (error) {
          for (const entry of batch) entry.reject(error);
        }
      }
    } finally {
      this.sending = false;
    }
  }
}
