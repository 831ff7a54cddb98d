// A reply cut off by `max_tokens` is thrown away and asked again with more room. The ladder is bounded:
// each rung is four times the last, up to the model's cap; at the cap the conversation ends instead.

/** Output caps of the model families we know; anything else gets the common cap. */
export function modelOutputCap(model: string): number {
  if (/claude-3-5-haiku|claude-3-haiku/.test(model)) return 8192;
  if (/claude-opus-4(?!-5)|claude-3-opus/.test(model)) return 32000;
  return 64000;
}

/** The next `max_tokens` to try after `current` was not enough, or undefined when `cap` was already tried. */
export function nextMaxTokens(current: number, cap: number): number | undefined {
  if (current >= cap) return undefined;
  return Math.min(current * 4, cap);
}
