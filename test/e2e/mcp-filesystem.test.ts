// MCP tools from a server nobody here wrote: `@modelcontextprotocol/server-filesystem` over stdio, on a temporary
// folder, started by the worker from its own configuration. The local Messages API server plays the model (scripted
// tool calls); assertions are on what the model received, what the disk holds, and what the history shows.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { CONVERSATION_WORKFLOW } from '../../common/conversation-types';
import { activitiesOf, type Harness, lastUserBlocks, startHarness, uniquePrompt } from '../support/harness';
import { stateAwaitingApproval } from '../support/awaiting-approval';
import { callsTools, says } from '../support/script-steps';

const FILESYSTEM_TOOLS = [
  'read_file',
  'read_text_file',
  'read_media_file',
  'read_multiple_files',
  'write_file',
  'edit_file',
  'create_directory',
  'list_directory',
  'list_directory_with_sizes',
  'directory_tree',
  'move_file',
  'search_files',
  'get_file_info',
  'list_allowed_directories',
];

let h: Harness;
let base: string;
let root: string;

before(async () => {
  base = mkdtempSync(join(tmpdir(), 'mcp-fs-'));
  root = join(base, 'notes');
  mkdirSync(root);
  writeFileSync(join(root, 'todo.txt'), 'Buy milk\nCall the bank\n');
  writeFileSync(join(base, 'secret.txt'), 'outside the root');
  h = await startHarness({
    mcpServers: {
      filesystem: {
        command: process.execPath,
        args: [require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js'), root],
        requireApproval: ['write_file', 'edit_file', 'move_file', 'create_directory'],
      },
    },
  });
});
after(async () => {
  await h?.close();
  rmSync(base, { recursive: true, force: true });
});

describe('the filesystem server over stdio', () => {
  test('its tools are offered under API-valid names, listed once by an activity the history keeps', async () => {
    const prompt = uniquePrompt('Which tools do you have?');
    h.mock.script(prompt, [says('Files, mostly.')]);
    const id = `mcp-fs-tools-${Date.now()}`;
    await h.conversations.sendMessage(id, prompt, {
      start: { mcpServers: ['filesystem'], closeAfterFirstReply: true },
    });

    const [request] = h.mock.requestsFor(prompt);
    const offered = request!.body.tools as { name: string; input_schema: Record<string, unknown> }[];
    assert.deepEqual(
      offered.map((tool) => tool.name),
      FILESYSTEM_TOOLS.map((name) => `filesystem__${name}`),
    );
    const read = offered.find((tool) => tool.name === 'filesystem__read_text_file')!;
    assert.equal(read.input_schema.type, 'object');
    assert.deepEqual(read.input_schema.required, ['path']);
    assert.equal(read.input_schema.$schema, undefined);

    const activities = await activitiesOf(h.client, id);
    assert.deepEqual(
      activities.map((a) => a.type),
      ['listMcpTools', 'callModel'],
    );
    assert.equal(activities[0]!.summary, 'MCP tools of filesystem');
    const listed = activities[0]!.result as { tools: { name: string; server: string; tool: string }[] };
    assert.deepEqual(
      listed.tools.map((t) => [t.name, t.server, t.tool]),
      FILESYSTEM_TOOLS.map((name) => [`filesystem__${name}`, 'filesystem', name]),
    );
  });

  test('list and read: each call is its own activity naming server and tool; results reach the model', async () => {
    const prompt = uniquePrompt('What is on my todo list?');
    h.mock.script(prompt, [
      callsTools(['filesystem__list_directory', { path: root }]),
      callsTools(['filesystem__read_text_file', { path: join(root, 'todo.txt') }]),
      says('Buy milk, then call the bank.'),
    ]);
    const id = `mcp-fs-read-${Date.now()}`;
    const reply = await h.conversations.sendMessage(id, prompt, { start: { mcpServers: ['filesystem'] } });
    assert.equal(reply.text, 'Buy milk, then call the bank.');
    assert.equal(reply.toolCalls, 2);

    const [, second, third] = h.mock.requestsFor(prompt);
    const [listing] = lastUserBlocks(second!);
    assert.equal(listing!.is_error, undefined);
    assert.deepEqual(listing!.content, [{ type: 'text', text: '[FILE] todo.txt' }]);
    const [reading] = lastUserBlocks(third!);
    assert.deepEqual(reading!.content, [{ type: 'text', text: 'Buy milk\nCall the bank\n' }]);

    const calls = (await activitiesOf(h.client, id)).filter((a) => a.type === 'callMcpTool');
    assert.deepEqual(
      calls.map((a) => a.summary),
      [
        `filesystem · list_directory(path=${JSON.stringify(root)})`,
        `filesystem · read_text_file(path=${JSON.stringify(join(root, 'todo.txt'))})`,
      ],
    );
    assert.deepEqual(calls[1]!.input, {
      server: 'filesystem',
      tool: 'read_text_file',
      arguments: { path: join(root, 'todo.txt') },
      idempotencyKey: (calls[1]!.input as { idempotencyKey: string }).idempotencyKey,
    });
    assert.match((calls[1]!.input as { idempotencyKey: string }).idempotencyKey, new RegExp(`^${id}/`));
  });
});

describe('replay', () => {
  test('a history with MCP calls replays against the workflow code with no MCP server around', async () => {
    const prompt = uniquePrompt('Read my todo list, for the replay');
    h.mock.script(prompt, [
      callsTools(['filesystem__read_text_file', { path: join(root, 'todo.txt') }]),
      says('Milk.'),
    ]);
    const id = `mcp-fs-replay-${Date.now()}`;
    await h.conversations.sendMessage(id, prompt, {
      start: { mcpServers: ['filesystem'], closeAfterFirstReply: true },
    });
    await h.conversations.waitForResult(id);
    const history = await h.client.workflow.getHandle(id).fetchHistory();
    // A replay worker registers no activities at all: the tool list and the results come from the history.
    await Worker.runReplayHistory(
      process.env.WORKFLOW_BUNDLE_PATH
        ? { workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH } }
        : { workflowsPath: require.resolve('../../workflows') },
      history,
    );
  });
});

