// A parent's event stream with its sub-agents' (issue #33), end to end (real dev server, real worker, the SDK against
// the local Messages API): the reader follows each child's own stream from the parent's `agent_started`, tags its
// events with the child's id, gives its steps (not its tokens) by default and everything with `agents: 'all'`, none
// with `'none'`; a child's steps come before the parent's `agent_finished`; resuming after a cursor follows a child
// that was running there again. The gateway's SSE stream does the same with `?agents=`.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { defineAgentTool } from '../../activities/agent-tool-definition';
import type { EventsOptions } from '../../client/call-options';
import type { StreamItem } from '../../streaming/stream-events';
import { type Gateway, startGateway } from '../../gateway/gateway-server';
import { demoTools } from '../../testing/demo-tools';
import { type Harness, namespace, startHarness, uniquePrompt } from '../support/harness';
import { callsTools, says } from '../support/script-steps';

const researcher = defineAgentTool({
  name: 'research_company',
  description: 'Researches one company: its ticker symbol and current stock price.',
  agent: { tools: ['get_ticker_symbol', 'get_current_stock_price'] },
});

const TOKEN = 'sub-agent-streams-token-0123456789';
const teamLead = defineAgentTool({
  name: 'lead_research',
  description: 'Leads research: asks a researcher.',
  agent: { tools: ['research_company'] },
});

let h: Harness;
let gateway: Gateway;
before(async () => {
  h = await startHarness({ tools: [...demoTools, researcher, teamLead] });
  gateway = await startGateway({ conversations: h.conversations, token: TOKEN, namespace });
});
after(async () => {
  await gateway?.close();
  await h?.close();
});

/** Scripts a parent that asks one researcher, and the child's two tool calls and answer; returns the prompt. */
function scriptResearch(name: string): string {
  const prompt = uniquePrompt(`Research ${name} for me`);
  const task = uniquePrompt(`Research ${name}`);
  h.mock.script(prompt, [callsTools(['research_company', { task }]), says(`${name} looks fine.`)]);
  h.mock.script(task, [
    callsTools(['get_ticker_symbol', { company_name: name }]),
    callsTools(['get_current_stock_price', { symbol: 'GM' }]),
    { reply: { content: [{ type: 'text', text: `${name} (GM) trades at $38.50.` }], stop_reason: 'end_turn' } },
  ]);
  return prompt;
}

/** A conversation's events from the start until its first turn's end (its own), with these options. */
async function firstTurn(id: string, options: EventsOptions = {}): Promise<StreamItem[]> {
  const items: StreamItem[] = [];
  const signal = AbortSignal.timeout(60_000);
  for await (const item of h.conversations.events(id, { fromOffset: 0, ...options, signal })) {
    items.push(item);
    if (item.agent === undefined && item.event.type === 'turn_finished') break;
  }
  return items;
}

const kinds = (items: StreamItem[]) => items.map((item) => item.event.type);

