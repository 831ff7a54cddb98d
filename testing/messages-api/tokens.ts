// Deterministic token estimates: ceil(characters / 4), the usual rule of thumb for English text. Input is counted
// per prompt block (see prompt-cache.ts), output per reply block, so every count is reproducible.

export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The output tokens of a reply: its texts, and each tool call's name and input JSON; at least 1, as the API. */
export function outputTokens(
  blocks: ReadonlyArray<{ type: 'text'; text: string } | { type: 'tool_use'; name: string; json: string }>,
): number {
  let total = 0;
  for (const block of blocks) total += estimateTokens(block.type === 'text' ? block.text : block.name + block.json);
  return Math.max(1, total);
}
