// What a soak stream reader saw, judged: the durable events of a conversation (offsets 0, 1, 2, … for ever) read by a
// reader that disconnects at random and re-attaches from its last offset + 1 must come each once, in order, with no
// offset missing, and end with the turn's end. Live items (`live`: the reply in flight, numbered after the durable
// event they follow) are not part of the log and are not counted. Pure, so the judgement itself is tested.

export interface SeenItem {
  offset: number;
  live?: boolean;
  type: string;
  turn?: number;
}

export interface ReadingVerdict {
  /** Durable events read. */
  events: number;
  /** Offsets skipped: the next event read was further on than the last + 1 (or the first was not 0). */
  gaps: number[];
  /** Offsets read more than once. */
  repeats: number[];
  /** The turn's `turn_finished` (or `turn_failed`) was read. */
  sawTurnEnd: boolean;
  sawConversationEnd: boolean;
}

export function judgeReading(items: readonly SeenItem[], turn = 1): ReadingVerdict {
  const gaps: number[] = [];
  const repeats: number[] = [];
  const seen = new Set<number>();
  let expected = 0;
  let events = 0;
  let sawTurnEnd = false;
  let sawConversationEnd = false;
  for (const item of items) {
    if (item.live) continue;
    events++;
    if (seen.has(item.offset)) repeats.push(item.offset);
    else if (item.offset > expected) for (let o = expected; o < item.offset; o++) if (!seen.has(o)) gaps.push(o);
    seen.add(item.offset);
    expected = Math.max(expected, item.offset + 1);
    if ((item.type === 'turn_finished' || item.type === 'turn_failed') && item.turn === turn) sawTurnEnd = true;
    if (item.type === 'conversation_ended') sawConversationEnd = true;
  }
  return { events, gaps, repeats, sawTurnEnd, sawConversationEnd };
}

/** Why the reading is wrong, or undefined when it is whole. */
export function readingProblem(verdict: ReadingVerdict): string | undefined {
  const problems: string[] = [];
  if (verdict.gaps.length > 0) problems.push(`offsets missing: ${verdict.gaps.slice(0, 5).join(', ')}`);
  if (verdict.repeats.length > 0) problems.push(`offsets read twice: ${verdict.repeats.slice(0, 5).join(', ')}`);
  if (!verdict.sawTurnEnd) problems.push('the turn end was never read');
  return problems.length > 0 ? `stream reader: ${problems.join('; ')} (${verdict.events} events)` : undefined;
}