describe('sub-agent streams', () => {
  test("streamMessage shows the child's start, its tool calls and results, its answer, and then its end", async () => {
    const prompt = scriptResearch('General Motors');
    const id = `agent-streams-steps-${Date.now()}`;
    const items: StreamItem[] = [];
    for await (const item of h.conversations.streamMessage(id, prompt, { start: { tools: ['research_company'] } })) {
      items.push(item);
    }
    const started = items.find((item) => item.event.type === 'agent_started');
    assert.ok(started?.event.type === 'agent_started');
    const child = started.event.agentId;
    const childItems = items.filter((item) => item.agent === child);
    // Its steps: two tool calls with their input and results, its turn's end with the answer.
    assert.deepEqual(
      childItems
        .filter((item) => item.event.type === 'tool_call_input' || item.event.type === 'tool_result')
        .map((item) => `${item.event.type}:${(item.event as { name: string }).name}`),
      [
        'tool_call_input:get_ticker_symbol',
        'tool_result:get_ticker_symbol',
        'tool_call_input:get_current_stock_price',
        'tool_result:get_current_stock_price',
      ],
    );
    const childTurn = childItems.find((item) => item.event.type === 'turn_finished');
    assert.equal(
      childTurn?.event.type === 'turn_finished' && childTurn.event.text,
      'General Motors (GM) trades at $38.50.',
    );
    // No tokens by default.
    assert.deepEqual(
      childItems.filter((item) => item.live || item.event.type === 'text' || item.event.type === 'tool_call_started'),
      [],
    );
    // Every tagged event names this child, and every untagged one is the parent's: only the parent's events move its
    // cursor (a child's carries the parent's cursor as it stood).
    assert.ok(items.every((item) => item.agent === undefined || item.agent === child));
    const parentCursors = new Set(items.filter((item) => item.agent === undefined).map((item) => item.cursor));
    assert.ok(childItems.every((item) => parentCursors.has(item.cursor)));
    // The child's steps come between its start and its end in the parent's stream.
    const at = (item: StreamItem | undefined) => items.indexOf(item!);
    const finished = items.find((item) => item.event.type === 'agent_finished');
    assert.ok(at(started) < at(childItems[0]) && at(childTurn) < at(finished));
    // The stream ends with the parent's own turn.
    const last = items.at(-1)!;
    assert.equal(last.agent, undefined);
    assert.equal(last.event.type === 'turn_finished' && last.event.text, 'General Motors looks fine.');
  });

  test("agents: 'all' adds the child's text; 'none' leaves the child out", async () => {
    const prompt = scriptResearch('Ford');
    const id = `agent-streams-all-${Date.now()}`;
    await h.conversations.sendMessage(id, prompt, { start: { tools: ['research_company'] } });

    const all = await firstTurn(id, { agents: 'all' });
    const child = all.find((item) => item.agent !== undefined)?.agent;
    assert.ok(child);
    const text = all
      .filter((item) => item.agent === child && item.event.type === 'text')
      .map((item) => (item.event as { text: string }).text)
      .join('');
    assert.equal(text, 'Ford (GM) trades at $38.50.');

    const none = await firstTurn(id, { agents: 'none' });
    assert.deepEqual(
      none.filter((item) => item.agent !== undefined),
      [],
    );
    assert.ok(kinds(none).includes('agent_started') && kinds(none).includes('agent_finished'));
  });

  test('a reader that resumes after a cursor where a child ran follows that child again from its start', async () => {
    const prompt = scriptResearch('Tesla');
    const id = `agent-streams-resume-${Date.now()}`;
    await h.conversations.sendMessage(id, prompt, { start: { tools: ['research_company'] } });
    const first = await firstTurn(id);
    const started = first.find((item) => item.event.type === 'agent_started')!;

    const resumed = await firstTurn(id, { after: started.cursor });
    assert.equal(
      resumed.find((item) => item.event.type === 'agent_started'),
      undefined,
    ); // the parent's resume holds
    const child = resumed.filter((item) => item.agent !== undefined);
    assert.deepEqual(
      child.map((item) => `${item.event.type}:${item.offset}`),
      first.filter((item) => item.agent !== undefined).map((item) => `${item.event.type}:${item.offset}`),
    );
    assert.ok(child.length >= 5);
  });
});

interface Sse {
  id: string;
  event: string;
  data: StreamItem;
}

/** The gateway's server-sent events of `id` until the parent's first turn ends. */
async function sseFirstTurn(id: string, query: string, headers: Record<string, string> = {}): Promise<Sse[]> {
  const response = await fetch(`${gateway.url}/api/conversations/${id}/events${query}`, {
    headers: { authorization: `Bearer ${TOKEN}`, ...headers },
    signal: AbortSignal.timeout(60_000),
  });
  assert.equal(response.status, 200);
  const events: Sse[] = [];
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return events;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const field = (name: string) => block.match(new RegExp(`^${name}: ?(.*)$`, 'm'))?.[1];
      const eventId = field('id');
      if (eventId === undefined) continue;
      const sse = { id: eventId, event: field('event')!, data: JSON.parse(field('data')!) as StreamItem };
      events.push(sse);
      if (sse.data.agent === undefined && sse.event === 'turn_finished') {
        await reader.cancel();
        return events;
      }
    }
  }
}

