// The CLI with sub-agents (issue #33): `chat` shows a sub-agent's start, its steps indented under it and its end, as
// they come; `tree ID` prints the conversation and its sub-agents (status, model calls, cost, Web UI link), and
// `tree ID --json` the same as one document.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import { defineAgentTool } from '../../activities/agent-tool-definition';
import { demoTools } from '../../testing/demo-tools';
import { type Harness, startHarness, temporalAddress, uniquePrompt } from '../support/harness';
import { callsTools, says } from '../support/script-steps';

const CLI = join(__dirname, '..', '..', 'client', 'cli.ts');
const UI = 'http://ui.example.test:8233';
const run = promisify(execFile);

const researcher = defineAgentTool({
  name: 'research_company',
  description: 'Researches one company: its ticker symbol and current stock price.',
  agent: { tools: ['get_ticker_symbol', 'get_current_stock_price'] },
});

let h: Harness;
before(async () => {
  h = await startHarness({ tools: [...demoTools, researcher] });
});
after(async () => {
  await h?.close();
});

const env = () => ({
  ...process.env,
  TEMPORAL_ADDRESS: temporalAddress,
  TEMPORAL_TASK_QUEUE: h.taskQueue,
  TEMPORAL_UI_URL: UI,
});

/** `chat ID` with `stdin` piped in: its stdout once it exits at the end of the input. */
async function chat(id: string, stdin: string): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'chat', id, '--tools', 'research_company'], {
    env: env(),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(stdin);
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  assert.equal(code, 0, stderr);
  return stdout;
}

test("chat shows a sub-agent's start, its tool calls and answer indented under it, and its end", async () => {
  const prompt = uniquePrompt('Research General Motors for me');
  const task = uniquePrompt('Research General Motors');
  h.mock.script(prompt, [callsTools(['research_company', { task }]), says('General Motors looks fine.')]);
  h.mock.script(task, [
    callsTools(['get_ticker_symbol', { company_name: 'General Motors' }]),
    says('General Motors is GM.'),
  ]);
  const id = `cli-agents-chat-${Date.now()}`;
  const lines = (await chat(id, `${prompt}\n`)).split('\n');
  const child = `${id}/agent-`;
  const at = (pattern: RegExp) => {
    const index = lines.findIndex((line) => pattern.test(line));
    assert.ok(index >= 0, `no line matching ${pattern} in:\n${lines.join('\n')}`);
    return index;
  };
  const started = at(new RegExp(`^  ⤷ research_company \\(sub-agent ${child}[^)]*\\): `));
  const call = at(/^  → get_ticker_symbol\({"company_name":"General Motors"}\)$/);
  const result = at(/^    ← /);
  const answer = at(/^  answer: General Motors is GM\.$/);
  const finished = at(new RegExp(`^  ⤶ research_company \\(sub-agent ${child}[^)]*\\) \\w+`));
  const reply = at(/^claude> General Motors looks fine\.$/);
  assert.ok(started < call && call < result && result < answer && answer < finished && finished < reply);
  // The child's text is not streamed into the parent's reply.
  assert.ok(!lines.some((line) => line.startsWith('claude> General Motors is GM')));
});

test('tree prints the conversation and its sub-agents with status, model calls, cost and links', async () => {
  const prompt = uniquePrompt('Compare General Motors and Ford');
  const gmTask = uniquePrompt('Research GM');
  const fordTask = uniquePrompt('Research Ford');
  h.mock.script(prompt, [
    callsTools(['research_company', { task: gmTask }], ['research_company', { task: fordTask }]),
    says('Both are fine.'),
  ]);
  h.mock.script(gmTask, [callsTools(['get_ticker_symbol', { company_name: 'General Motors' }]), says('GM.')]);
  h.mock.script(fordTask, [says('F.')]);
  const id = `cli-agents-tree-${Date.now()}`;
  await h.conversations.sendMessage(id, prompt, { start: { tools: ['research_company'] } });

  const json = await run(process.execPath, ['--import', 'tsx', CLI, 'tree', id, '--json'], { env: env() });
  const tree = JSON.parse(json.stdout) as {
    id: string;
    status: string;
    modelCalls: number;
    url: string;
    children: { id: string; status: string; modelCalls: number; costUsd: number; children: unknown[] }[];
  };
  assert.equal(tree.id, id);
  assert.equal(tree.status, 'awaiting_user');
  assert.equal(tree.modelCalls, 2);
  assert.equal(tree.url, `${UI}/namespaces/default/workflows/${encodeURIComponent(id)}`);
  assert.deepEqual(
    tree.children.map((child) => [child.id.startsWith(`${id}/agent-`), child.modelCalls, child.children.length]),
    [
      [true, 2, 0],
      [true, 1, 0],
    ],
  );
  assert.ok(tree.children.every((child) => child.costUsd > 0));

  const text = (await run(process.execPath, ['--import', 'tsx', CLI, 'tree', id], { env: env() })).stdout;
  const lines = text.trimEnd().split('\n');
  assert.equal(lines.length, 3, text);
  assert.match(lines[0]!, new RegExp(`^${id}\\tawaiting_user\\t2 model calls\\t\\$[0-9.]+\\t${UI}/`));
  assert.match(lines[1]!, new RegExp(`^├─ ${id}/agent-\\S+\\t\\w+\\t2 model calls\\t\\$[0-9.]+\\t${UI}/`));
  assert.match(lines[2]!, new RegExp(`^└─ ${id}/agent-\\S+\\t\\w+\\t1 model call\\t\\$[0-9.]+\\t${UI}/`));
});
