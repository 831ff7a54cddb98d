// withSubAgents (streaming/client/sub-agent-streams.ts) over scripted streams: a child is followed from its parent's
// `agent_started`, its events tagged with its id and carrying the parent's cursor; `steps` drops its tokens; the
// parent's `agent_finished` waits for the child's stream to end; a child that fails is left out; at most `max`
// children are followed; children open at a resumed cursor are followed from the start.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { StreamEvent, StreamItem } from '../../streaming/stream-events';
import { type FollowAgent, isStep, withSubAgents } from '../../streaming/client/sub-agent-streams';

const item = (offset: number, event: StreamEvent, live?: true): StreamItem => ({
  offset,
  cursor: String(offset),
  ...(live && { live }),
  event,
});
const started = (offset: number, agentId: string) =>
  item(offset, { type: 'agent_started', callId: `call-${agentId}`, tool: 'research', agentId, task: 't' });
const finished = (offset: number, agentId: string) =>
  item(offset, {
    type: 'agent_finished',
    callId: `call-${agentId}`,
    tool: 'research',
    agentId,
    status: 'completed',
    isError: false,
  });
const text = (offset: number, value: string, live?: true) =>
  item(offset, { type: 'text', call: 1, attempt: 1, block: 0, at: 0, text: value }, live);
const result = (offset: number, name: string) =>
  item(offset, { type: 'tool_result', id: `tool-${offset}`, name, isError: false, content: 'ok' });
const ended = (offset: number) => item(offset, { type: 'conversation_ended', status: 'completed' });

/** Items given one per macrotask (after `delayMs` first), then the end, or a failure. */
async function* scripted(items: StreamItem[], delayMs = 0, fail?: Error): AsyncGenerator<StreamItem> {
  await new Promise((resolve) => setTimeout(resolve, delayMs));
  for (const one of items) {
    await new Promise((resolve) => setImmediate(resolve));
    yield one;
  }
  if (fail) throw fail;
}

async function collect(iterable: AsyncIterable<StreamItem>): Promise<StreamItem[]> {
  const all: StreamItem[] = [];
  for await (const one of iterable) all.push(one);
  return all;
}

const label = (one: StreamItem) => `${one.agent ?? 'parent'}:${one.event.type}@${one.offset}/${one.cursor}`;

describe('withSubAgents', () => {
  test("a child's steps, tagged and under the parent's cursor, come before the parent's agent_finished", async () => {
    const parent = scripted([started(0, 'a'), finished(1, 'a'), ended(2)]);
    const follow: FollowAgent = () =>
      scripted(
        [text(0, 'hel', true), text(0, 'hello'), result(1, 'lookup'), ended(2)].map((i) => ({ ...i })),
        20,
      );
    const items = await collect(withSubAgents(parent, follow, { mode: 'steps', cursor: '-1' }));
    assert.deepEqual(items.map(label), [
      'parent:agent_started@0/0',
      'a:tool_result@1/0',
      'parent:agent_finished@1/1',
      'parent:conversation_ended@2/2',
    ]);
  });

  test("'all' keeps a child's text and live events", async () => {
    const follow: FollowAgent = () => scripted([text(0, 'hel', true), text(0, 'hello'), ended(1)]);
    const items = await collect(
      withSubAgents(scripted([started(0, 'a'), finished(1, 'a'), ended(2)]), follow, { mode: 'all', cursor: '-1' }),
    );
    assert.deepEqual(
      items.filter((one) => one.agent === 'a').map((one) => [one.event.type, one.live ?? false]),
      [
        ['text', true],
        ['text', false],
        ['conversation_ended', false],
      ],
    );
  });

  test('a child whose stream fails is left out; the parent goes on', async () => {
    const follow: FollowAgent = () => scripted([result(0, 'lookup')], 0, new Error('unreadable'));
    const items = await collect(
      withSubAgents(scripted([started(0, 'a'), finished(1, 'a'), ended(2)]), follow, { mode: 'steps', cursor: '-1' }),
    );
    assert.deepEqual(items.map(label), [
      'parent:agent_started@0/0',
      'a:tool_result@0/0',
      'parent:agent_finished@1/1',
      'parent:conversation_ended@2/2',
    ]);
  });

  test('the parent failing ends the merge with its failure', async () => {
    const follow: FollowAgent = () => scripted([], 1_000);
    await assert.rejects(
      collect(
        withSubAgents(scripted([started(0, 'a')], 0, new Error('parent gone')), follow, {
          mode: 'steps',
          cursor: '-1',
        }),
      ),
      /parent gone/,
    );
  });

  test('at most `max` children are followed at once; the others still show in the parent', async () => {
    const followed: string[] = [];
    const follow: FollowAgent = (id) => {
      followed.push(id);
      return scripted([ended(0)], 10);
    };
    const parent = scripted([started(0, 'a'), started(1, 'b'), started(2, 'c'), ended(3)]);
    const items = await collect(withSubAgents(parent, follow, { mode: 'steps', cursor: '-1', max: 2 }));
    assert.deepEqual(followed, ['a', 'b']);
    assert.equal(items.filter((one) => one.event.type === 'agent_started').length, 3);
  });

  test('children open at a resumed cursor are followed from their start, under that cursor', async () => {
    const follow: FollowAgent = () => scripted([result(0, 'lookup'), ended(1)]);
    const parent = scripted([finished(5, 'a'), ended(6)], 20);
    const items = await collect(withSubAgents(parent, follow, { mode: 'steps', cursor: '4', open: ['a'] }));
    assert.deepEqual(items.map(label), [
      'a:tool_result@0/4',
      'parent:agent_finished@5/5',
      'parent:conversation_ended@6/6',
    ]);
  });

  test("isStep keeps calls, results and turns; drops text, thinking, a call's start, live events and the child's end", () => {
    assert.equal(isStep(result(0, 'x')), true);
    assert.equal(isStep(ended(0)), false);
    assert.equal(isStep(text(0, 'x')), false);
    assert.equal(
      isStep(item(0, { type: 'tool_call_started', call: 1, attempt: 1, block: 0, id: 't', name: 'x' })),
      false,
    );
    assert.equal(
      isStep(item(0, { type: 'tool_call_input', call: 1, attempt: 1, block: 0, id: 't', name: 'x', input: {} }, true)),
      false,
    );
    assert.equal(
      isStep(item(0, { type: 'tool_call_input', call: 1, attempt: 1, block: 0, id: 't', name: 'x', input: {} })),
      true,
    );
  });
});
