// Hostile input, entry point: what tools and MCP servers send back. A tool's result or error, an MCP server's result,
// JSON-RPC error, progress notification or tool list is input the orchestrator does not control, and it goes into the
// transcript (resent with every later call), the history and heartbeat details. Tried: errors of 600,000 characters
// (thrown, ToolError, a thrown string, a JSON-RPC error), lone surrogates and NUL, results that are huge, 10,000 deep,
// circular, BigInt, functions, undefined; an MCP server whose tool list never ends and whose progress messages are
// 3 MB. The outcome each time: the transcript holds a capped, well-formed text, the next request is accepted, no
// workflow task fails and the worker goes on serving.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { z } from 'zod';
import { defineTool, ToolError } from '../../activities/tool-definition';
import type { ScriptStep } from '../../testing/messages-api/types';
import { type Harness, startHarness, uniquePrompt } from '../support/harness';
import { assertUnharmed, failedWorkflowTasks } from '../support/hostile';
import { callsTools } from '../support/script-steps';

const HUGE = 600_000;
/** The cap of a text in the transcript (limits.maxResultChars, and the worker's maxOutputChars): both default. */
const CAP = 100_000;
const MARKER = /\n\[output truncated: \d+ of \d+ characters omitted\]$/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

type Odd = Record<string, unknown> & { self?: unknown };
const ODD_VALUES = {
  'huge-string': () => 'R'.repeat(HUGE),
  'huge-object': () => ({ items: Array.from({ length: 60_000 }, (_, i) => `item-${i}`) }),
  deep: () => {
    let value: Odd = { leaf: true };
    for (let i = 0; i < 10_000; i++) value = { a: value };
    return value;
  },
  'lone-surrogate': () => 'half a pair: \ud800, the other half: \udc00.',
  nul: () => 'before\u0000after',
  circular: () => {
    const value: Odd = { name: 'loop' };
    value.self = value;
    return value;
  },
  bigint: () => ({ n: 10n ** 30n }),
  function: () => () => 42,
  undefined: () => undefined,
} as const;
type OddKind = keyof typeof ODD_VALUES;

const oddOutput = defineTool({
  name: 'odd_output',
  description: 'Returns an odd value.',
  input: z.object({ kind: z.enum(Object.keys(ODD_VALUES) as [OddKind, ...OddKind[]]) }),
  retryInitialInterval: '100 ms',
  run: ({ kind }) => ODD_VALUES[kind](),
});

const FAILURES = {
  'huge-error': () => new Error('E'.repeat(HUGE)),
  'huge-tool-error': () => new ToolError('HugeFailure', 'E'.repeat(HUGE)),
  'huge-tool-error-name': () => new ToolError('N'.repeat(HUGE), 'a short message'),
  'odd-error': () => new Error('lone \ud800 surrogate, NUL \u0000 here'),
  'odd-tool-error': () => new ToolError('OddFailure', 'lone \udc00 surrogate, NUL \u0000 here'),
  'huge-string-thrown': () => 'S'.repeat(HUGE),
} as const;
type FailureKind = keyof typeof FAILURES;

const failingTool = defineTool({
  name: 'failing_tool',
  description: 'Fails.',
  input: z.object({ kind: z.enum(Object.keys(FAILURES) as [FailureKind, ...FailureKind[]]) }),
  maxAttempts: 1,
  run: ({ kind }) => {
    throw FAILURES[kind]();
  },
});

let h: Harness;
let pageLog: string;
before(async () => {
  pageLog = join(mkdtempSync(join(tmpdir(), 'hostile-mcp-')), 'pages.log');
  const hostile = {
    command: process.execPath,
    args: ['--import', 'tsx', require.resolve('../support/hostile-mcp-server.ts')],
    timeout: '30 seconds',
    heartbeatTimeout: '5 seconds',
    maxAttempts: 1,
  };
  h = await startHarness({
    tools: [oddOutput, failingTool],
    mcpServers: {
      everything: {
        command: process.execPath,
        args: [require.resolve('@modelcontextprotocol/server-everything/dist/index.js')],
        maxAttempts: 1,
      },
      hostile,
      endless: { ...hostile, env: { HOSTILE_MCP_PAGES: 'endless', HOSTILE_MCP_PAGE_LOG: pageLog } },
    },
  });
});
after(async () => {
  await h?.close();
});

const DONE: ScriptStep = { reply: { content: [{ type: 'text', text: 'Done.' }], stop_reason: 'end_turn' } };

/** The text of a tool_result block, whatever its shape. */
function resultText(block: { content?: unknown }): string {
  const content = block.content;
  if (typeof content === 'string') return content;
  return (content as { type: string; text?: string }[]).map((b) => b.text ?? `[${b.type}]`).join('\n');
}

/**
 * One tool call the model asks for, then "Done.": the tool_result the model read in the next request and the one the
 * transcript keeps, after checking that the turn ended normally and the conversation came to no harm.
 */
