// The worker's model-context cache: what a model call reads without asking the workflow, and when it must ask.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { ModelContextCache } from '../../activities/model-context-cache';
import type { CallModelInput, ConversationRun } from '../../common/activity-contracts';

const conversation = { workflowId: 'c1', runId: 'r1' };
const user = (text: string): MessageParam => ({ role: 'user', content: text });
const assistant = (text: string): MessageParam => ({ role: 'assistant', content: text });
const call = (input: Partial<CallModelInput>): CallModelInput & { conversation: ConversationRun } => ({
  conversation,
  callNumber: 1,
  transcriptLength: 1,
  newMessages: [],
  request: { model: 'm', maxTokens: 10, protocol: 'native', tools: [], promptCaching: true },
  ...input,
});

function cacheWithWorkflow(transcript: MessageParam[], system = 'Be brief.') {
  const queries: number[] = [];
  const cache = new ModelContextCache(async (_, length) => {
    queries.push(length);
    return { system, messages: transcript.slice(0, length) };
  });
  return { cache, queries };
}

test("a conversation's first call carries everything: no query", async () => {
  const { cache, queries } = cacheWithWorkflow([]);
  const context = await cache.assemble(
    call({ transcriptLength: 1, newMessages: [user('Hi')], fullContext: { system: 'Be brief.' } }),
  );
  assert.deepEqual(context, { system: 'Be brief.', messages: [user('Hi')] });
  assert.deepEqual(queries, []);
});

test('after a remembered reply, the next call needs only the new messages', async () => {
  const { cache, queries } = cacheWithWorkflow([]);
  cache.remember(conversation, {
    system: 'Be brief.',
    messages: [user('Hi'), assistant('Hello')],
    lastReplyId: 'msg_a',
  });
  const context = await cache.assemble(call({ transcriptLength: 3, newMessages: [user('More')], afterReply: 'msg_a' }));
  assert.deepEqual(
    context.messages.map((m) => m.content),
    ['Hi', 'Hello', 'More'],
  );
  assert.equal(context.system, 'Be brief.');
  assert.deepEqual(queries, []);
});

test('a cached reply other than the one the workflow kept is never used: the workflow is asked', async () => {
  const transcript = [user('Hi'), assistant('The reply the workflow kept'), user('More')];
  const { cache, queries } = cacheWithWorkflow(transcript);
  // A late attempt whose result the server had given up on wrote its own reply, of the same length.
  cache.remember(conversation, {
    system: 'Be brief.',
    messages: [user('Hi'), assistant('A late, discarded reply')],
    lastReplyId: 'msg_late',
  });
  const context = await cache.assemble(
    call({ transcriptLength: 3, newMessages: [user('More')], afterReply: 'msg_kept' }),
  );
  assert.deepEqual(context.messages, transcript);
  assert.deepEqual(queries, [3]);
});

test('another run of the same conversation does not share entries', async () => {
  const transcript = [user('Hi'), assistant('Hello'), user('More')];
  const { cache, queries } = cacheWithWorkflow(transcript);
  cache.remember(conversation, { messages: transcript.slice(0, 2), lastReplyId: 'msg_a' });
  await cache.assemble(
    call({
      conversation: { workflowId: 'c1', runId: 'r2' },
      transcriptLength: 3,
      newMessages: [user('More')],
      afterReply: 'msg_a',
    }),
  );
  assert.deepEqual(queries, [3]);
});

describe('the cache is bounded by bytes, not by entries', () => {
  const entryOf = (text: string) => ({ messages: [user(text), assistant('ok')], lastReplyId: 'msg' });
  const size = (text: string) => Buffer.byteLength(JSON.stringify(entryOf(text)));

  test('a few long transcripts evict older ones; many short ones fit', () => {
    const long = 'x'.repeat(10_000);
    const cache = new ModelContextCache(async () => ({ messages: [] }), 3 * size(long));
    for (let i = 0; i < 5; i++) cache.remember({ workflowId: `long-${i}`, runId: 'r' }, entryOf(long));
    assert.equal(cache.size, 3, 'three long ones fill it');
    assert.ok(cache.bytes <= cache.maxBytes);
    for (let i = 0; i < 100; i++) cache.remember({ workflowId: `short-${i}`, runId: 'r' }, entryOf('hi'));
    assert.ok(cache.size > 100, `a hundred short ones and what is left of the long ones (${cache.size})`);
    assert.ok(cache.bytes <= cache.maxBytes);
  });

  test('bytes are UTF-8 bytes: CJK text weighs three times its length', () => {
    const cjk = '漢'.repeat(1_000);
    const cache = new ModelContextCache(async () => ({ messages: [] }), 2 * size(cjk));
    for (let i = 0; i < 3; i++) cache.remember({ workflowId: `cjk-${i}`, runId: 'r' }, entryOf(cjk));
    assert.equal(cache.size, 2);
    assert.equal(cache.bytes, 2 * size(cjk));
  });

  test('a context larger than the whole budget is not kept; remembering again replaces, never double-counts', () => {
    const cache = new ModelContextCache(async () => ({ messages: [] }), 1_000);
    cache.remember(conversation, entryOf('y'.repeat(2_000)));
    assert.equal(cache.size, 0);
    cache.remember(conversation, entryOf('a'));
    cache.remember(conversation, entryOf('ab'));
    assert.equal(cache.size, 1);
    assert.equal(cache.bytes, size('ab'));
  });

  test("a conversation's context, remembered again as it grows call after call, weighs its JSON each time", () => {
    const cache = new ModelContextCache(async () => ({ messages: [] }));
    const messages: MessageParam[] = [user('Hi'), assistant('漢字 and "quotes"')];
    for (let call = 1; call <= 4; call++) {
      // The same message objects each time, as the model activity hands them on, plus the reply and results.
      const context = { system: 'Be brief.', messages: [...messages], lastReplyId: `msg_${call}` };
      cache.remember(conversation, context);
      assert.equal(cache.bytes, Buffer.byteLength(JSON.stringify(context)), `after call ${call}`);
      messages.push(user(`result ${call}`), assistant(`reply ${call}`));
    }
    cache.remember(conversation, { messages: [] });
    assert.equal(cache.bytes, Buffer.byteLength(JSON.stringify({ messages: [] })), 'an empty context too');
  });
});
