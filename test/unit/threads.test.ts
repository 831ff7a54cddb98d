// Threads' pure parts: which reply a later call may continue from (and never twice), what a create and a continue
// send, the fingerprint of what a thread keeps, and which API errors are thread refusals (read from the SDK's own
// typed errors), plus the option and its place in the conversation's state across continue-as-new.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { APIError } from '@anthropic-ai/sdk';
import { asContinue, asCreate, threadFingerprint, threadRefusal } from '../../activities/model-thread';
import type { ConversationInput } from '../../common/conversation-input';
import { conversationOptionsSchema } from '../../common/options';
import { anchorOf, continuableFrom, THREADS_BETA } from '../../common/threads';
import { ConversationState } from '../../workflows/conversation-state';

const apiError = (status: number, details: Record<string, unknown>) =>
  APIError.generate(
    status,
    { type: 'error', error: { type: 'invalid_request_error', message: 'no', details } },
    undefined,
    new Headers(),
  );

describe('threads: which reply a call may continue from', () => {
  const anchor = { id: 'msg_1', fingerprint: 'f', at: 4 };
  const state = { lastReplyId: 'msg_1', transcriptLength: 5 };
  const first = { firstOfStep: true, joinsPausedTurn: false };

  test('the last reply, in place: continue with the messages after it', () => {
    assert.deepEqual(continuableFrom(anchor, state, first), { id: 'msg_1', fingerprint: 'f', from: 4 });
  });
  test("a run's first call after continue-as-new (no last reply yet in the run) continues too", () => {
    assert.deepEqual(continuableFrom(anchor, { ...state, lastReplyId: undefined }, first)?.from, 4);
  });
  for (const [what, a, s, c] of [
    ['no anchor', undefined, state, first],
    ['an anchor not yet in the transcript', { id: 'msg_1', fingerprint: 'f' }, state, first],
    ['a transcript cut below the anchor (a failed turn)', anchor, { ...state, transcriptLength: 3 }, first],
    ['another reply last (the turn went back to an earlier one)', anchor, { ...state, lastReplyId: 'msg_0' }, first],
    ['a rung of the max_tokens ladder or a fallback model', anchor, state, { ...first, firstOfStep: false }],
    ['a paused turn resumed', anchor, state, { ...first, joinsPausedTurn: true }],
  ] as const) {
    test(`${what}: create`, () => {
      assert.equal(continuableFrom(a, s, c), undefined);
    });
  }
  test('a reply leaves an anchor unless unthreaded, cut off by max_tokens or refused', () => {
    const threaded = { mode: 'continued', fingerprint: 'f' } as const;
    assert.deepEqual(anchorOf({ id: 'm', stop_reason: 'tool_use', thread: threaded }), { id: 'm', fingerprint: 'f' });
    assert.equal(anchorOf({ id: 'm', stop_reason: 'max_tokens', thread: threaded }), undefined);
    assert.equal(anchorOf({ id: 'm', stop_reason: 'refusal', thread: threaded }), undefined);
    assert.equal(anchorOf({ id: 'm', stop_reason: 'end_turn', thread: { mode: 'unthreaded' } }), undefined);
    assert.equal(anchorOf({ id: 'm', stop_reason: 'end_turn' }), undefined);
  });
});

describe('threads: the requests', () => {
  const request = {
    model: 'claude-sonnet-5-5',
    max_tokens: 1024,
    system: 'Be brief.',
    tools: [{ name: 't', input_schema: { type: 'object' as const } }],
    messages: [{ role: 'user' as const, content: 'hi' }],
    stream: true as const,
  };
  test('create: the whole request, the thread field and the beta', () => {
    assert.deepEqual(asCreate(request), { ...request, betas: [THREADS_BETA], thread: { type: 'create' } });
  });
  test('continue: no system, no tools (the thread keeps them), the previous reply named, betas kept', () => {
    const sent = asContinue({ ...request, betas: ['context-management-2025-06-27'] }, 'msg_9');
    assert.equal('system' in sent || 'tools' in sent, false);
    assert.deepEqual(sent.thread, { type: 'continue', previous_message_id: 'msg_9' });
    assert.deepEqual(sent.betas, ['context-management-2025-06-27', THREADS_BETA]);
  });
  test('the fingerprint changes with the model, the tools or the system prompt, not with the messages', () => {
    const base = threadFingerprint(request);
    assert.equal(threadFingerprint({ ...request, messages: [] } as typeof request), base);
    assert.notEqual(threadFingerprint({ ...request, model: 'claude-opus-5-5' }), base);
    assert.notEqual(threadFingerprint({ ...request, tools: [] }), base);
    assert.notEqual(threadFingerprint({ ...request, system: 'Other.' }), base);
  });
});

