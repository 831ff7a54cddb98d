// The request a model call sends: protocol-specific shape and prompt-caching breakpoints. Pure, no server.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { buildModelRequest } from '../../activities/model-request';
import { NATIVE_REQUEST_OPTIONS, STOCK_TOOL_DESCRIPTIONS } from '../support/model-request-fixtures';

const tools = STOCK_TOOL_DESCRIPTIONS;
const base = NATIVE_REQUEST_OPTIONS;
const messages: MessageParam[] = [
  { role: 'user', content: 'What is the current stock price of General Motors?' },
  {
    role: 'assistant',
    content: [{ type: 'tool_use', id: 't1', name: 'get_ticker_symbol', input: { company_name: 'General Motors' } }],
  },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'GM' }] },
];

test('native: tools with a breakpoint on the last one, the system prompt and the newest message cached', () => {
  const request = buildModelRequest({ ...base, system: 'Be brief.' }, messages, tools);
  assert.deepEqual(
    request.tools!.map((t) => 'cache_control' in t && t.cache_control),
    [false, { type: 'ephemeral' }],
  );
  assert.deepEqual(request.system, [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }]);
  const last = request.messages.at(-1)!.content as { cache_control?: unknown }[];
  assert.deepEqual(last[0]!.cache_control, { type: 'ephemeral' });
  assert.equal(
    JSON.stringify(request).split('cache_control').length - 1,
    3,
    "three breakpoints, within the API's four",
  );
  assert.equal(
    (messages[2]!.content as { cache_control?: unknown }[])[0]!.cache_control,
    undefined,
    'the transcript itself is not touched',
  );
  assert.match((request.tools![0] as { description: string }).description, /Raises TickerNotFound/);
});

test('native: without prompt caching there is no breakpoint at all', () => {
  const request = buildModelRequest({ ...base, promptCaching: false, system: 'Be brief.' }, messages, tools);
  assert.equal(JSON.stringify(request).includes('cache_control'), false);
});

test('disable_parallel_tool_use joins the tool_choice (auto when none is given)', () => {
  assert.deepEqual(buildModelRequest({ ...base, disableParallelToolUse: true }, messages, tools).tool_choice, {
    type: 'auto',
    disable_parallel_tool_use: true,
  });
  assert.deepEqual(
    buildModelRequest({ ...base, disableParallelToolUse: true, toolChoice: { type: 'any' } }, messages, tools)
      .tool_choice,
    { type: 'any', disable_parallel_tool_use: true },
  );
});

test('legacy XML: tools described in the system prompt, the stop sequence set, no native tools', () => {
  const request = buildModelRequest({ ...base, protocol: 'legacy-xml', system: 'Be brief.' }, [messages[0]!], tools);
  assert.equal(request.tools, undefined);
  assert.deepEqual(request.stop_sequences, ['</function_calls>']);
  const system = (request.system as { text: string }[])[0]!.text;
  assert.match(system, /<tool_name>get_ticker_symbol<\/tool_name>/);
  assert.match(system, /Be brief\.$/);
});
