// The chat page: plain script, no build step. It talks to the gateway's JSON endpoints and reads the conversation's
// event stream (server-sent events over fetch, so the bearer token can go in a header). On a dropped connection it
// reconnects with Last-Event-ID = the id of the last event it showed, so nothing is lost and nothing shows twice.
'use strict';

const $ = (selector) => document.querySelector(selector);
const page = {
  token: sessionStorage.getItem('gateway-token') || '',
  id: undefined,
  /** The id of the last event shown (the gateway resumes after it). */
  lastEventId: undefined,
  reading: undefined,
  /** Per model call, the highest attempt whose output was dropped. */
  dropped: new Map(),
  /** Per sub-agent, the highest offset of its stream shown (a reconnect follows a running one again from its start). */
  agentSeen: new Map(),
  config: undefined,
  /** The task queue's tools, asked of the gateway once (GET /api/tools): the default of a new conversation. */
  toolDefaults: undefined,
};

function setStatus(text) {
  $('#status').textContent = text;
}

async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: {
      authorization: `Bearer ${page.token}`,
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  if (response.status === 204) return undefined;
  const json = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(json.error ? `${json.error.message} (${json.error.code})` : response.statusText);
  return json;
}

// ── the log ───────────────────────────────────────────────────────────────────────────────────────

function item(className, attrs = {}) {
  const li = document.createElement('li');
  li.className = className;
  for (const [key, value] of Object.entries(attrs)) li.dataset[key] = String(value);
  $('#log').append(li);
  return li;
}

function outputOf(call, attempt, block) {
  return document.querySelector(`#log > li[data-call="${call}"][data-attempt="${attempt}"][data-block="${block}"]`);
}

function isDropped(call, attempt) {
  return attempt <= (page.dropped.get(call) ?? -1);
}

function toolCard(event) {
  let card = document.querySelector(`#log > li.tool[data-tool-id="${CSS.escape(event.id)}"]`);
  if (card) return card;
  card = item('tool', { call: event.call, attempt: event.attempt, block: event.block, toolId: event.id });
  const title = document.createElement('h3');
  title.textContent = `Tool call: ${event.name}`;
  const input = document.createElement('pre');
  input.className = 'input';
  input.setAttribute('aria-label', `${event.name} input`);
  input.textContent = '…';
  const result = document.createElement('div');
  result.className = 'result';
  result.textContent = 'Running…';
  card.append(title, input, result);
  return card;
}

function showApproval(approval) {
  const card = toolCard({ id: approval.callId, name: approval.tool, call: 0, attempt: 0, block: 0 });
  card.querySelector('pre.input').textContent = JSON.stringify(approval.input, null, 2);
  const box = document.createElement('div');
  box.className = 'approval';
  box.setAttribute('role', 'group');
  box.setAttribute('aria-label', `Approve ${approval.tool}?`);
  const question = document.createElement('p');
  question.textContent = `${approval.tool} needs your approval${approval.agent ? ` (asked by sub-agent ${approval.agent})` : ''}.`;
  const decide = (approve) => async () => {
    for (const button of box.querySelectorAll('button')) button.disabled = true;
    try {
      await api('POST', `/api/conversations/${encodeURIComponent(page.id)}/approvals`, {
        callId: approval.callId,
        argumentsDigest: approval.argumentsDigest,
        approve,
        ...(approval.agent && { agent: approval.agent }),
      });
    } catch (error) {
      setStatus(`Could not send the decision: ${error.message}`);
      for (const button of box.querySelectorAll('button')) button.disabled = false;
    }
  };
  const yes = document.createElement('button');
  yes.type = 'button';
  yes.textContent = 'Approve';
  yes.addEventListener('click', decide(true));
  const no = document.createElement('button');
  no.type = 'button';
  no.textContent = 'Reject';
  no.addEventListener('click', decide(false));
  box.append(question, yes, no);
  card.querySelector('.result').before(box);
  card.querySelector('.result').textContent = 'Waiting for approval.';
  setStatus(`${approval.tool} is waiting for your approval.`);
}

