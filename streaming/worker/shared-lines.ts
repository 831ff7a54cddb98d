// The relay's lines as bytes, encoded once for every reader that is sent the same one (the same part of a call's reply,
// the same page of a feed's events). 256 readers of a 3 MB reply cost one encoding and one buffer, not 256: every
// socket's pending write refers to the same bytes, so what waits for stalled readers does not grow with their number.
import type http from 'node:http';
import type { LoadedDataConverter, Payload } from '@temporalio/common';
import { encodeToPayload } from '@temporalio/common/lib/internal-non-workflow';
import type { RelayReaders } from './relay-readers';

/** The lines that carry no payload: the worker is still there, and nothing more follows. */
export const ALIVE_LINE = '{"alive":true}\n';
export const END_LINE = '{"end":true}\n';

/** A line, or undefined when its value cannot be encoded (a codec failed). */
export type EncodedLine = Promise<Buffer | undefined>;

export class SharedLines {
  private readonly lines = new Map<string, EncodedLine>();

  /** The line `key` names, encoded now if no reader was sent it since the last `forget()`. */
  line(key: string, encode: () => EncodedLine): EncodedLine {
    let line = this.lines.get(key);
    if (!line) this.lines.set(key, (line = encode()));
    return line;
  }

  /** Lets the lines go (what they carry moved on: readers now need new ones). */
  forget(): void {
    this.lines.clear();
  }
}

/** One NDJSON line `{ [field]: payload }`, `value` encoded with the worker's converter (its codec too). */
export async function encodeLine(
  converter: LoadedDataConverter,
  field: 'reply' | 'events',
  value: unknown,
): EncodedLine {
  try {
    const payload = await encodeToPayload(converter, value);
    return Buffer.from(JSON.stringify({ [field]: payloadToJson(payload) }) + '\n');
  } catch {
    return undefined;
  }
}

/** A payload as JSON: its metadata and data base64, like Temporal's own JSON form of a Payload. */
export function payloadToJson(payload: Payload): { metadata: Record<string, string>; data: string } {
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(payload.metadata ?? {})) {
    if (value) metadata[key] = Buffer.from(value).toString('base64');
  }
  return { metadata, data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64') };
}

/** `line` to a reader, once encoded; a line that could not be encoded ends the response (the reader goes to Temporal). */
export async function writeLine(readers: RelayReaders, res: http.ServerResponse, line: EncodedLine): Promise<void> {
  if (!readers.isOpen(res)) return;
  const bytes = await line;
  if (bytes) readers.write(res, bytes);
  else res.destroy();
}
