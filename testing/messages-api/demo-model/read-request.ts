// Reading a Messages API request body: its text blocks, messages and system prompt, as plain JSON (the demo model
// answers whatever the validator let through).
import { requestInSummary } from '../compaction-summary';
import type { Json, Message } from './types';

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((b): b is Json => isObject(b) && b['type'] === 'text' && typeof b['text'] === 'string')
    .map((b) => b['text'] as string)
    .join('\n');
}

export function systemText(body: Json): string {
  return textOf(body['system']);
}

export function messagesOf(body: Json): Message[] {
  return Array.isArray(body['messages']) ? (body['messages'] as Message[]) : [];
}

export function blocksOf(message: Message | undefined): Json[] {
  return message && Array.isArray(message.content) ? message.content : [];
}

export function lastIndexOfRole(messages: Message[], role: Message['role']): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.role === role) return i;
  return -1;
}

/**
 * The text of the first user message (what scripts match on, and the conversation's original question). In a
 * compacted conversation, the question the summary carries: from the last compaction block, or from the
 * orchestrator's summary that opens the transcript.
 */
export function firstUserText(body: unknown): string {
  if (!isObject(body)) return '';
  const messages = messagesOf(body);
  for (let i = messages.length - 1; i >= 0; i--) {
    const first = blocksOf(messages[i])[0];
    if (first?.['type'] === 'compaction' && typeof first['content'] === 'string') {
      return requestInSummary(first['content']) ?? first['content'];
    }
  }
  const first = messages.find((m) => isObject(m) && m.role === 'user');
  const text = first ? textOf(first.content) : '';
  return requestInSummary(text) ?? text;
}