function apply(event) {
  switch (event.type) {
    case 'turn_started': {
      const li = item('user', { turn: event.turn });
      const text = document.createElement('span');
      text.className = 'text';
      text.textContent = event.text;
      li.append(text);
      addForkButton(li, event.turn);
      setStatus('Claude is working…');
      break;
    }
    case 'text': {
      if (isDropped(event.call, event.attempt)) break;
      let li = outputOf(event.call, event.attempt, event.block);
      if (!li) {
        if (event.text === '') break;
        li = item('assistant', { call: event.call, attempt: event.attempt, block: event.block });
        li.append(document.createElement('p'));
      }
      // Text says where it starts in its block: what is already shown is not shown again.
      const p = li.querySelector('p');
      const shown = p.textContent;
      if (event.at <= shown.length && event.at + event.text.length > shown.length) {
        p.textContent = shown.slice(0, event.at) + event.text;
      }
      break;
    }
    case 'thinking': {
      // The model's thinking, folded: a reader opens it to read it (a redacted block has nothing to show).
      if (isDropped(event.call, event.attempt)) break;
      let li = outputOf(event.call, event.attempt, event.block);
      if (!li) {
        li = item('thinking', { call: event.call, attempt: event.attempt, block: event.block });
        const details = document.createElement('details');
        const summary = document.createElement('summary');
        summary.textContent = event.redacted ? 'Thinking (redacted)' : 'Thinking';
        details.append(summary, document.createElement('p'));
        li.append(details);
      }
      const p = li.querySelector('p');
      const shown = p.textContent;
      if (event.at <= shown.length && event.at + event.text.length > shown.length) {
        p.textContent = shown.slice(0, event.at) + event.text;
      }
      break;
    }
    case 'tool_call_started':
    case 'tool_call_input': {
      if (isDropped(event.call, event.attempt)) break;
      const card = toolCard(event);
      if (event.type === 'tool_call_input')
        card.querySelector('pre.input').textContent = JSON.stringify(event.input, null, 2);
      break;
    }
    case 'server_tool_call':
    case 'server_tool_result': {
      // A server tool the API ran (web search, web fetch, code execution, tool search): one line each.
      if (isDropped(event.call, event.attempt)) break;
      if (outputOf(event.call, event.attempt, event.block)) break;
      const li = item('server-tool', { call: event.call, attempt: event.attempt, block: event.block });
      li.textContent =
        event.type === 'server_tool_call'
          ? `${event.name} ${JSON.stringify(event.input)}`
          : `${event.name} ${event.error ? `failed: ${event.error}` : 'answered'}`;
      break;
    }
    case 'model_call_started':
      // A call dropped whole and started again went to a fallback model: its attempts count from 1 again.
      page.dropped.delete(event.call);
      break;
    case 'model_output_discarded': {
      const upTo = event.attempt ?? Number.POSITIVE_INFINITY;
      page.dropped.set(event.call, Math.max(page.dropped.get(event.call) ?? -1, upTo));
      for (const li of document.querySelectorAll(`#log > li[data-call="${event.call}"]`)) {
        if (Number(li.dataset.attempt) <= upTo) li.remove();
      }
      break;
    }
    case 'approval_requested':
      showApproval(event.approval);
      break;
    case 'agent_started':
      startAgent(event, undefined);
      break;
    case 'agent_finished':
      finishAgent(event);
      break;
    case 'approval_settled': {
      const card = document.querySelector(`#log > li.tool[data-tool-id="${CSS.escape(event.callId)}"]`);
      const box = card && card.querySelector('.approval');
      if (box)
        box.replaceChildren(Object.assign(document.createElement('p'), { textContent: `Decision: ${event.outcome}.` }));
      setStatus('Claude is working…');
      break;
    }
    case 'tool_result': {
      const card = document.querySelector(`#log > li.tool[data-tool-id="${CSS.escape(event.id)}"]`);
      if (!card) break;
      const result = card.querySelector('.result');
      result.replaceChildren();
      result.classList.toggle('error', event.isError);
      const label = document.createElement('strong');
      label.textContent = event.isError ? 'Error: ' : 'Result: ';
      const pre = document.createElement('pre');
      pre.textContent = event.content;
      result.append(label, pre);
      break;
    }
    case 'turn_finished':
      setStatus(event.status === 'awaiting_user' ? 'Your turn.' : `The conversation ended (${event.status}).`);
      break;
    case 'turn_failed': {
      const li = item('failed');
      li.textContent = `The turn failed: ${event.failure.message}`;
      setStatus('The turn failed; you can write again.');
      break;
    }
    case 'conversation_ended':
      setStatus(`The conversation ended (${event.status}).`);
      break;
    default:
      break;
  }
}

// ── sub-agents ────────────────────────────────────────────────────────────────────────────────────
// A sub-agent's section sits in the card of the tool call that started it: its start, its steps (tool calls and
// results, its answer; a sub-agent's own sub-agents nested the same way) and its end. The stream carries its steps,
// not its text (?agents=steps).

function agentSection(agentId) {
  return document.querySelector(`#log section.agent[data-agent="${CSS.escape(agentId)}"]`);
}

