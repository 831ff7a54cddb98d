// MCP tools from `@modelcontextprotocol/server-everything`, the protocol's reference server, over stdio (the worker
// starts it) and over Streamable HTTP (a process of its own): plain tools, images, resources, progress notifications,
// errors, and servers that die mid-call. The local Messages API server plays the model with scripted tool calls.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@temporalio/client';
import { startEverythingHttpServer, type EverythingHttpServer } from '../../scripts/everything-http-server';
import { activitiesOf, attemptsOf, type Harness, lastUserBlocks, startHarness, uniquePrompt } from '../support/harness';
import { waitUntil } from '../support/wait-until';
import { callsTools, says } from '../support/script-steps';

const SECRET = `s3cret-${Date.now()}`;
const TOKEN = `t0ken-${Date.now()}`;
const MAX_OUTPUT_CHARS = 2_000;
/** A dead worker or a lost server is noticed within seconds; retries come quickly. */
const FAST = { heartbeatTimeout: '3 seconds', retryInitialInterval: '500 ms', timeout: '30 seconds' };

let h: Harness;
let http: EverythingHttpServer;
let scratch: string;

before(async () => {
  process.env.MCP_TEST_SECRET = SECRET;
  process.env.MCP_TEST_TOKEN = TOKEN;
  http = await startEverythingHttpServer();
  scratch = mkdtempSync(join(tmpdir(), 'mcp-scratch-'));
  mkdirSync(join(scratch, 'root'));
  h = await startHarness({
    toolOptions: { maxOutputChars: MAX_OUTPUT_CHARS },
    mcpServers: {
      everything: {
        command: process.execPath,
        args: [require.resolve('@modelcontextprotocol/server-everything/dist/index.js')],
        env: { EVERYTHING_SECRET: '${MCP_TEST_SECRET}' },
        ...FAST,
      },
      everything_http: {
        type: 'http',
        url: http.url,
        headers: { Authorization: 'Bearer ${MCP_TEST_TOKEN}' },
        ...FAST,
        // Restarting its process takes seconds on a busy machine: more than three attempts 0.5 s apart.
        maxAttempts: 8,
      },
      everything_strict: {
        command: process.execPath,
        args: [require.resolve('@modelcontextprotocol/server-everything/dist/index.js')],
        // The MCP request gives up at 4.5 s, 1.5 s before Temporal's timeout: a loaded worker starts a task late.
        timeout: '6 seconds',
        maxAttempts: 1,
      },
      scratch: {
        command: process.execPath,
        args: [require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js'), join(scratch, 'root')],
        ...FAST,
        maxAttempts: 2,
      },
    },
  });
});
after(async () => {
  await h?.close();
  await http?.close();
  rmSync(scratch, { recursive: true, force: true });
  delete process.env.MCP_TEST_SECRET;
  delete process.env.MCP_TEST_TOKEN;
});

type Block = { type: string; text?: string; source?: { type: string; media_type: string; data: string } };
const blocksOf = (result: { content?: unknown }) => result.content as unknown as Block[];

/** Pending activities' heartbeat details, decoded, for as long as `until` runs. */
async function heartbeatDetailsWhile(client: Client, id: string, until: Promise<unknown>): Promise<unknown[]> {
  const seen: unknown[] = [];
  let done = false;
  void until.finally(() => (done = true));
  const converter = client.options.loadedDataConverter.payloadConverter;
  while (!done) {
    const description = await client.workflow
      .getHandle(id)
      .describe()
      .catch(() => undefined);
    for (const pending of description?.raw.pendingActivities ?? []) {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      for (const payload of pending.heartbeatDetails?.payloads ?? []) seen.push(converter.fromPayload(payload as any));
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  return seen;
}

/** Waits until the conversation's MCP call reported progress: the server is in the middle of it. */
async function untilProgress(client: Client, id: string): Promise<void> {
  const converter = client.options.loadedDataConverter.payloadConverter;
  await waitUntil('the MCP call to report progress', async () => {
    const { raw } = await client.workflow.getHandle(id).describe();
    const beats = (raw.pendingActivities ?? []).flatMap((pending) => pending.heartbeatDetails?.payloads ?? []);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return beats.some((p) => (converter.fromPayload(p as any) as { progress?: number } | undefined)?.progress);
  });
}

for (const server of ['everything', 'everything_http'] as const) {
  const transport = server === 'everything' ? 'stdio' : 'Streamable HTTP';

  describe(`server-everything over ${transport}`, () => {
    test('echo and get-sum in one reply: each its own activity, results in the model’s order', async () => {
      const prompt = uniquePrompt(`Echo and add (${transport})`);
      h.mock.script(prompt, [
        callsTools([`${server}__echo`, { message: 'hello' }], [`${server}__get-sum`, { a: 2, b: 40 }]),
        says('hello, and 42'),
      ]);
      const id = `mcp-ev-basic-${server}-${Date.now()}`;
      const reply = await h.conversations.sendMessage(id, prompt, { start: { mcpServers: [server] } });
      assert.equal(reply.text, 'hello, and 42');

      const [first, second] = h.mock.requestsFor(prompt);
      const names = (first!.body.tools as { name: string }[]).map((t) => t.name);
      assert.equal(names.length, 13);
      assert.ok(names.includes(`${server}__trigger-long-running-operation`));
      const results = lastUserBlocks(second!);
      assert.deepEqual(
        results.map((r) => [r.is_error, blocksOf(r)]),
        [
          [undefined, [{ type: 'text', text: 'Echo: hello' }]],
          [undefined, [{ type: 'text', text: 'The sum of 2 and 40 is 42.' }]],
        ],
      );
      const calls = (await activitiesOf(h.client, id)).filter((a) => a.type === 'callMcpTool');
      assert.deepEqual(
        calls.map((a) => a.summary),
        [`${server} · echo(message="hello")`, `${server} · get-sum(a=2, b=40)`],
      );
    });

    test('an image comes back to the model as an image block, between the texts around it', async () => {
      const prompt = uniquePrompt(`Show me the tiny image (${transport})`);
      h.mock.script(prompt, [callsTools([`${server}__get-tiny-image`, {}]), says('A tiny logo.')]);
      await h.conversations.sendMessage(`mcp-ev-image-${server}-${Date.now()}`, prompt, {
        start: { mcpServers: [server] },
      });
      const [result] = lastUserBlocks(h.mock.requestsFor(prompt)[1]!);
      const blocks = blocksOf(result!);
      assert.deepEqual(
        blocks.map((b) => b.type),
        ['text', 'image', 'text'],
      );
      assert.equal(blocks[1]!.source!.type, 'base64');
      assert.equal(blocks[1]!.source!.media_type, 'image/png');
      assert.equal(Buffer.from(blocks[1]!.source!.data, 'base64').subarray(1, 4).toString('latin1'), 'PNG');
    });

    test('a long tool’s progress notifications are heartbeats carrying how far it got', async () => {
      const prompt = uniquePrompt(`Run the long operation (${transport})`);
      h.mock.script(prompt, [
        callsTools([`${server}__trigger-long-running-operation`, { duration: 4, steps: 4 }]),
        says('Done.'),
      ]);
      const id = `mcp-ev-progress-${server}-${Date.now()}`;
      const reply = h.conversations.sendMessage(id, prompt, { start: { mcpServers: [server] } });
      const details = await heartbeatDetailsWhile(h.client, id, reply);
      assert.equal((await reply).text, 'Done.');
      const progress = details.filter((d) => typeof (d as { progress?: unknown })?.progress === 'number');
      assert.ok(progress.length > 0, `no progress among the heartbeat details: ${JSON.stringify(details)}`);
      for (const d of progress) assert.equal((d as { total?: number }).total, 4);
      const [result] = lastUserBlocks(h.mock.requestsFor(prompt)[1]!);
      assert.match(blocksOf(result!)[0]!.text!, /^Long running operation completed\. Duration: 4 seconds, Steps: 4\./);
    });

    test('arguments of the wrong type: the server’s validation error, as is_error', async () => {
      const prompt = uniquePrompt(`Add words (${transport})`);
      h.mock.script(prompt, [callsTools([`${server}__get-sum`, { a: 'two', b: 2 }]), says('I need numbers.')]);
      await h.conversations.sendMessage(`mcp-ev-invalid-${server}-${Date.now()}`, prompt, {
        start: { mcpServers: [server] },
      });
      const [result] = lastUserBlocks(h.mock.requestsFor(prompt)[1]!);
      assert.equal(result!.is_error, true);
      assert.match(blocksOf(result!)[0]!.text!, /Input validation error: Invalid arguments for tool get-sum/);
    });
  });
}

describe('what the model cannot take as it is becomes text it can read', () => {
  test('resource links and embedded resources (text and binary) are described in words', async () => {
    const prompt = uniquePrompt('Which resources are there?');
    h.mock.script(prompt, [
      callsTools(
        ['everything__get-resource-links', { count: 2 }],
        ['everything__get-resource-reference', { resourceType: 'Text', resourceId: 1 }],
        ['everything__get-resource-reference', { resourceType: 'Blob', resourceId: 2 }],
      ),
      says('Three resources.'),
    ]);
    await h.conversations.sendMessage(`mcp-ev-resources-${Date.now()}`, prompt, {
      start: { mcpServers: ['everything'] },
    });
    const [links, text, blob] = lastUserBlocks(h.mock.requestsFor(prompt)[1]!).map((r) =>
      blocksOf(r).map((b) => b.text),
    );
    assert.deepEqual(links, [
      'Here are 2 resource links to resources available in this server:',
      '[resource link] Blob Resource 1 <demo://resource/dynamic/blob/1> (text/plain): Resource 1: plaintext resource',
      '[resource link] Text Resource 2 <demo://resource/dynamic/text/2> (text/plain): Resource 2: plaintext resource',
    ]);
    assert.match(
      text![1]!,
      /^\[resource demo:\/\/resource\/dynamic\/text\/1 \(text\/plain\)\]\nResource 1: This is a plaintext resource/,
    );
    assert.match(
      blob![1]!,
      /^\[binary resource demo:\/\/resource\/dynamic\/blob\/2 \(text\/plain\), \d+ bytes, not shown\]$/,
    );
  });

  test('a result longer than the limit is cut with the same visible marker as the built-in tools', async () => {
    const prompt = uniquePrompt('Echo a long text');
    const message = 'x'.repeat(5_000);
    h.mock.script(prompt, [callsTools(['everything__echo', { message }]), says('Long.')]);
    await h.conversations.sendMessage(`mcp-ev-long-${Date.now()}`, prompt, { start: { mcpServers: ['everything'] } });
    const [result] = lastUserBlocks(h.mock.requestsFor(prompt)[1]!);
    const text = blocksOf(result!)[0]!.text!;
    assert.equal(text.length, MAX_OUTPUT_CHARS);
    const total = 'Echo: '.length + message.length;
    const marker = /\n\[output truncated: (\d+) of (\d+) characters omitted\]$/.exec(text);
    assert.ok(marker, text.slice(-80));
    assert.equal(Number(marker[2]), total);
    assert.equal(text.length - marker[0].length, total - Number(marker[1]), 'the marker counts what was left out');
    assert.ok(text.startsWith('Echo: xxx'));
  });
});

describe('servers that go away', () => {
  test('a call over its timeout: the model reads the MCP timeout', async () => {
    const prompt = uniquePrompt('Run an operation longer than allowed');
    h.mock.script(prompt, [
      callsTools(['everything_strict__trigger-long-running-operation', { duration: 20, steps: 20 }]),
      says('It took too long.'),
    ]);
    const id = `mcp-ev-timeout-${Date.now()}`;
    const reply = await h.conversations.sendMessage(id, prompt, { start: { mcpServers: ['everything_strict'] } });
    assert.equal(reply.text, 'It took too long.');
    const [result] = lastUserBlocks(h.mock.requestsFor(prompt)[1]!);
    assert.equal(result!.is_error, true);
    assert.equal(
      result!.content,
      'McpTimeout: everything_strict · trigger-long-running-operation: MCP error -32001: Request timed out',
    );
  });

  test('a stdio server killed mid-call is started again and the call runs again', async () => {
    const prompt = uniquePrompt('Run the long operation, then the server dies');
    h.mock.script(prompt, [
      callsTools(['everything__trigger-long-running-operation', { duration: 4, steps: 4 }]),
      says('Finished despite the crash.'),
    ]);
    const id = `mcp-ev-stdio-kill-${Date.now()}`;
    const reply = h.conversations.sendMessage(id, prompt, { start: { mcpServers: ['everything'] } });
    await untilProgress(h.client, id);
    const pid = await h.mcp.pid('everything');
    assert.ok(pid);
    process.kill(pid, 'SIGKILL');
    assert.equal((await reply).text, 'Finished despite the crash.');

    const [result] = lastUserBlocks(h.mock.requestsFor(prompt)[1]!);
    assert.equal(result!.is_error, undefined);
    assert.match(blocksOf(result!)[0]!.text!, /^Long running operation completed/);
    const attempts = (await attemptsOf(h.client, id)).filter((a) => a.type === 'callMcpTool');
    assert.equal(attempts.at(-1)!.attempt, 2);
    assert.equal(attempts.at(-1)!.lastFailureType, 'McpServerUnavailable');
    assert.match(attempts.at(-1)!.lastFailure!, /The MCP server "everything" closed the connection/);
    const restarted = await h.mcp.pid('everything');
    assert.ok(restarted && restarted !== pid, 'a new server process');
  });

  test('a Streamable HTTP server killed mid-call and restarted: noticed by a ping, the call runs again', async () => {
    const prompt = uniquePrompt('Run the long operation over HTTP, then the server dies');
    h.mock.script(prompt, [
      callsTools(['everything_http__trigger-long-running-operation', { duration: 4, steps: 4 }]),
      says('Finished over HTTP.'),
    ]);
    const id = `mcp-ev-http-kill-${Date.now()}`;
    const reply = h.conversations.sendMessage(id, prompt, { start: { mcpServers: ['everything_http'] } });
    await untilProgress(h.client, id);
    await http.restart();
    assert.equal((await reply).text, 'Finished over HTTP.');
    const [result] = lastUserBlocks(h.mock.requestsFor(prompt)[1]!);
    assert.equal(result!.is_error, undefined);
    const attempts = (await attemptsOf(h.client, id)).filter((a) => a.type === 'callMcpTool');
    // Run again once the server is back: a second attempt, or a later one when the restart outlasts the first retry
    // (a loaded machine).
    assert.ok(attempts.at(-1)!.attempt >= 2, `attempt ${attempts.at(-1)!.attempt}`);
    assert.equal(attempts.at(-1)!.lastFailureType, 'McpServerUnavailable');
  });

  test('a server that cannot be started again: the model is told, after the retries', async () => {
    const prompt = uniquePrompt('List the scratch folder');
    h.mock.script(prompt, [
      { ...callsTools(['scratch__list_directory', { path: join(scratch, 'root') }]), delayMs: 4_000 },
      says('The scratch server is gone.'),
    ]);
    const id = `mcp-ev-gone-${Date.now()}`;
    const reply = h.conversations.sendMessage(id, prompt, { start: { mcpServers: ['scratch'] } });
    // Its tools were listed (the model call is under way); now its process dies and its folder is gone for good.
    await waitUntil('the model call', () => h.mock.requestsFor(prompt).length > 0, { everyMs: 25 });
    const pid = await h.mcp.pid('scratch');
    assert.ok(pid);
    rmSync(join(scratch, 'root'), { recursive: true });
    process.kill(pid, 'SIGKILL');
    assert.equal((await reply).text, 'The scratch server is gone.');
    const [result] = lastUserBlocks(h.mock.requestsFor(prompt)[1]!);
    assert.equal(result!.is_error, true);
    assert.match(
      result!.content as unknown as string,
      /^McpServerUnavailable: Could not start or reach the MCP server "scratch": /,
    );
    const attempts = (await attemptsOf(h.client, id)).filter((a) => a.type === 'callMcpTool');
    assert.equal(attempts.at(-1)!.attempt, 2);
  });
});

describe('runs and secrets', () => {
  test('after continue-as-new the new run lists the tools again, in its own history, and goes on', async () => {
    const prompt = uniquePrompt('Echo across runs');
    h.mock.script(prompt, [callsTools(['everything__echo', { message: 'first run' }]), says('Echoed.')]);
    const id = `mcp-ev-can-${Date.now()}`;
    const reply = await h.conversations.sendMessage(id, prompt, {
      start: {
        mcpServers: ['everything'],
        continueAsNewAfterModelCalls: 1,
      },
    });
    assert.equal(reply.text, 'Echoed.');
    // The runs in order, each with the activities its own history holds.
    const described = await h.client.workflow.getHandle(id).describe();
    const runs: string[][] = [];
    for (let runId = described.raw.workflowExecutionInfo?.firstRunId ?? undefined; runId;) {
      const events = (await h.client.workflow.getHandle(id, runId).fetchHistory()).events ?? [];
      runs.push(events.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? '').filter(Boolean));
      runId = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
    }
    assert.deepEqual(runs.slice(0, 2), [
      ['listMcpTools', 'callModel', 'callMcpTool'],
      ['listMcpTools', 'callModel'],
    ]);
    // A run that only waits for the next message starts no server.
    for (const idle of runs.slice(2)) assert.deepEqual(idle, []);
    const [, second] = h.mock.requestsFor(prompt);
    assert.equal((second!.body.tools as unknown[]).length, 13, 'the new run offers the same tools');
  });

  test('values from the worker’s environment reach the server, and no history holds them', async () => {
    // The server sees the variable (asked directly, outside any conversation)…
    const env = await h.mcp.callTool('everything', { name: 'get-env', arguments: {} });
    assert.match(JSON.stringify(env.content), new RegExp(`"EVERYTHING_SECRET\\\\?":\\s*\\\\?"${SECRET}`));
    // …and the conversations that used the servers never carried it, nor the HTTP token.
    const prompt = uniquePrompt('Echo with secrets around');
    h.mock.script(prompt, [
      callsTools(['everything__echo', { message: 'a' }], ['everything_http__echo', { message: 'b' }]),
      says('ok'),
    ]);
    const id = `mcp-ev-secret-${Date.now()}`;
    await h.conversations.sendMessage(id, prompt, { start: { mcpServers: ['everything', 'everything_http'] } });
    const history = JSON.stringify(await h.client.workflow.getHandle(id).fetchHistory());
    const decoded = JSON.stringify(await activitiesOf(h.client, id));
    for (const text of [history, decoded]) {
      assert.ok(!text.includes(SECRET), 'the env secret is not in the history');
      assert.ok(!text.includes(TOKEN), 'the HTTP token is not in the history');
    }
    assert.match(decoded, /Echo: b/, 'the history was read (and holds the results)');
  });
});
