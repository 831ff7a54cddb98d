// The worker's copy of the recorded MCP tool lists: model calls name a list by digest; a worker that lacks it reads
// it from the workflow once, and never takes a list other than the one named.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { McpToolSets } from '../../activities/mcp/mcp-tool-sets';
import type { McpTool } from '../../common/mcp';

const TOOL: McpTool = {
  name: 'everything__echo',
  server: 'everything',
  tool: 'echo',
  description: 'Echoes back the input',
  input_schema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
  requiresApproval: false,
};
const conversation = { workflowId: 'w', runId: 'r' };

test('a list this worker made is served from memory, as the model is told about it', async () => {
  const sets = new McpToolSets(async () => assert.fail('no query when the worker has the list'));
  const digest = McpToolSets.digestOf([TOOL]);
  sets.remember(digest, [TOOL]);
  assert.deepEqual(
    [...(await sets.get(conversation, digest)).values()],
    [{ name: 'everything__echo', description: 'Echoes back the input', input_schema: TOOL.input_schema }],
  );
});

test('a list it lacks is read from the workflow once', async () => {
  let reads = 0;
  const sets = new McpToolSets(async (asked) => {
    assert.deepEqual(asked, conversation);
    reads++;
    return [TOOL];
  });
  const digest = McpToolSets.digestOf([TOOL]);
  await sets.get(conversation, digest);
  await sets.get(conversation, digest);
  assert.equal(reads, 1);
});

test('a workflow answering with another list is an error, never a silent change of tools', async () => {
  const sets = new McpToolSets(async () => [{ ...TOOL, description: 'changed' }]);
  await assert.rejects(sets.get(conversation, McpToolSets.digestOf([TOOL])), /MCP tool list has digest/);
});
