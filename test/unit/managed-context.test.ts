// What a model call reports about its context, from the API's reply: usage summed over iterations (a compaction's
// tokens are billed but left out of the top-level figures), input tokens after the API's edits and before them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BetaMessage } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { callModelResultOf, withContextManagement } from '../../activities/managed-context';
import { contextOfUsage } from '../../common/context-accounting';

function message(extra: Partial<BetaMessage>): BetaMessage {
  return {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-5-5',
    content: [{ type: 'text', text: 'Done.', citations: null }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    container: null,
    context_management: null,
    usage: {
      input_tokens: 1_000,
      output_tokens: 50,
      cache_read_input_tokens: 500,
      cache_creation_input_tokens: 100,
      iterations: null,
    },
    ...extra,
  } as BetaMessage;
}

const iteration = (type: 'compaction' | 'message', input: number, output: number) => ({
  type,
  input_tokens: input,
  output_tokens: output,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_creation: null,
  ...(type === 'message' && { model: null }),
});

test("a plain reply: usage as reported; no context nor stop_sequence recorded, the context is the usage's prompt", () => {
  const result = callModelResultOf(message({}));
  assert.deepEqual(result.usage, {
    inputTokens: 1_000,
    outputTokens: 50,
    cacheReadInputTokens: 500,
    cacheCreationInputTokens: 100,
  });
  // History bytes: the workflow derives what is left out (contextOfUsage), so a plain reply records neither.
  assert.equal('context' in result, false);
  assert.equal('stop_sequence' in result, false);
  assert.deepEqual(contextOfUsage(result.usage), {
    inputTokens: 1_600,
    inputTokensBefore: 1_600,
    clearedToolUses: 0,
    clearedInputTokens: 0,
  });
});

test("a compacted reply: the compaction's tokens are billed, the context is the answer's prompt, before is counted", () => {
  const result = callModelResultOf(
    message({
      content: [
        { type: 'compaction', content: 'Summary.', encrypted_content: 'e', signature: 's' },
        { type: 'text', text: 'Done.', citations: null },
      ],
      usage: {
        input_tokens: 2_000,
        output_tokens: 40,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
        iterations: [iteration('compaction', 12_000, 900), iteration('message', 2_000, 40)],
      } as BetaMessage['usage'],
    }),
    160_000,
  );
  assert.deepEqual(result.usage, {
    inputTokens: 14_000,
    outputTokens: 940,
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
  });
  assert.equal(result.context?.inputTokens, 2_000);
  assert.equal(result.context?.inputTokensBefore, 160_000, 'from the token count, not the compaction iteration');
  assert.equal(result.content[0]?.type, 'compaction');
});

test('cleared tool uses: before is after plus what was cleared', () => {
  const result = callModelResultOf(
    message({
      context_management: {
        applied_edits: [{ type: 'clear_tool_uses_20250919', cleared_tool_uses: 7, cleared_input_tokens: 42_000 }],
      },
    }),
  );
  assert.deepEqual(result.context, {
    inputTokens: 1_600,
    inputTokensBefore: 43_600,
    clearedToolUses: 7,
    clearedInputTokens: 42_000,
  });
});

test('paused after compacting reads like a paused turn: sent back as it is, and the model carries on', () => {
  const result = callModelResultOf(
    message({
      stop_reason: 'compaction',
      content: [{ type: 'compaction', content: 'Summary.', encrypted_content: null }],
    }),
  );
  assert.equal(result.stop_reason, 'pause_turn');
});

test('the beta request: context_management and its beta headers, only when there is something to ask', () => {
  const request = { model: 'm', max_tokens: 10, messages: [], stream: true as const };
  assert.equal(withContextManagement(request, undefined), request);
  const config = { edits: [{ type: 'compact_20260112' as const }] };
  assert.deepEqual(withContextManagement(request, { config, betas: ['compact-2026-01-12'] }), {
    ...request,
    betas: ['compact-2026-01-12'],
    context_management: config,
  });
});