async function callTool(
  label: string,
  name: string,
  input: Record<string, unknown>,
  options: Record<string, unknown> = { tools: [name] },
) {
  const prompt = uniquePrompt(`Call ${name} (${label}).`);
  h.mock.script(prompt, [callsTools([name, input]), DONE]);
  const id = `hostile-output-${label}-${prompt.slice(-9, -1)}`;
  // A worker that died on the result would leave the call waiting: it fails instead.
  const reply = await h.conversations.sendMessage(id, prompt, { start: options, timeoutMs: 60_000 });
  assert.equal(reply.status, 'awaiting_user', `${label}: the turn ends normally`);
  assert.equal(reply.text, 'Done.', `${label}: the model read the result and answered`);
  const requests = h.mock.requestsFor(prompt);
  assert.equal(requests.length, 2);
  const sent = requests[1]!.body.messages.at(-1).content[0];
  const kept = (await h.conversations.getTranscript(id)).at(-2)!.content as { type: string; content?: unknown }[];
  assert.equal(kept[0]!.type, 'tool_result');
  await assertUnharmed(h, id);
  return { id, sent: resultText(sent), isError: sent.is_error === true, kept: resultText(kept[0]!) };
}

function assertCapped(text: string, what: string) {
  assert.ok(text.length <= CAP + 200, `${what}: ${text.length} characters`);
  assert.match(text, MARKER, `${what}: the cut is marked`);
}

describe('a tool whose error is huge or odd', () => {
  for (const kind of ['huge-error', 'huge-tool-error', 'huge-string-thrown'] as const) {
    test(`${kind}: the model reads it capped, the transcript keeps it capped`, async () => {
      const { sent, kept, isError } = await callTool(kind, 'failing_tool', { kind });
      assert.ok(isError);
      assertCapped(sent, 'sent');
      assertCapped(kept, 'kept');
    });
  }

  test('a ToolError whose name is huge: the name is cut short', async () => {
    const { sent, isError } = await callTool('huge-name', 'failing_tool', { kind: 'huge-tool-error-name' });
    assert.ok(isError);
    assert.ok(sent.length < 1_000, `${sent.length} characters`);
    assert.match(sent, /a short message/);
  });

  for (const kind of ['odd-error', 'odd-tool-error'] as const) {
    test(`${kind}: a lone surrogate becomes U+FFFD, NUL stays; the worker does not choke on it`, async () => {
      const { sent, kept, isError } = await callTool(kind, 'failing_tool', { kind });
      assert.ok(isError);
      for (const text of [sent, kept]) {
        assert.doesNotMatch(text, LONE_SURROGATE);
        assert.match(text, /lone \ufffd surrogate, NUL \u0000 here/);
      }
    });
  }
});

describe('a tool whose result is huge, deep or odd', () => {
  test('huge: cut to the cap, marked', async () => {
    const { sent, kept, isError } = await callTool('huge-string', 'odd_output', { kind: 'huge-string' });
    assert.ok(!isError);
    assertCapped(sent, 'sent');
    assertCapped(kept, 'kept');
    const object = await callTool('huge-object', 'odd_output', { kind: 'huge-object' });
    assertCapped(object.sent, 'a huge object, as JSON');
  });

  test('10,000 deep: too deep for JSON, an error the model reads; the tool is not run again for it', async () => {
    const { id, sent, isError } = await callTool('deep', 'odd_output', { kind: 'deep' });
    assert.ok(isError);
    assert.match(
      sent,
      /^UnrenderableResult: odd_output returned a value that cannot be written as JSON \(Maximum call stack size exceeded\)/,
    );
    assert.equal(h.executions(id, 'odd_output').filter((e) => e.event === 'start').length, 1);
  });

  test('lone surrogates become U+FFFD; NUL stays', async () => {
    const surrogate = await callTool('surrogate', 'odd_output', { kind: 'lone-surrogate' });
    assert.equal(surrogate.sent, 'half a pair: \ufffd, the other half: \ufffd.');
    assert.equal(surrogate.kept, surrogate.sent);
    const nul = await callTool('nul', 'odd_output', { kind: 'nul' });
    assert.equal(nul.sent, 'before\u0000after');
  });

  test('circular: an error the model reads, and the tool is not run again for it', async () => {
    const { id, sent, isError } = await callTool('circular', 'odd_output', { kind: 'circular' });
    assert.ok(isError);
    assert.match(sent, /^UnrenderableResult: odd_output returned a value that cannot be written as JSON/);
    assert.equal(h.executions(id, 'odd_output').filter((e) => e.event === 'start').length, 1);
  });

  test('BigInt: as its decimal digits; a function and undefined: null', async () => {
    assert.equal(
      (await callTool('bigint', 'odd_output', { kind: 'bigint' })).sent,
      '{"n":"1000000000000000000000000000000"}',
    );
    assert.equal((await callTool('function', 'odd_output', { kind: 'function' })).sent, 'null');
    assert.equal((await callTool('undefined', 'odd_output', { kind: 'undefined' })).sent, 'null');
  });
});

