// Where a reader of a conversation's events stands: the last durable offset it has, and how far into the model call
// streaming live it has got. A reply's content blocks stream one after the other, so one position says it all: every
// block before `block` seen whole, `block` seen up to character `end` (a tool block: 0 once started, 1 with its
// input). Written `17` or `17~3.1.0.245` (offset~call.attempt.block.end); the gateway uses it as the SSE event id.
// Pure.

export interface LivePosition {
  call: number;
  attempt: number;
  /** -1: nothing of this attempt seen yet. */
  block: number;
  end: number;
}

export interface StreamCursor {
  /** The last durable offset seen; -1 before the first. */
  offset: number;
  live?: LivePosition;
}

const CURSOR = /^(-1|\d{1,15})(?:~(\d{1,9})\.(\d{1,9})\.(-1|\d{1,9})\.(\d{1,12}))?$/;

export function formatCursor({ offset, live }: StreamCursor): string {
  return live ? `${offset}~${live.call}.${live.attempt}.${live.block}.${live.end}` : String(offset);
}

/** The cursor a string names, or undefined when it names none. */
export function parseCursor(text: string): StreamCursor | undefined {
  const match = CURSOR.exec(text.trim());
  if (!match) return undefined;
  const offset = Number(match[1]);
  if (match[2] === undefined) return { offset };
  const [call, attempt, block, end] = match.slice(2).map(Number) as [number, number, number, number];
  return { offset, live: { call, attempt, block, end } };
}