describe('threads: the API errors that are thread refusals', () => {
  test('each replay code, by the error_code the SDK reads', () => {
    assert.deepEqual(threadRefusal(apiError(404, { error_code: 'thread_not_found' })), { code: 'thread_not_found' });
    for (const code of ['thread_already_continued', 'thread_continue_in_flight', 'thread_fingerprint_mismatch']) {
      assert.deepEqual(threadRefusal(apiError(400, { error_code: code })), { code });
    }
  });
  test('unsupported names the features (none named: an empty list)', () => {
    const named = apiError(400, { error_code: 'thread_unsupported_request', unsupported: ['thinking'] });
    assert.deepEqual(threadRefusal(named), { code: 'thread_unsupported_request', unsupported: ['thinking'] });
    const unnamed = apiError(400, { error_code: 'thread_unsupported_request' });
    assert.deepEqual(threadRefusal(unnamed), { code: 'thread_unsupported_request', unsupported: [] });
  });
  test('anything else is not a thread refusal', () => {
    assert.equal(threadRefusal(apiError(400, { error_code: 'compaction_block_misplaced' })), undefined);
    assert.equal(threadRefusal(apiError(529, {})), undefined);
    assert.equal(threadRefusal(new Error('socket hang up')), undefined);
  });
});

describe('threads: the option and the state', () => {
  const threadedReply = (id: string) =>
    ({ id, stop_reason: 'end_turn', thread: { mode: 'created', fingerprint: 'f' } }) as const;
  test('off unless true; with it off the parsed options have no threads field at all', () => {
    assert.equal('threads' in conversationOptionsSchema.parse({}), false);
    assert.equal(conversationOptionsSchema.parse({ threads: true }).threads, true);
  });
  test('the anchor and "unsupported" are carried across continue-as-new; a compaction drops the anchor', () => {
    const options = conversationOptionsSchema.parse({ threads: true });
    const state = new ConversationState({ options, firstMessage: 'Hi' } as ConversationInput, 'run-1');
    state.beginTurn();
    // One call went unthreaded (threads are off from then on), a later one left an anchor: both are carried.
    state.recordThreadUse({ id: 'msg_0', stop_reason: 'end_turn', thread: { mode: 'unthreaded' } });
    state.recordThreadUse(threadedReply('msg_1'));
    state.appendReply({ message: { role: 'assistant', content: 'Hello' }, replyId: 'msg_1' });
    assert.deepEqual(state.thread, { id: 'msg_1', fingerprint: 'f', at: 2 });
    const carried = state.toCarriedState();
    assert.deepEqual(carried.threadAnchor, { id: 'msg_1', fingerprint: 'f', at: 2 });
    const next = new ConversationState({ options, carried } as ConversationInput, 'run-2');
    assert.deepEqual(next.thread, carried.threadAnchor);
    assert.equal(next.threadsUnsupported, true);
    next.compactHead(1, [{ role: 'user', content: 'Summary' }]);
    assert.equal(next.thread, undefined);
  });
  test('a failed turn drops an anchor set during it, and keeps the one it started from', () => {
    const options = conversationOptionsSchema.parse({ threads: true });
    const state = new ConversationState({ options, firstMessage: 'Hi' } as ConversationInput, 'run-1');
    state.beginTurn();
    state.recordThreadUse(threadedReply('msg_1'));
    state.appendReply({ message: { role: 'assistant', content: 'Hello' }, replyId: 'msg_1' });
    state.finishTurn({ text: 'Hello', stopReason: 'end_turn', status: 'awaiting_user' });
    state.enqueue('Again');
    state.beginTurn();
    state.failTurn({ type: 'ModelCallFailed', message: 'no' });
    assert.deepEqual(state.thread, { id: 'msg_1', fingerprint: 'f', at: 2 }, 'nothing of the failed turn was sent');
    state.enqueue('Once more');
    state.beginTurn();
    state.recordThreadUse(threadedReply('msg_2'));
    state.appendReply({ message: { role: 'assistant', content: 'Hm' }, replyId: 'msg_2' });
    state.failTurn({ type: 'ModelCallFailed', message: 'no' });
    assert.equal(state.thread, undefined);
  });
  test('with threads off nothing of them is carried', () => {
    const state = new ConversationState(
      { options: conversationOptionsSchema.parse({}), firstMessage: 'Hi' } as ConversationInput,
      'run-1',
    );
    const carried = state.toCarriedState();
    assert.equal('threadAnchor' in carried || 'threadsUnsupported' in carried, false);
  });
});
