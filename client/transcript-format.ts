// Renders transcript messages for a terminal: what the user said, what the model said, which tools ran.
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { toolCallSummary } from '../common/summaries';

export interface FormattedLine {
  kind: 'user' | 'assistant' | 'tool_call' | 'tool_result' | 'tool_error';
  text: string;
}

export function formatMessage(message: MessageParam): FormattedLine[] {
  if (typeof message.content === 'string') {
    const kind = message.role === 'assistant' ? 'assistant' : 'user';
    return message.content.trim() ? [{ kind, text: message.content.trim() }] : [];
  }
  const lines: FormattedLine[] = [];
  for (const block of message.content) {
    if (block.type === 'text' && block.text.trim())
      lines.push({ kind: message.role === 'assistant' ? 'assistant' : 'user', text: block.text.trim() });
    if (block.type === 'tool_use')
      lines.push({ kind: 'tool_call', text: toolCallSummary(block.name, block.input as Record<string, unknown>) });
    if (block.type === 'tool_result') {
      const content =
        typeof block.content === 'string'
          ? block.content
          : (block.content ?? []).map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
      lines.push({ kind: block.is_error ? 'tool_error' : 'tool_result', text: content });
    }
  }
  return lines;
}

const PREFIX: Record<FormattedLine['kind'], string> = {
  user: 'user      ',
  assistant: 'assistant ',
  tool_call: '  → tool  ',
  tool_result: '  ← result',
  tool_error: '  ← error ',
};

export function renderLine(line: FormattedLine): string {
  return `${PREFIX[line.kind]} ${line.text}`;
}
