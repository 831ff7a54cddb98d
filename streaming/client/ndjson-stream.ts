// What both readers of a worker's relay (streaming/client/live-relay-reader.ts, streaming/client/live-feed-reader.ts) do with its NDJSON
// streams: open one, cut it into JSON lines, and take the worker as gone when not even its `alive` line comes.

/** The relay says it is alive every second: this long without a line and the worker is taken as gone. */
const SILENCE_MS = 3_000;
/** A line longer than this is not the relay's (a log page is at most about 1 MB of JSON; a reply's line far less). */
const MAX_LINE_BYTES = 8 << 20;

/** The body of the NDJSON stream at `url`, or undefined when the answer is anything else (its body let go). */
export async function openNdjson(
  url: string,
  signal: AbortSignal,
): Promise<ReadableStreamDefaultReader<Uint8Array> | undefined> {
  const response = await fetch(url, { signal, redirect: 'error' });
  if (!response.ok || !response.body || !response.headers.get('content-type')?.startsWith('application/x-ndjson')) {
    await response.body?.cancel().catch(() => undefined);
    return undefined;
  }
  return response.body.getReader();
}

/**
 * Cuts a stream's chunks into parsed lines, one at a time (a reader that stops at `end` parses nothing after it);
 * throws on a line that is not JSON or longer than MAX_LINE_BYTES.
 */
export class NdjsonLines {
  private readonly decoder = new TextDecoder();
  private buffered = '';

  *push(chunk: Uint8Array): Generator<unknown, void, undefined> {
    this.buffered += this.decoder.decode(chunk, { stream: true });
    if (this.buffered.length > MAX_LINE_BYTES) throw new Error('a line longer than the relay writes');
    let newline: number;
    while ((newline = this.buffered.indexOf('\n')) >= 0) {
      const line = this.buffered.slice(0, newline);
      this.buffered = this.buffered.slice(newline + 1);
      yield JSON.parse(line);
    }
  }
}

/** Calls `gone` once SILENCE_MS pass without `heard()`; `pause()` stops watching until the next `heard()`. */
export class SilenceWatch {
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly gone: () => void) {}

  heard(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(this.gone, SILENCE_MS);
  }

  pause(): void {
    clearTimeout(this.timer);
  }
}