test("a child's own sub-agent is followed too, its events tagged with its own id", async () => {
  const prompt = uniquePrompt('Lead research on General Motors');
  const leadTask = uniquePrompt('Lead the General Motors research');
  const task = uniquePrompt('Research General Motors in depth');
  h.mock.script(prompt, [callsTools(['lead_research', { task: leadTask }]), says('Done.')]);
  h.mock.script(leadTask, [callsTools(['research_company', { task }]), says('The researcher says GM.')]);
  h.mock.script(task, [callsTools(['get_ticker_symbol', { company_name: 'General Motors' }]), says('GM.')]);
  const id = `agent-streams-nested-${Date.now()}`;
  const items: StreamItem[] = [];
  for await (const item of h.conversations.streamMessage(id, prompt, { start: { tools: ['lead_research'] } })) {
    items.push(item);
  }
  const lead = items.find((item) => item.event.type === 'agent_started' && item.agent === undefined);
  const leadId = lead?.event.type === 'agent_started' ? lead.event.agentId : '';
  const nested = items.find((item) => item.event.type === 'agent_started' && item.agent === leadId);
  const nestedId = nested?.event.type === 'agent_started' ? nested.event.agentId : '';
  assert.ok(nestedId.startsWith(`${leadId}/agent-`), nestedId);
  const answers = items
    .filter((item) => item.event.type === 'turn_finished')
    .map((item) => [item.agent ?? 'parent', (item.event as { text: string }).text]);
  assert.deepEqual(answers, [
    [nestedId, 'GM.'],
    [leadId, 'The researcher says GM.'],
    ['parent', 'Done.'],
  ]);
  assert.ok(
    items.some(
      (item) => item.agent === nestedId && item.event.type === 'tool_result' && item.event.name === 'get_ticker_symbol',
    ),
  );
});

test('events refuses an `agents` that is not steps, all or none, before anything is read', () => {
  for (const agents of ['STEPS', '', 'tokens', 1, null]) {
    assert.throws(
      () => h.conversations.events('any-conversation', { agents: agents as 'all' }),
      (err: { code?: string; message?: string }) =>
        err.code === 'invalid_options' && /agents is steps, all or none/.test(err.message ?? ''),
    );
  }
});

describe('the gateway with ?agents=', () => {
  test("the SSE stream carries the child's steps tagged with its id (steps by default), and none with agents=none", async () => {
    const prompt = scriptResearch('Rivian');
    const id = `agent-streams-gateway-${Date.now()}`;
    await h.conversations.sendMessage(id, prompt, { start: { tools: ['research_company'] } });

    const steps = await sseFirstTurn(id, '?from=0');
    const started = steps.find((sse) => sse.event === 'agent_started')!;
    assert.ok(started.data.event.type === 'agent_started');
    const child = started.data.event.agentId;
    const childEvents = steps.filter((sse) => sse.data.agent === child);
    assert.deepEqual(
      childEvents.filter((sse) => sse.event === 'tool_result').map((sse) => (sse.data.event as { name: string }).name),
      ['get_ticker_symbol', 'get_current_stock_price'],
    );
    assert.deepEqual(
      childEvents.filter((sse) => sse.event === 'text'),
      [],
    );
    // A child's event's id is the parent's cursor as it stood: one of the parent's own ids.
    const parentIds = new Set(steps.filter((sse) => sse.data.agent === undefined).map((sse) => sse.id));
    assert.ok(childEvents.length > 0 && childEvents.every((sse) => parentIds.has(sse.id)));

    const all = await sseFirstTurn(id, '?from=0&agents=all');
    assert.equal(
      all
        .filter((sse) => sse.data.agent === child && sse.event === 'text')
        .map((sse) => (sse.data.event as { text: string }).text)
        .join(''),
      'Rivian (GM) trades at $38.50.',
    );
    const none = await sseFirstTurn(id, '?from=0&agents=none');
    assert.deepEqual(
      none.filter((sse) => sse.data.agent !== undefined),
      [],
    );

    // Reconnecting with Last-Event-ID at the child's start: the parent resumes after it, the child is followed again.
    const resumed = await sseFirstTurn(id, '', { 'last-event-id': started.id });
    assert.equal(
      resumed.find((sse) => sse.event === 'agent_started'),
      undefined,
    );
    assert.deepEqual(
      resumed.filter((sse) => sse.data.agent === child).map((sse) => `${sse.event}:${sse.data.offset}`),
      childEvents.map((sse) => `${sse.event}:${sse.data.offset}`),
    );
  });
});