describe('an MCP server whose answers are huge or odd', () => {
  test('server-everything: echo of 600,000 characters, capped', async () => {
    const { sent, kept, isError } = await callTool(
      'mcp-echo',
      'everything__echo',
      { message: 'M'.repeat(HUGE) },
      { mcpServers: ['everything'] },
    );
    assert.ok(!isError);
    assertCapped(sent, 'sent');
    assertCapped(kept, 'kept');
  });

  test('server-everything: a tool error that repeats a 600,000-character argument twice, capped', async () => {
    const { sent, isError } = await callTool(
      'mcp-gzip',
      'everything__gzip-file-as-resource',
      { data: `ftp://example.com/${'x'.repeat(HUGE)}` },
      { mcpServers: ['everything'] },
    );
    assert.ok(isError);
    assert.match(sent, /^Error processing file ftp:\/\/example\.com\/xxxx/);
    assertCapped(sent, 'sent');
  });

  test('a JSON-RPC error of 600,000 characters: capped', async () => {
    const { sent, kept, isError } = await callTool(
      'mcp-huge-error',
      'hostile__huge_error',
      {},
      {
        mcpServers: ['hostile'],
      },
    );
    assert.ok(isError);
    assert.match(sent, /^McpProtocolError: hostile · huge_error: (MCP error -32603: )+EEEE/);
    assertCapped(sent, 'sent');
    assertCapped(kept, 'kept');
  });

  test('a JSON-RPC error with a lone surrogate and NUL: well-formed', async () => {
    const { sent, isError } = await callTool('mcp-odd-error', 'hostile__odd_error', {}, { mcpServers: ['hostile'] });
    assert.ok(isError);
    assert.doesNotMatch(sent, LONE_SURROGATE);
    assert.match(sent, /lone \ufffd surrogate, NUL \u0000 here/);
  });

  test('an isError result of 600,000 characters: capped', async () => {
    const { sent, isError } = await callTool(
      'mcp-huge-result',
      'hostile__huge_result',
      {},
      {
        mcpServers: ['hostile'],
      },
    );
    assert.ok(isError);
    assertCapped(sent, 'sent');
  });
});

describe('an MCP server that never stops talking', () => {
  test('a tool list whose nextCursor never ends: followed for 100 pages, then the conversation fails, saying why', async () => {
    const id = `hostile-endless-pages-${Date.now()}`;
    await assert.rejects(
      h.conversations.sendMessage(id, uniquePrompt('Hello'), { start: { mcpServers: ['endless'] }, timeoutMs: 60_000 }),
      (err: Error) => {
        assert.match(err.message, /tools\/list still had a next page after 100 pages \(100 tools\)/);
        return true;
      },
    );
    const pages = readFileSync(pageLog, 'utf8').trim().split('\n');
    assert.equal(pages.length, 100, 'one listing, not retried: the server would answer the same again');
    assert.equal(await failedWorkflowTasks(h, id), 0);
    await assertUnharmed(h, id);
  });

  test('progress messages of 3 MB: the heartbeat carries 1,000 characters of them, and the call completes', async () => {
    const prompt = uniquePrompt('Call hostile__huge_progress.');
    h.mock.script(prompt, [callsTools(['hostile__huge_progress', {}]), DONE]);
    const id = `hostile-progress-${prompt.slice(-9, -1)}`;
    const reply = h.conversations.sendMessage(id, prompt, { start: { mcpServers: ['hostile'] }, timeoutMs: 60_000 });
    const seen = await progressMessagesWhile(id, reply);
    assert.equal((await reply).text, 'Done.');
    const sent = h.mock.requestsFor(prompt)[1]!.body.messages.at(-1).content[0];
    assert.equal(resultText(sent), 'done', 'the call completed: no failure for oversized heartbeat details');
    for (const message of seen)
      assert.ok(message.length <= 1_000, `a progress message of ${message.length} characters`);
    await assertUnharmed(h, id);
  });
});

/** The progress messages the MCP call's heartbeats carried, as describe() shows them while `until` runs. */
async function progressMessagesWhile(id: string, until: Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  let done = false;
  void until.finally(() => (done = true)).catch(() => undefined);
  const converter = h.client.options.loadedDataConverter.payloadConverter;
  while (!done) {
    const description = await h.client.workflow
      .getHandle(id)
      .describe()
      .catch(() => undefined);
    for (const pending of description?.raw.pendingActivities ?? []) {
      for (const payload of pending.heartbeatDetails?.payloads ?? []) {
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        const details = converter.fromPayload(payload as any) as { message?: unknown } | undefined;
        if (typeof details?.message === 'string') seen.push(details.message);
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  return seen;
}