/** A section for sub-agent `event.agentId` started by call `event.callId`, under `parent` (a section, or the log). */
function startAgent(event, within) {
  let section = agentSection(event.agentId);
  if (section) return section;
  section = document.createElement('section');
  section.className = 'agent';
  section.dataset.agent = event.agentId;
  section.setAttribute('aria-label', `Sub-agent ${event.tool}`);
  const title = document.createElement('h4');
  title.textContent = `Sub-agent ${event.tool} (${event.agentId}): running…`;
  const task = document.createElement('p');
  task.className = 'task';
  task.textContent = event.task ?? '';
  const steps = document.createElement('ol');
  steps.className = 'steps';
  section.append(title, task, steps);
  const card = within
    ? within.querySelector(`:scope > ol.steps > li[data-tool-id="${CSS.escape(event.callId)}"]`)
    : document.querySelector(`#log > li.tool[data-tool-id="${CSS.escape(event.callId)}"]`);
  if (card) card.append(section);
  else if (within) within.querySelector(':scope > ol.steps').append(section);
  else item('tool').append(section);
  return section;
}

function finishAgent(event) {
  const section = agentSection(event.agentId);
  if (!section) return;
  const cost = typeof event.costUsd === 'number' ? `, $${event.costUsd.toFixed(4)}` : '';
  section.querySelector(':scope > h4').textContent =
    `Sub-agent ${event.tool} (${event.agentId}): ${event.status}${cost}`;
  section.classList.toggle('error', event.isError);
  section.dataset.status = event.status;
}

/** One of sub-agent `agentId`'s events (at `offset` of its own stream). */
function applyAgent(agentId, offset, event) {
  if (offset <= (page.agentSeen.get(agentId) ?? -1)) return; // shown before a reconnect
  page.agentSeen.set(agentId, offset);
  const section = agentSection(agentId) || startAgent({ agentId, tool: 'agent', callId: '', task: '' }, undefined);
  const steps = section.querySelector(':scope > ol.steps');
  const step = (className, text, attrs = {}) => {
    const li = document.createElement('li');
    li.className = className;
    for (const [key, value] of Object.entries(attrs)) li.dataset[key] = String(value);
    li.textContent = text;
    steps.append(li);
    return li;
  };
  switch (event.type) {
    case 'tool_call_input':
      step('step call', `→ ${event.name}(${JSON.stringify(event.input)})`, { toolId: event.id });
      break;
    case 'tool_result': {
      const call = steps.querySelector(`:scope > li[data-tool-id="${CSS.escape(event.id)}"]`);
      const result = document.createElement('div');
      result.className = event.isError ? 'result error' : 'result';
      result.textContent = `${event.isError ? '✗' : '←'} ${event.content.split('\n')[0].slice(0, 300)}`;
      if (call) call.append(result);
      else step('step result', result.textContent);
      break;
    }
    case 'agent_started':
      startAgent(event, section);
      break;
    case 'agent_finished':
      finishAgent(event);
      break;
    case 'approval_requested':
      step('step approval', `Waits for an approval of ${event.approval.tool}.`);
      break;
    case 'turn_finished':
      step('step answer', `Answer: ${event.text}`);
      break;
    case 'turn_failed':
      step('step failed', `Failed: ${event.failure.message}`);
      break;
    default:
      break;
  }
}

// ── the event stream ──────────────────────────────────────────────────────────────────────────────

function handleBlock(block) {
  let id;
  let data = '';
  for (const line of block.split('\n')) {
    if (line.startsWith('id:')) id = line.slice(3).trim();
    else if (line.startsWith('data:')) data += line.slice(5).trim();
  }
  if (id === undefined || data === '') return undefined;
  page.lastEventId = id;
  const { event, agent, offset } = JSON.parse(data);
  if (agent !== undefined) {
    applyAgent(agent, offset, event);
    return undefined; // a sub-agent's end is not the conversation's
  }
  apply(event);
  return event;
}

