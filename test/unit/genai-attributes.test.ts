// The GenAI semantic-convention attributes of a model call and a tool call: metadata always, content only when asked.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CallModelInput, CallModelResult } from '../../common/activity-contracts';
import {
  callIdOf,
  CONTENT_ATTRIBUTES,
  GEN_AI,
  modelCallSpanName,
  modelRequestAttributes,
  modelResponseAttributes,
  toolCallSpanName,
  toolRequestAttributes,
  toolResultAttributes,
} from '../../tracing/genai-attributes';

const call: CallModelInput = {
  callNumber: 1,
  transcriptLength: 1,
  newMessages: [{ role: 'user', content: 'What is the price of ACME?' }],
  fullContext: { system: 'You are terse.' },
  request: {
    model: 'claude-sonnet-4-5',
    maxTokens: 1024,
    protocol: 'native',
    tools: ['get_ticker_symbol'],
    promptCaching: false,
  },
};
const reply: CallModelResult = {
  content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_ticker_symbol', input: { company: 'ACME' } } as never],
  stop_reason: 'tool_use',
  stop_sequence: null,
  id: 'msg_1',
  model: 'claude-sonnet-4-5',
  usage: { inputTokens: 120, outputTokens: 30, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
};

test('a model call: chat {model}, provider, model, usage and finish reasons', () => {
  assert.equal(modelCallSpanName(call), 'chat claude-sonnet-4-5');
  const attributes = { ...modelRequestAttributes(call, 'conv-1', false), ...modelResponseAttributes(reply, false) };
  assert.equal(attributes[GEN_AI.operationName], 'chat');
  assert.equal(attributes[GEN_AI.providerName], 'anthropic');
  assert.equal(attributes[GEN_AI.requestModel], 'claude-sonnet-4-5');
  assert.equal(attributes[GEN_AI.conversationId], 'conv-1');
  assert.equal(attributes[GEN_AI.inputTokens], 120);
  assert.equal(attributes[GEN_AI.outputTokens], 30);
  assert.deepEqual(attributes[GEN_AI.finishReasons], ['tool_use']);
  assert.equal(attributes[GEN_AI.responseId], 'msg_1');
});

test('no prompt, reply or tool content unless content capture is on', () => {
  const off = {
    ...modelRequestAttributes(call, 'conv-1', false),
    ...modelResponseAttributes(reply, false),
    ...toolRequestAttributes(
      'get_ticker_symbol',
      { input: { company: 'ACME' }, protocol: 'native', idempotencyKey: 'c/r/1-0' },
      'tool-toolu_1',
      false,
    ),
    ...toolResultAttributes({ ok: true, content: 'ACME' }, false),
  };
  for (const key of CONTENT_ATTRIBUTES) assert.equal(off[key], undefined, key);
  assert.doesNotMatch(JSON.stringify(off), /price of ACME|You are terse|company/);

  const on = { ...modelRequestAttributes(call, 'conv-1', true), ...modelResponseAttributes(reply, true) };
  assert.deepEqual(JSON.parse(on[GEN_AI.inputMessages] as string), [
    { role: 'user', parts: [{ type: 'text', content: 'What is the price of ACME?' }] },
  ]);
  assert.deepEqual(JSON.parse(on[GEN_AI.outputMessages] as string), [
    {
      role: 'assistant',
      parts: [{ type: 'tool_call', id: 'toolu_1', name: 'get_ticker_symbol', arguments: { company: 'ACME' } }],
      finish_reason: 'tool_use',
    },
  ]);
  assert.match(on[GEN_AI.systemInstructions] as string, /You are terse/);
});

test("a tool call: execute_tool {name}, the tool name and the model's call id", () => {
  assert.equal(toolCallSpanName('get_ticker_symbol'), 'execute_tool get_ticker_symbol');
  const attributes = toolRequestAttributes(
    'get_ticker_symbol',
    { input: { company: 'ACME' }, protocol: 'native', idempotencyKey: 'conv/with/slashes/run-1/2-0' },
    'tool-toolu_9',
    true,
  );
  assert.equal(attributes[GEN_AI.operationName], 'execute_tool');
  assert.equal(attributes[GEN_AI.toolName], 'get_ticker_symbol');
  assert.equal(attributes[GEN_AI.toolCallId], 'toolu_9');
  assert.equal(attributes[GEN_AI.toolCallArguments], '{"company":"ACME"}');
  assert.equal(callIdOf('tool-toolu_2', 'a/b/1-0'), 'toolu_2');
  assert.equal(callIdOf('an-older-id', 'a/b/toolu_2'), 'toolu_2', "an older run's key ended with the model's id");
  assert.equal(toolResultAttributes({ ok: false, content: 'InvalidInput: x' }, false)['error.type'], 'tool_error');
});
