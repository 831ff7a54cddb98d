// Server tool calls left open, without Temporal: which replies may keep them, what closing drops, and how the
// conversation's memory closes them when a user message follows (the worker's copy and the API's thread then hold a
// message that changed, so the next call sends it again and starts a new thread).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ContentBlockParam, MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { withDefaults } from '../../common/options';
import { closedReply, leavesServerToolCallsOpen, withServerToolCallsClosed } from '../../common/open-server-tool-calls';
import { withReply } from '../../common/paused-turn';
import { ConversationState, type PatchMarkers } from '../../workflows/conversation-state';

const block = (fields: Record<string, unknown>) => fields as unknown as ContentBlockParam;
const call = (id: string) => block({ type: 'server_tool_use', id, name: 'web_search', input: { query: 'GM' } });
const result = (id: string) => block({ type: 'web_search_tool_result', tool_use_id: id, content: [] });
const text = (words: string) => block({ type: 'text', text: words });
const toolUse = block({ type: 'tool_use', id: 'toolu_1', name: 'get_ticker_symbol', input: {} });
const assistant = (...content: ContentBlockParam[]): MessageParam => ({ role: 'assistant', content });

describe('which replies may leave a server tool call open', () => {
  test('a paused one, and one that stopped for the conversation’s own tool calls; no other', () => {
    const open = assistant(call('srvtoolu_a'), toolUse);
    assert.equal(leavesServerToolCallsOpen('pause_turn', assistant(call('srvtoolu_a'))), true);
    assert.equal(leavesServerToolCallsOpen('tool_use', open), true);
    assert.equal(
      leavesServerToolCallsOpen('tool_use', assistant(call('srvtoolu_a'))),
      false,
      'no tool call to wait on',
    );
    for (const reason of ['end_turn', 'stop_sequence', 'refusal', null] as const) {
      assert.equal(leavesServerToolCallsOpen(reason, open), false, String(reason));
    }
  });
});

describe('closing a message', () => {
  test('drops the calls without a result, keeps answered ones and everything else in order', () => {
    const message = assistant(text('a'), call('srvtoolu_a'), result('srvtoolu_a'), call('srvtoolu_b'), text('b'));
    assert.deepEqual(
      withServerToolCallsClosed(message),
      assistant(text('a'), call('srvtoolu_a'), result('srvtoolu_a'), text('b')),
    );
  });
  test('the same object when nothing is open; a message left empty says so', () => {
    const answered = assistant(call('srvtoolu_a'), result('srvtoolu_a'));
    assert.equal(withServerToolCallsClosed(answered), answered);
    assert.deepEqual(withServerToolCallsClosed(assistant(call('srvtoolu_a'))), assistant(text('(empty reply)')));
    const user: MessageParam = { role: 'user', content: 'q' };
    assert.equal(withServerToolCallsClosed(user), user);
  });
  test('a reply that ended closes; a paused one stays as it came; a continuation closes the joined message', () => {
    const user: MessageParam = { role: 'user', content: 'q' };
    const paused = assistant(text('Searching.'), call('srvtoolu_a'));
    assert.deepEqual(closedReply([user], paused, 'end_turn'), assistant(text('Searching.')));
    assert.equal(closedReply([user], paused, 'pause_turn'), paused);
    // The continuation brings the paused call's result: one message, nothing dropped.
    assert.deepEqual(
      withReply([user, paused], {
        reply: assistant(result('srvtoolu_a'), text('GM.')),
        joinsPausedTurn: true,
        stopReason: 'end_turn',
      }),
      [user, assistant(text('Searching.'), call('srvtoolu_a'), result('srvtoolu_a'), text('GM.'))],
    );
    // The continuation never brought it: the joined message closes.
    assert.deepEqual(
      withReply([user, paused], { reply: assistant(text('GM.')), joinsPausedTurn: true, stopReason: 'end_turn' }),
      [user, assistant(text('Searching.'), text('GM.'))],
    );
  });
});