async function readEvents(id, signal) {
  let ended = false;
  while (!ended && !signal.aborted) {
    try {
      const headers = { authorization: `Bearer ${page.token}`, accept: 'text/event-stream' };
      if (page.lastEventId !== undefined) headers['last-event-id'] = page.lastEventId;
      const response = await fetch(`/api/conversations/${encodeURIComponent(id)}/events?agents=steps`, {
        headers,
        signal,
      });
      if (!response.ok) {
        const json = await response.json().catch(() => ({}));
        setStatus(`Cannot read the conversation: ${json.error ? json.error.message : response.statusText}`);
        if (response.status === 401 || response.status === 400) return;
      } else {
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let end;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const event = handleBlock(buffer.slice(0, end));
            buffer = buffer.slice(end + 2);
            if (event && event.type === 'conversation_ended') ended = true;
          }
        }
      }
    } catch {
      if (signal.aborted) return; // otherwise the connection dropped: reconnect below
    }
    if (!ended && !signal.aborted) {
      document.body.dataset.reconnects = String(Number(document.body.dataset.reconnects || 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

// ── forks (docs/fork.md) ──────────────────────────────────────────────────────────────────────────

/** "Fork from here" on a user message: a new conversation with everything before this turn. */
function addForkButton(li, turn) {
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'fork';
  button.textContent = 'fork from here';
  button.title = `A new conversation with everything before turn ${turn}, to send this or another message`;
  button.addEventListener('click', () => void forkFrom(turn, li));
  li.append(button);
}

/**
 * Forks the open conversation before `turn` (POST /api/conversations/:id/fork) and opens the fork: what the page showed
 * before that turn stays shown (the fork's own event log starts with its next message), under a note naming the origin.
 */
async function forkFrom(turn, li) {
  const origin = page.id;
  try {
    const fork = await api('POST', `/api/conversations/${encodeURIComponent(origin)}/fork`, {
      at: { beforeTurn: turn },
    });
    const kept = [];
    for (const node of $('#log').children) {
      if (node === li) break;
      const copy = node.cloneNode(true);
      // A copy's buttons lost their handlers: an approval is the origin's; a fork button is made again.
      copy.querySelectorAll('button').forEach((button) => button.remove());
      // The fork numbers its model calls from 1 again: a copy answers to none of them.
      for (const key of ['call', 'attempt', 'block', 'toolId']) delete copy.dataset[key];
      if (copy.classList.contains('user') && copy.dataset.turn) addForkButton(copy, Number(copy.dataset.turn));
      kept.push(copy);
    }
    $('#log').replaceChildren(...kept);
    const note = item('note', { forkedFrom: origin });
    note.textContent = `Forked from ${origin} before turn ${turn}.`;
    await open(fork.id);
    setStatus(`This is ${fork.id}, a fork of ${origin} before turn ${turn}: write its turn ${fork.turn}.`);
  } catch (error) {
    setStatus(`Not forked: ${error.message}`);
  }
}

async function open(id) {
  if (page.reading) page.reading.abort();
  page.id = id;
  page.lastEventId = undefined;
  page.dropped.clear();
  page.agentSeen.clear();
  $('#conversation-id').value = id;
  page.reading = new AbortController();
  void readEvents(id, page.reading.signal);
  page.config ??= await api('GET', '/api/config').catch(() => undefined);
  const link = $('#web-ui-link');
  if (page.config && page.config.temporalUiUrl) {
    const ns = encodeURIComponent(page.config.namespace);
    link.href = `${page.config.temporalUiUrl.replace(/\/$/, '')}/namespaces/${ns}/workflows/${encodeURIComponent(id)}`;
    link.hidden = false;
  }
}

/**
 * Fills the tools field with what the task queue's workers run, as the CLI defaults to, unless the person has typed
 * in it. A gateway that cannot say leaves the field empty: the conversation then starts without tools.
 */
async function fillToolDefaults() {
  page.toolDefaults ??= api('GET', '/api/tools').then(
    (catalog) => catalog.tools,
    (error) => {
      page.toolDefaults = undefined; // asked again next time (a wrong token, a worker not up yet)
      throw error;
    },
  );
  const tools = await page.toolDefaults.catch(() => undefined);
  const field = $('#tools');
  if (tools && !field.dataset.edited && !field.value.trim()) field.value = tools.join(', ');
}

// ── forms ─────────────────────────────────────────────────────────────────────────────────────────

$('#tools').addEventListener('input', () => {
  $('#tools').dataset.edited = 'true';
});

$('#token').value = page.token;
if (page.token) void fillToolDefaults();

$('#connect').addEventListener('submit', (event) => {
  event.preventDefault();
  page.token = $('#token').value.trim();
  sessionStorage.setItem('gateway-token', page.token);
  void fillToolDefaults();
  const id = $('#conversation-id').value.trim();
  if (id) {
    $('#log').replaceChildren();
    void open(id);
    setStatus(`Reading conversation ${id}.`);
  } else {
    setStatus('Write a message to start a new conversation.');
  }
});

$('#composer').addEventListener('submit', async (event) => {
  event.preventDefault();
  const text = $('#message').value.trim();
  if (!text) return;
  page.token = $('#token').value.trim();
  sessionStorage.setItem('gateway-token', page.token);
  try {
    if (!page.id) {
      await fillToolDefaults();
      const tools = $('#tools')
        .value.split(',')
        .map((name) => name.trim())
        .filter(Boolean);
      const requested = $('#conversation-id').value.trim();
      const started = await api('POST', '/api/conversations', {
        ...(requested && { id: requested }),
        options: { tools },
        message: text,
      });
      $('#log').replaceChildren();
      await open(started.id);
    } else {
      await api('POST', `/api/conversations/${encodeURIComponent(page.id)}/messages`, { text });
    }
    $('#message').value = '';
    setStatus('Claude is working…');
  } catch (error) {
    setStatus(`Not sent: ${error.message}`);
  }
});
