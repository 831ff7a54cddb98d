// The live relay's readers (live-relay.ts, live-feed.ts) and what waits for them. Every line to a reader goes through
// here, so that no write can reach a response that ended (Node reports that as an `'error'` event, which unhandled
// ends the worker) and what the relay holds for readers that do not read stays bounded:
//   - all readers together: at most `maxBufferedBytes` written and not yet taken by the kernel; past it, the readers
//     furthest behind are dropped first;
//   - one reader: dropped when more than `maxReaderBytes` waits for it;
//   - a reader with bytes waiting that took none for `stalledAfterMs` is dropped (on loopback the kernel's buffers
//     take megabytes before anything waits, so a reader that stopped reading is found by time, not by size).
// A dropped reader's response is destroyed: its reader sees the connection close and reads what it lacks from
// Temporal, from its offset. `alive` and `end` lines count like the others.
import type http from 'node:http';

export interface RelayBounds {
  /** What all readers together may have waiting, in bytes. */
  maxBufferedBytes: number;
  /** What one reader may have waiting, in bytes. */
  maxReaderBytes: number;
  /** How long a reader with bytes waiting may take none. */
  stalledAfterMs: number;
}

export const DEFAULT_RELAY_BOUNDS: RelayBounds = {
  maxBufferedBytes: 16 << 20,
  maxReaderBytes: 1 << 20,
  stalledAfterMs: 10_000,
};

interface Reader {
  /** Bytes of lines written to it. */
  written: number;
  /** written − waiting at the last sweep: what the kernel had taken. */
  taken: number;
  /** Since when it has had bytes waiting and taken none (undefined: it is keeping up). */
  stalledSince: number | undefined;
}

export class RelayReaders {
  private readonly readers = new Map<http.ServerResponse, Reader>();
  /** At least what waits for all readers: exact after `recount`, plus what was written since. */
  private bufferedAtMost = 0;
  /** Readers dropped for being behind (for operators and tests). */
  dropped = 0;

  constructor(readonly bounds: RelayBounds) {}

  get size(): number {
    return this.readers.size;
  }

  /** `res` is a reader now: it is forgotten when it closes, and an error on it only ends it. */
  admit(res: http.ServerResponse): void {
    this.readers.set(res, { written: 0, taken: 0, stalledSince: undefined });
    res.on('error', () => res.destroy());
    res.once('close', () => this.readers.delete(res));
  }

  /** Whether `res` still takes lines: not ended, not dropped. */
  isOpen(res: http.ServerResponse): boolean {
    return !res.writableEnded && !res.destroyed && this.readers.has(res);
  }

  /** Writes `line` to `res` unless it is closed or must be dropped to keep the bounds; false when not written. */
  write(res: http.ServerResponse, line: string | Buffer): boolean {
    if (!this.makeRoom(res, line.length)) return false;
    res.write(line);
    return true;
  }

  /** Ends `res` with `line` (if it is still open). */
  end(res: http.ServerResponse, line: string): void {
    if (this.makeRoom(res, line.length)) res.end(line);
  }

  /** What waits for all readers now, in bytes. */
  buffered(): number {
    this.recount();
    return this.bufferedAtMost;
  }

  /** Drops the readers that took nothing for `stalledAfterMs` while bytes waited for them. Called every second. */
  sweep(now = Date.now()): void {
    for (const [res, reader] of this.readers) {
      const waiting = res.writableLength;
      const taken = reader.written - waiting;
      if (waiting === 0 || taken > reader.taken) reader.stalledSince = undefined;
      else if (reader.stalledSince === undefined) reader.stalledSince = now;
      else if (now - reader.stalledSince >= this.bounds.stalledAfterMs) this.drop(res);
      reader.taken = Math.max(reader.taken, taken);
    }
  }

  /** Whether `bytes` more may go to `res`: it is open and not too far behind, and all readers' bytes fit with them. */
  private makeRoom(res: http.ServerResponse, bytes: number): boolean {
    const reader = this.readers.get(res);
    if (!reader || res.writableEnded || res.destroyed) return false;
    if (res.writableLength > this.bounds.maxReaderBytes) {
      this.drop(res);
      return false;
    }
    if (this.bufferedAtMost + bytes > this.bounds.maxBufferedBytes) {
      this.recount();
      if (this.bufferedAtMost + bytes > this.bounds.maxBufferedBytes) {
        // The readers furthest behind go first, until what waits and this line fit (a line larger than the whole
        // bound still goes to a reader nothing else waits for: it cannot be sent in parts).
        const behind = [...this.readers.keys()]
          .filter((other) => other.writableLength > 0)
          .sort((a, b) => b.writableLength - a.writableLength);
        for (const other of behind) {
          if (this.bufferedAtMost + bytes <= this.bounds.maxBufferedBytes) break;
          this.bufferedAtMost -= other.writableLength;
          this.drop(other);
          if (other === res) return false;
        }
      }
    }
    reader.written += bytes;
    this.bufferedAtMost += bytes;
    return true;
  }

  private recount(): void {
    let total = 0;
    for (const res of this.readers.keys()) total += res.writableLength;
    this.bufferedAtMost = total;
  }

  private drop(res: http.ServerResponse): void {
    this.dropped++;
    this.readers.delete(res);
    res.destroy();
  }
}