describe('writing needs a person’s approval (the server’s approval patterns)', () => {
  test('approved: the file is written with exactly the approved content', async () => {
    const prompt = uniquePrompt('Remember to water the plants');
    const path = join(root, 'plants.txt');
    h.mock.script(prompt, [
      callsTools(['filesystem__write_file', { path, content: 'Water the plants' }]),
      says('Noted.'),
    ]);
    const id = `mcp-fs-approve-${Date.now()}`;
    const reply = h.conversations.sendMessage(id, prompt, { start: { mcpServers: ['filesystem'] } });
    const state = await stateAwaitingApproval(h.conversations, id);
    assert.equal(state.status, 'awaiting_approval');
    const [pending] = state.pendingApprovals;
    assert.equal(pending!.tool, 'filesystem__write_file');
    assert.deepEqual(pending!.input, { path, content: 'Water the plants' });
    assert.equal(existsSync(path), false, 'nothing is written before the approval');
    await h.conversations.approveToolCall(id, {
      callId: pending!.callId,
      argumentsDigest: pending!.argumentsDigest,
      approve: true,
    });
    assert.equal((await reply).text, 'Noted.');
    assert.equal(readFileSync(path, 'utf8'), 'Water the plants');
    const [result] = lastUserBlocks(h.mock.requestsFor(prompt)[1]!);
    assert.deepEqual(result!.content, [{ type: 'text', text: `Successfully wrote to ${path}` }]);
  });

  test('rejected: nothing is written and the model is told who said no and why', async () => {
    const prompt = uniquePrompt('Delete my todo list by overwriting it');
    const path = join(root, 'todo.txt');
    h.mock.script(prompt, [callsTools(['filesystem__write_file', { path, content: '' }]), says('I left it alone.')]);
    const id = `mcp-fs-reject-${Date.now()}`;
    const reply = h.conversations.sendMessage(id, prompt, { start: { mcpServers: ['filesystem'] } });
    const [pending] = (await stateAwaitingApproval(h.conversations, id)).pendingApprovals;
    await h.conversations.approveToolCall(id, {
      callId: pending!.callId,
      argumentsDigest: pending!.argumentsDigest,
      approve: false,
      reason: 'keep my list',
    });
    assert.equal((await reply).text, 'I left it alone.');
    assert.equal(readFileSync(path, 'utf8'), 'Buy milk\nCall the bank\n');
    const [result] = lastUserBlocks(h.mock.requestsFor(prompt)[1]!);
    assert.equal(result!.is_error, true);
    assert.equal(
      result!.content,
      `Rejected: the user did not allow filesystem · write_file(path=${JSON.stringify(path)}, content=""): keep my list`,
    );
    const calls = (await activitiesOf(h.client, id)).filter((a) => a.type === 'callMcpTool');
    assert.deepEqual(calls, [], 'a rejected call never reaches the server');
  });

  test('reading tools need no approval', async () => {
    const prompt = uniquePrompt('Where may you read?');
    h.mock.script(prompt, [callsTools(['filesystem__list_allowed_directories', {}]), says('Only in notes.')]);
    const reply = await h.conversations.sendMessage(`mcp-fs-noapproval-${Date.now()}`, prompt, {
      start: {
        mcpServers: ['filesystem'],
      },
    });
    assert.equal(reply.text, 'Only in notes.');
    const [result] = lastUserBlocks(h.mock.requestsFor(prompt)[1]!);
    assert.match(JSON.stringify(result!.content), new RegExp(root.replace(/[/\\]/g, '.')));
  });
});

