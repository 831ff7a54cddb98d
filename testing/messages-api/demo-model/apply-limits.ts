// The request's limits, applied as the real API applies them: generation stops at the first stop sequence (not
// included; `stop_reason: 'stop_sequence'`), or when `max_tokens` runs out (`stop_reason: 'max_tokens'`; a tool_use
// cut off there keeps only a prefix of its input JSON).
import { estimateTokens } from '../tokens';
import type { DemoBlock, DemoReply, Json } from './types';

export function applyLimits(blocks: DemoBlock[], body: Json): DemoReply {
  const stops = Array.isArray(body['stop_sequences'])
    ? body['stop_sequences'].filter((s): s is string => typeof s === 'string' && s !== '')
    : [];
  const maxTokens = typeof body['max_tokens'] === 'number' ? body['max_tokens'] : Number.POSITIVE_INFINITY;
  const content: DemoBlock[] = [];
  let used = 0;
  for (const block of blocks) {
    if (block.type === 'text') {
      let text = block.text;
      let stopped: string | null = null;
      let at = -1;
      for (const stop of stops) {
        const index = text.indexOf(stop);
        if (index >= 0 && (at < 0 || index < at)) {
          at = index;
          stopped = stop;
        }
      }
      if (stopped !== null) text = text.slice(0, at);
      const tokens = estimateTokens(text);
      if (used + tokens > maxTokens) {
        const kept = text.slice(0, Math.max(0, (maxTokens - used) * 4));
        if (kept) content.push({ type: 'text', text: kept });
        return { content, stop_reason: 'max_tokens', stop_sequence: null };
      }
      used += tokens;
      if (text) content.push({ type: 'text', text });
      if (stopped !== null) return { content, stop_reason: 'stop_sequence', stop_sequence: stopped };
    } else {
      const json = JSON.stringify(block.input);
      const tokens = estimateTokens(block.name + json);
      if (used + tokens > maxTokens) {
        const partialJson = json.slice(0, Math.max(0, (maxTokens - used) * 4 - block.name.length));
        content.push({ type: 'tool_use', name: block.name, input: {}, partialJson });
        return { content, stop_reason: 'max_tokens', stop_sequence: null };
      }
      used += tokens;
      content.push(block);
    }
  }
  const calls = content.some((b) => b.type === 'tool_use');
  return { content, stop_reason: calls ? 'tool_use' : 'end_turn', stop_sequence: null };
}
