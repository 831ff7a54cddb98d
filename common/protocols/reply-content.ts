// What of a model reply's content and stop reason goes into the transcript: only what the API accepts when it is sent
// back. A proxy or a fallback model can send blocks of unknown types, text that is not a string, empty or blank text
// (the API refuses "text content blocks must be non-empty" / "must contain non-whitespace text"), no content at all
// (refused in any message but a final assistant one), or a stop reason nobody defined. Pure and linear.
import type { ContentBlockParam, StopReason } from '@anthropic-ai/sdk/resources/messages';

/** What an assistant message says when the reply had nothing the API would take back. */
export const EMPTY_REPLY_TEXT = '(empty reply)';

const STOP_REASONS: ReadonlySet<string> = new Set<StopReason>([
  'end_turn',
  'max_tokens',
  'stop_sequence',
  'tool_use',
  'pause_turn',
  'refusal',
  'model_context_window_exceeded',
]);

/** The stop reason when the API defines it; null for anything else. */
export function knownStopReason(value: unknown): StopReason | null {
  return typeof value === 'string' && STOP_REASONS.has(value) ? (value as StopReason) : null;
}

/** Text that a text block may carry back to the API. */
export function isSendableText(text: unknown): text is string {
  return typeof text === 'string' && text.trim() !== '';
}

/**
 * A reply block other than tool_use as it goes back to the API (response-only fields such as `citations: null`
 * dropped), or undefined when it may not: text must be a non-blank string, thinking blocks need their signature, and
 * blocks of other types are left out — the orchestrator offers no server tools, so they can only come from a proxy.
 */
export function sendableBlock(block: unknown): ContentBlockParam | undefined {
  if (typeof block !== 'object' || block === null) return undefined;
  const b = block as Record<string, unknown>;
  switch (b['type']) {
    case 'text':
      return isSendableText(b['text']) ? { type: 'text', text: b['text'] } : undefined;
    case 'thinking':
      return typeof b['thinking'] === 'string' && typeof b['signature'] === 'string'
        ? { type: 'thinking', thinking: b['thinking'], signature: b['signature'] }
        : undefined;
    case 'redacted_thinking':
      return typeof b['data'] === 'string' ? { type: 'redacted_thinking', data: b['data'] } : undefined;
    default:
      return undefined;
  }
}