describe('errors the server reports are results the model reads', () => {
  test('a path outside the root: the server’s own message, as is_error', async () => {
    const prompt = uniquePrompt('Read the secret next door');
    const outside = join(base, 'secret.txt');
    h.mock.script(prompt, [callsTools(['filesystem__read_text_file', { path: outside }]), says('I may not read it.')]);
    const id = `mcp-fs-outside-${Date.now()}`;
    const reply = await h.conversations.sendMessage(id, prompt, { start: { mcpServers: ['filesystem'] } });
    assert.equal(reply.text, 'I may not read it.');
    const [result] = lastUserBlocks(h.mock.requestsFor(prompt)[1]!);
    assert.equal(result!.is_error, true);
    const text = (result!.content as unknown as { type: string; text: string }[])[0]!.text;
    assert.match(text, /^Access denied - path outside allowed directories: .*secret\.txt not in /);
    assert.doesNotMatch(JSON.stringify(result), /outside the root/, 'the file content never reached the model');
    const [call] = (await activitiesOf(h.client, id)).filter((a) => a.type === 'callMcpTool');
    assert.equal(call!.failed, undefined, 'the tool ran: its error is data, not a failed activity');
    assert.equal((call!.result as { ok: boolean }).ok, false);
  });

  test('arguments that do not fit the schema: the server says what is wrong', async () => {
    const prompt = uniquePrompt('Read without a path');
    h.mock.script(prompt, [callsTools(['filesystem__read_text_file', { file: 'todo.txt' }]), says('I need a path.')]);
    await h.conversations.sendMessage(`mcp-fs-badargs-${Date.now()}`, prompt, {
      start: { mcpServers: ['filesystem'] },
    });
    const [result] = lastUserBlocks(h.mock.requestsFor(prompt)[1]!);
    assert.equal(result!.is_error, true);
    assert.match(JSON.stringify(result!.content), /path/);
  });
});

describe('the legacy XML protocol offers MCP tools too', () => {
  test('its prompt describes them with their parameters, and a call in XML runs the MCP tool', async () => {
    const prompt = uniquePrompt('Read my todo list (legacy)');
    const path = join(root, 'todo.txt');
    h.mock.script(prompt, [
      {
        reply: {
          content: [
            {
              type: 'text',
              text: `<function_calls>\n<invoke>\n<tool_name>filesystem__read_text_file</tool_name>\n<parameters>\n<path>${path}</path>\n<head>1</head>\n</parameters>\n</invoke>\n`,
            },
          ],
          stop_reason: 'stop_sequence',
          stop_sequence: '</function_calls>',
        },
      },
      says('<answer>Buy milk.</answer>'),
    ]);
    const id = `mcp-fs-legacy-${Date.now()}`;
    const reply = await h.conversations.sendMessage(id, prompt, {
      start: {
        mcpServers: [{ server: 'filesystem', tools: ['read_text_file', 'list_directory'] }],
        protocol: 'legacy-xml',
      },
    });
    assert.equal(reply.text, 'Buy milk.');
    const [first, second] = h.mock.requestsFor(prompt);
    const system = JSON.stringify(first!.body.system);
    assert.match(system, /<tool_name>filesystem__read_text_file<\/tool_name>/);
    assert.match(system, /<tool_name>filesystem__list_directory<\/tool_name>/);
    assert.doesNotMatch(system, /filesystem__write_file/, 'only the tools the conversation picked are offered');
    assert.equal(first!.body.tools, undefined);
    const [results] = second!.body.messages.at(-1).content as { text: string }[];
    assert.match(results!.text, /<tool_name>filesystem__read_text_file<\/tool_name>\n<stdout>\nBuy milk\n<\/stdout>/);
    // The parameter arrived as text; the recorded schema made it the number the server expects.
    const [call] = (await activitiesOf(h.client, id)).filter((a) => a.type === 'callMcpTool');
    assert.deepEqual((call!.input as { arguments: unknown }).arguments, { path, head: 1 });
  });
});

describe('a conversation picks among the configured servers and cannot add one', () => {
  test('the client refuses a server the workers do not have, naming those they have', async () => {
    await assert.rejects(h.conversations.startConversation({ mcpServers: ['github'] }), (err: Error) => {
      assert.match(err.message, /mcpServers: unknown MCP server "github"; the workers are configured with: filesystem/);
      return true;
    });
  });

  test('a server cannot be described in the options: only named', async () => {
    await assert.rejects(
      h.conversations.startConversation({
        mcpServers: [{ server: 'filesystem', command: 'sh', args: ['-c', 'echo pwned'] } as never],
      }),
      /unknown keys?:? "command", "args"/i,
    );
  });

  test('started around the client, a conversation naming an unknown server or tool fails with a status', async () => {
    const id = `mcp-fs-raw-${Date.now()}`;
    const handle = await h.client.workflow.start(CONVERSATION_WORKFLOW, {
      taskQueue: h.taskQueue,
      workflowId: id,
      args: [
        {
          options: { mcpServers: ['github', { server: 'filesystem', tools: ['format_disk'] }] },
          firstMessage: 'List my files',
        },
      ],
    });
    await assert.rejects(handle.result(), (err: unknown) => {
      assert.ok(err instanceof WorkflowFailedError);
      const cause = err.cause as { type?: string; message: string };
      assert.equal(cause.type, 'UnknownMcpTools');
      assert.equal(
        cause.message,
        'The conversation names unknown MCP servers: github (the workers are configured with: filesystem); tools their server does not have: filesystem/format_disk.',
      );
      return true;
    });
  });
});