describe('stray server tool results', () => {
  const user: MessageParam = { role: 'user', content: 'q' };
  const results: MessageParam = {
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'GM' }],
  };
  test('a result that answers no call before it never enters the transcript, even in a paused reply', () => {
    for (const reason of ['end_turn', 'pause_turn'] as const) {
      assert.deepEqual(
        closedReply([user], assistant(result('srvtoolu_x'), text('GM.')), reason),
        assistant(text('GM.')),
      );
    }
    assert.deepEqual(
      closedReply([user], assistant(result('srvtoolu_a'), call('srvtoolu_a')), 'pause_turn'),
      assistant(call('srvtoolu_a')),
      'a result before its call answers nothing',
    );
    assert.deepEqual(
      closedReply([user], assistant(result('srvtoolu_x')), 'end_turn'),
      assistant(text('(empty reply)')),
    );
  });
  test('the result of a call deferred by the message before the tool results stays: it opens the next reply', () => {
    const prior = [user, assistant(call('srvtoolu_d'), toolUse), results];
    const reply = assistant(result('srvtoolu_d'), text('GM.'));
    assert.equal(closedReply(prior, reply, 'end_turn'), reply);
    assert.deepEqual(withReply(prior, { reply, joinsPausedTurn: false, stopReason: 'end_turn' }), [...prior, reply]);
    // Another call's result is still stray.
    assert.deepEqual(
      closedReply(prior, assistant(result('srvtoolu_x'), text('GM.')), 'end_turn'),
      assistant(text('GM.')),
    );
  });
});

describe('the conversation closes open calls when a user message follows', () => {
  const started = (markers?: PatchMarkers) => {
    const state = new ConversationState(
      { options: withDefaults({ tools: ['get_ticker_symbol'] }), firstMessage: 'GM?' },
      'run-1',
      markers,
    );
    state.beginTurn();
    return state;
  };

  test('a paused turn the budget stopped: closed when the next message comes, and sent again whole', () => {
    const state = started();
    state.recordThreadUse({ id: 'msg_1', stop_reason: 'pause_turn', thread: { mode: 'created', fingerprint: 'f' } });
    state.appendReply({
      message: assistant(text('Searching.'), call('srvtoolu_a')),
      replyId: 'msg_1',
      stopReason: 'pause_turn',
    });
    assert.deepEqual(state.thread, { id: 'msg_1', fingerprint: 'f', at: 2 });
    state.finishTurnOverBudget('over budget', 'turn');
    assert.deepEqual(state.transcript[1], assistant(text('Searching.'), call('srvtoolu_a')), 'kept until then');
    state.enqueue('Ford?');
    state.beginTurn();
    assert.deepEqual(state.transcript, [
      { role: 'user', content: 'GM?' },
      assistant(text('Searching.')),
      { role: 'user', content: 'Ford?' },
    ]);
    assert.deepEqual(state.newMessages(), state.transcript.slice(1), 'the closed message goes again');
    assert.equal(state.lastReplyId, undefined, 'the worker’s copy holds the open call: not continued');
    assert.equal(state.thread, undefined, 'the API’s thread holds it too');
  });

  test('a deferring reply whose tool results the budget left: the message joins them, the call before goes', () => {
    const state = started();
    state.appendReply({ message: assistant(call('srvtoolu_a'), toolUse), replyId: 'msg_1', stopReason: 'tool_use' });
    state.appendResults({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'GM' }] });
    state.finishTurnOverBudget('over budget', 'turn');
    state.enqueue('Go on.');
    state.beginTurn();
    assert.deepEqual(state.transcript[1], assistant(toolUse));
    assert.deepEqual(state.transcript[2], {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: 'GM' },
        { type: 'text', text: 'Go on.' },
      ],
    });
  });

  test('nothing open: nothing changes, and the next call still builds on the worker’s copy', () => {
    const state = started();
    state.appendReply({
      message: assistant(call('srvtoolu_a'), result('srvtoolu_a'), text('GM.')),
      replyId: 'msg_1',
      stopReason: 'end_turn',
    });
    state.finishTurn({ text: 'GM.', stopReason: 'end_turn', status: 'awaiting_user' });
    state.enqueue('Ford?');
    state.beginTurn();
    assert.equal(state.lastReplyId, 'msg_1');
    assert.equal(state.newMessages().length, 1);
  });

  test('a run replayed from before (no patch) keeps every call as it came', () => {
    let asked = 0;
    const state = started({ closesServerToolCalls: () => (asked++, false) });
    state.appendReply({ message: assistant(text('a'), call('srvtoolu_a')), replyId: 'msg_1', stopReason: 'end_turn' });
    assert.deepEqual(state.transcript[1], assistant(text('a'), call('srvtoolu_a')));
    state.finishTurn({ text: 'a', stopReason: 'end_turn', status: 'awaiting_user' });
    state.enqueue('Ford?');
    state.beginTurn();
    assert.deepEqual(state.transcript[1], assistant(text('a'), call('srvtoolu_a')));
    assert.equal(asked, 2, 'asked only where a call would go');
  });
});
