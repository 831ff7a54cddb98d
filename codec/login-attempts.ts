// How many logins a client address may try at the codec server: a few per minute (a sliding window), so the token
// cannot be guessed at /login. An attempt counts from the moment it starts, so a burst of concurrent attempts is held
// to the same number as a sequence; a successful login clears its address. Memory is bounded: past MAX_ADDRESSES the
// stalest addresses are forgotten.

/** Addresses remembered at most (each with at most `limit` timestamps). */
const MAX_ADDRESSES = 10_000;

export class LoginAttempts {
  /** Start times (ms) of the attempts in the window, oldest first, per address; the stalest address first. */
  private readonly recent = new Map<string, number[]>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes an attempt for `address`: undefined when it may go ahead, else how many seconds until it may try again. */
  take(address: string): number | undefined {
    const now = this.now();
    const times = (this.recent.get(address) ?? []).filter((at) => now - at < this.windowMs);
    this.recent.delete(address);
    if (times.length >= this.limit) {
      this.recent.set(address, times);
      return Math.max(1, Math.ceil((times[0]! + this.windowMs - now) / 1000));
    }
    times.push(now);
    this.recent.set(address, times);
    if (this.recent.size > MAX_ADDRESSES) this.forgetStalest();
    return undefined;
  }

  /** The address logged in: its earlier attempts no longer count. */
  succeeded(address: string): void {
    this.recent.delete(address);
  }

  /** The map is in order of last use: the first addresses are the stalest. */
  private forgetStalest(): void {
    for (const address of this.recent.keys()) {
      if (this.recent.size <= MAX_ADDRESSES) return;
      this.recent.delete(address);
    }
  }
}
